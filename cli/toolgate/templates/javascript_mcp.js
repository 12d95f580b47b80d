'use strict';
// A Model Context Protocol (MCP) server, run by Toolgate.
//
// Each call's event is one JSON-RPC 2.0 request, as an object or as a JSON string; the handler
// answers it with a JSON-RPC response. MCP clients connect to
// {base_url}/mcp/functions/{function_id} with an API key (see docs/mcp.md).
// To add a tool, describe it in TOOLS and run it in callTool. Handlers are synchronous: no
// async/await.

const SUPPORTED_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];
const LATEST_VERSION = '2025-11-25';
const SERVER_INFO = { name: '{{server_name}}', version: '0.1.0' };

const TOOLS = [
  {
    name: 'divide',
    description: 'Divide a by b.',
    inputSchema: {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    },
  },
  {
    name: 'echo',
    description: 'Answer with the text it is given.',
    inputSchema: {
      type: 'object',
      properties: { text: { type: 'string' } },
      required: ['text'],
    },
  },
];

// Bad arguments or an unknown tool: JSON-RPC error -32602.
class InvalidParams extends Error {}

function textResult(text, isError = false) {
  return { content: [{ type: 'text', text }], isError };
}

function isNumber(value) {
  return typeof value === 'number' && Number.isFinite(value);
}

function isObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function callTool(name, args) {
  if (name === 'divide') {
    if (!isNumber(args.a) || !isNumber(args.b)) {
      throw new InvalidParams('Invalid params: a and b must be numbers');
    }
    // The tool ran and failed: a result with isError, which the model gets to read.
    if (args.b === 0) return textResult('Cannot divide by zero.', true);
    return textResult(String(args.a / args.b));
  }
  if (name === 'echo') {
    if (typeof args.text !== 'string') throw new InvalidParams('Invalid params: text must be a string');
    return textResult(args.text);
  }
  throw new InvalidParams('Unknown tool: ' + name);
}

function result(id, value) {
  return { jsonrpc: '2.0', id, result: value };
}

function error(id, code, message) {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

function serviceHandler(event, context) {
  let request = event;
  if (typeof event === 'string') {
    try {
      request = JSON.parse(event);
    } catch (e) {
      return error(null, -32700, 'Parse error');
    }
  }
  if (!isObject(request)) return error(null, -32600, 'Invalid Request');
  const id = request.id === undefined ? null : request.id;
  if (request.jsonrpc !== '2.0' || typeof request.method !== 'string') {
    return error(id, -32600, 'Invalid Request: jsonrpc must be "2.0" and method a string');
  }
  const method = request.method;
  const params = request.params === undefined || request.params === null ? {} : request.params;
  if (!isObject(params)) return error(id, -32602, 'Invalid params: params must be an object');

  switch (method) {
    case 'initialize': {
      const asked = params.protocolVersion;
      return result(id, {
        protocolVersion: SUPPORTED_VERSIONS.includes(asked) ? asked : LATEST_VERSION,
        capabilities: { tools: { listChanged: false } },
        serverInfo: SERVER_INFO,
      });
    }
    case 'ping':
      return result(id, {});
    case 'tools/list':
      return result(id, { tools: TOOLS });
    case 'tools/call': {
      const args = params.arguments === undefined || params.arguments === null ? {} : params.arguments;
      if (typeof params.name !== 'string') return error(id, -32602, 'Invalid params: name is required');
      if (!isObject(args)) return error(id, -32602, 'Invalid params: arguments must be an object');
      try {
        return result(id, callTool(params.name, args));
      } catch (e) {
        if (e instanceof InvalidParams) return error(id, -32602, e.message);
        throw e;
      }
    }
    default:
      return error(id, -32601, 'Method not found: ' + method);
  }
}

module.exports.service_handler = serviceHandler;
