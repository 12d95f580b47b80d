// The workerd peer of bench/runtimes.sh: the JavaScript echo tool's handler as a module worker.
//
// It takes the body Toolgate's invoke endpoint takes ({"event": ...}), calls the same
// service_handler (echo_javascript/handler.js, loaded as a CommonJS module by config.capnp) and
// answers the same envelope, {"statusCode": ..., "body": "<JSON text>"}, normalised by the
// contract's rule. It does nothing else: no authentication, no billing, no per-tenant isolation
// beyond the isolate. That difference is what the benchmark prices.
import handler from 'handler';

// The same keys Toolgate's context has; the echo reads none of them.
const CONTEXT = Object.freeze({
  execution_id: '', function_id: '', version: '', caller_org_id: '', deadline_ms: 30000, env: {},
});
const HEADERS = { 'Content-Type': 'application/json' };

// The contract's normalisation: an object with an integer statusCode gives that code and its body
// (a string as is, anything else JSON-encoded); any other value is a 200 body.
function envelope(result) {
  let status = 200;
  let body = result;
  if (result !== null && typeof result === 'object' && Number.isInteger(result.statusCode)) {
    status = result.statusCode;
    body = result.body;
  }
  if (typeof body !== 'string') body = JSON.stringify(body === undefined ? null : body);
  return new Response(JSON.stringify({ statusCode: status, body }), { status, headers: HEADERS });
}

function badRequest(detail) {
  return new Response(JSON.stringify({ title: 'Bad request', detail }), { status: 400, headers: HEADERS });
}

export default {
  async fetch(request) {
    let event;
    try {
      event = (await request.json()).event;
    } catch (e) {
      return badRequest('body is not JSON');
    }
    if (event === null || (typeof event !== 'object' && typeof event !== 'string')) {
      return badRequest('event must be an object or a string');
    }
    return envelope(handler.service_handler(event, CONTEXT));
  },
};
