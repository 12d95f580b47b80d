-- Word count: words, characters, sentences, paragraphs and reading time of a text.
function service_handler(event, context)
  local text = event.text
  if type(text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local words = 0
  for _ in text:gmatch("%S+") do words = words + 1 end
  local sentences = 0
  for _ in text:gmatch("[^%.!?]+[%.!?]+") do sentences = sentences + 1 end
  if sentences == 0 and words > 0 then sentences = 1 end
  local paragraphs = 0
  for block in (text .. "\n\n"):gmatch("(.-)\n[ \t]*\n") do
    if block:match("%S") then paragraphs = paragraphs + 1 end
  end
  local per_minute = tonumber(event.words_per_minute) or 230
  return {
    words = words,
    characters = utf8.len(text) or #text,
    sentences = sentences,
    paragraphs = paragraphs,
    reading_time_seconds = math.ceil(words / per_minute * 60),
  }
end
