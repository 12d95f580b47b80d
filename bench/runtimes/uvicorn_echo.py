"""The uvicorn peer of bench/runtimes.sh: the Python echo tool's handler as a bare ASGI app.

It takes the body Toolgate's invoke endpoint takes ({"event": ...}), calls the same
service_handler (imported from echo_python/handler.py) and answers the same envelope,
{"statusCode": ..., "body": "<JSON text>"}, normalised by the contract's rule. It does nothing
else: no authentication, no billing, no isolation. That difference is what the benchmark prices.

    /usr/bin/python3 -m uvicorn --app-dir bench/runtimes uvicorn_echo:app --port PORT \
        --loop uvloop --http httptools --workers 1 --lifespan off
"""

import importlib.util
import json
import pathlib

_spec = importlib.util.spec_from_file_location(
    "handler", pathlib.Path(__file__).parent / "echo_python" / "handler.py")
_handler = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_handler)
service_handler = _handler.service_handler

# The same keys Toolgate's context has; the echo reads none of them.
CONTEXT = {"execution_id": "", "function_id": "", "version": "", "caller_org_id": "",
           "deadline_ms": 30000, "env": {}}


def _dumps(value):
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def envelope(result):
    """The contract's normalisation: an object with an integer statusCode gives that code and its
    body (a string as is, anything else JSON-encoded); any other value is a 200 body."""
    if isinstance(result, dict) and type(result.get("statusCode")) is int:
        status, body = result["statusCode"], result.get("body")
    else:
        status, body = 200, result
    if not isinstance(body, str):
        body = _dumps(body)
    return status, _dumps({"statusCode": status, "body": body}).encode()


async def _read_body(receive):
    chunks = []
    while True:
        message = await receive()
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


async def app(scope, receive, send):
    body = await _read_body(receive)
    try:
        request = json.loads(body)
        event = request.get("event") if isinstance(request, dict) else None
        if not isinstance(event, (dict, str)):
            raise ValueError("the body must be an object whose event is an object or a string")
        status, payload = envelope(service_handler(event, CONTEXT))
    except ValueError as e:
        status, payload = 400, _dumps({"title": "Bad request", "detail": str(e)}).encode()
    headers = [(b"content-type", b"application/json"),
               (b"content-length", str(len(payload)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": payload})
