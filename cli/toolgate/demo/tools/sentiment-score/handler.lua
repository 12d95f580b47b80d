-- Sentiment score: a lexicon-based score from -1 (negative) to 1 (positive) for short English
-- texts such as reviews, with negation ("not good") and intensifiers ("very good").
local LEXICON = {
  good = 2, great = 3, excellent = 4, amazing = 4, love = 3, loved = 3, like = 1, happy = 2,
  fast = 1, easy = 2, helpful = 2, perfect = 4, recommend = 2, reliable = 2, friendly = 2,
  bad = -2, poor = -2, terrible = -4, awful = -4, hate = -3, hated = -3, slow = -1, broken = -3,
  difficult = -1, disappointing = -3, disappointed = -3, useless = -3, rude = -3, late = -1,
  expensive = -1, refund = -1, worst = -4, best = 3, fine = 1, okay = 0, buggy = -2,
}
local NEGATIONS = { ["not"] = true, ["no"] = true, ["never"] = true, ["don't"] = true,
                    ["didn't"] = true, ["isn't"] = true, ["wasn't"] = true }
local INTENSIFIERS = { very = 1.5, really = 1.5, extremely = 2, so = 1.3, quite = 1.2 }

function service_handler(event, context)
  if type(event.text) ~= "string" then
    return { statusCode = 400, body = { error = "event.text must be a string" } }
  end
  local total, hits, negate, boost = 0, 0, 0, 1
  local matched = {}
  for word in event.text:lower():gmatch("[%a']+") do
    if NEGATIONS[word] then
      negate = 3  -- the next three words are negated
    elseif INTENSIFIERS[word] then
      boost = INTENSIFIERS[word]
    else
      local value = LEXICON[word]
      if value then
        if negate > 0 then value = -value * 0.75 end
        total = total + value * boost
        hits = hits + 1
        matched[#matched + 1] = word
      end
      boost = 1
      negate = math.max(0, negate - 1)
    end
  end
  local score = hits == 0 and 0 or total / math.sqrt(total * total + 15)
  score = math.floor(score * 1000 + 0.5) / 1000
  local label = score > 0.2 and "positive" or score < -0.2 and "negative" or "neutral"
  return { score = score, label = label, matched_words = matched }
end
