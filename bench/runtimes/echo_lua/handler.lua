function service_handler(event, context)
  return event
end
