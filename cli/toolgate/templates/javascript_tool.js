'use strict';
// A Toolgate function.
//
// Toolgate calls service_handler with the caller's event (shaped by input_schema in
// toolgate.json) and a context (execution_id, function_id, version, caller_org_id, deadline_ms,
// env). Return a value, or { statusCode, body } to choose the HTTP status. Handlers are
// synchronous: no async/await.

module.exports.service_handler = function (event, context) {
  const name = event !== null && typeof event === 'object' && 'name' in event ? event.name : 'world';
  if (typeof name !== 'string') {
    return { statusCode: 400, body: { error: 'name must be a string' } };
  }
  return { statusCode: 200, body: { message: 'Hello, ' + name + '!' } };
};
