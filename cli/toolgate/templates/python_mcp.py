"""A Model Context Protocol (MCP) server, run by Toolgate.

Each call's event is one JSON-RPC 2.0 request, as an object or as a JSON string; the handler
answers it with a JSON-RPC response. MCP clients connect to
{base_url}/mcp/functions/{function_id} with an API key (see docs/mcp.md).
To add a tool, describe it in TOOLS and run it in call_tool.
"""
import json
import math

SUPPORTED_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_VERSION = "2025-11-25"
SERVER_INFO = {"name": "{{server_name}}", "version": "0.1.0"}

TOOLS = [
    {
        "name": "divide",
        "description": "Divide a by b.",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    },
    {
        "name": "echo",
        "description": "Answer with the text it is given.",
        "inputSchema": {
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    },
]


class InvalidParams(Exception):
    """Bad arguments or an unknown tool: JSON-RPC error -32602."""


def text_result(text, is_error=False):
    return {"content": [{"type": "text", "text": text}], "isError": is_error}


def is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def call_tool(name, args):
    if name == "divide":
        a, b = args.get("a"), args.get("b")
        if not is_number(a) or not is_number(b):
            raise InvalidParams("Invalid params: a and b must be numbers")
        if b == 0:
            # The tool ran and failed: a result with isError, which the model gets to read.
            return text_result("Cannot divide by zero.", is_error=True)
        return text_result(str(a / b))
    if name == "echo":
        if not isinstance(args.get("text"), str):
            raise InvalidParams("Invalid params: text must be a string")
        return text_result(args["text"])
    raise InvalidParams("Unknown tool: " + name)


def result(request_id, value):
    return {"jsonrpc": "2.0", "id": request_id, "result": value}


def error(request_id, code, message):
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def service_handler(event, context):
    request = event
    if isinstance(event, str):
        try:
            request = json.loads(event)
        except ValueError:
            return error(None, -32700, "Parse error")
    if not isinstance(request, dict):
        return error(None, -32600, "Invalid Request")
    request_id = request.get("id")
    if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
        return error(request_id, -32600, 'Invalid Request: jsonrpc must be "2.0" and method a string')
    method = request["method"]
    params = request.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return error(request_id, -32602, "Invalid params: params must be an object")

    if method == "initialize":
        asked = params.get("protocolVersion")
        return result(request_id, {
            "protocolVersion": asked if asked in SUPPORTED_VERSIONS else LATEST_VERSION,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": SERVER_INFO,
        })
    if method == "ping":
        return result(request_id, {})
    if method == "tools/list":
        return result(request_id, {"tools": TOOLS})
    if method == "tools/call":
        name = params.get("name")
        args = params.get("arguments")
        if args is None:
            args = {}
        if not isinstance(name, str):
            return error(request_id, -32602, "Invalid params: name is required")
        if not isinstance(args, dict):
            return error(request_id, -32602, "Invalid params: arguments must be an object")
        try:
            return result(request_id, call_tool(name, args))
        except InvalidParams as e:
            return error(request_id, -32602, str(e))
    return error(request_id, -32601, "Method not found: " + method)
