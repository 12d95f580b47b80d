-- Echo: answers with the event it was given, and who called.
function service_handler(event, context)
  return {
    statusCode = 200,
    body = { echo = event, execution_id = context.execution_id, version = context.version },
  }
end
