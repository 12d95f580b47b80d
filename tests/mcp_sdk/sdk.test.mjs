// The official MCP TypeScript SDK (@modelcontextprotocol/sdk) as the client of Toolgate's MCP
// endpoints over Streamable HTTP (docs/mcp.md). Starts its own system with `toolgate up`, seeds
// it through the management API and the CLI, and stops it with SIGTERM at the end.
//
//   TOOLGATE_BIN_DIR=build/bin node --test tests/mcp_sdk/sdk.test.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';

import { startSystem, toolgate } from '../node/toolgate_system.mjs';

const REVISIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25'];

let system;
let dataDir;
let baseUrl;
let key;
let calcId;
// The conformance suite's server fixture (tests/mcp_conformance/fixture), in an organization of
// its own so that the workspace above keeps its list.
let everythingKey;
let everythingId;

// `toolgate new` + `toolgate publish`: the templates as a tool author uses them.
function publishTemplate(name, runtime, mcp) {
  const dir = path.join(dataDir, 'tools', name);
  execFileSync(toolgate, ['new', dir, '--runtime', runtime, ...(mcp ? ['--mcp'] : [])], {
    stdio: 'pipe',
  });
  return system.publish(dir, key);
}

// A transport to an endpoint with the API key in requestInit.headers, as docs/mcp.md shows.
function transportTo(endpoint, { authorization = key, headers = {}, ...options } = {}) {
  return new StreamableHTTPClientTransport(new URL(endpoint, baseUrl), {
    requestInit: { headers: { Authorization: authorization, ...headers } },
    ...options,
  });
}

// A client that asks for `revision` in initialize (the SDK itself always asks for its latest).
function askingFor(transport, revision) {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    if (message.method === 'initialize') {
      message = { ...message, params: { ...message.params, protocolVersion: revision } };
    }
    return send(message, options);
  };
  return transport;
}

async function connect(transport) {
  const client = new Client({ name: 'toolgate-sdk-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

function text(result) {
  assert.equal(result.content[0].type, 'text');
  return result.content[0].text;
}

before(async () => {
  system = await startSystem('toolgate-mcp-sdk-');
  ({ dataDir, baseUrl } = system);

  const manage = await system.signUp('SDK Org');
  await manage('POST', '/billing/top-ups', { amount_micro_usd: 100_000_000 });
  key = (await manage('POST', '/api-keys', { name: 'sdk', scopes: ['invoke', 'manage'] })).key;
  calcId = publishTemplate('sdk-calc', 'lua', true);
  publishTemplate('Greeter', 'lua', false);

  const everything = await system.signUp('SDK Everything Org');
  await everything('POST', '/billing/top-ups', { amount_micro_usd: 100_000_000 });
  everythingKey = (await everything('POST', '/api-keys', { name: 'e', scopes: ['invoke', 'manage'] }))
    .key;
  const fixture = path.join(dataDir, 'tools', 'everything');
  fs.cpSync(path.resolve(path.dirname(new URL(import.meta.url).pathname), '../mcp_conformance/fixture'),
    fixture, { recursive: true });
  everythingId = system.publish(fixture, everythingKey);
}, { timeout: 300_000 });

after(async () => {
  if (system) await system.stop();
}, { timeout: 60_000 });

test('per-tool endpoint: connect, list, call, error result', async () => {
  const transport = transportTo(`/mcp/functions/${calcId}`);
  const client = await connect(transport);
  try {
    assert.ok(transport.sessionId, 'initialize issued an Mcp-Session-Id');
    assert.equal(transport.protocolVersion, '2025-11-25');
    assert.equal(client.getServerVersion().name, 'sdk-calc');
    assert.ok(client.getServerCapabilities().tools);

    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['divide', 'echo']);
    assert.deepEqual(tools[0].inputSchema.required, ['a', 'b']);
    // The function's own endpoint prices each tool as the workspace does: the fee per call (none
    // for its own organization) and the compute of the whole timeout.
    for (const t of tools) {
      const price = t._meta['io.toolgate/price'];
      assert.equal(price.currency, 'USD', `${t.name} has a price`);
      assert.equal(price.function_micro_usd, 0);
      assert.ok(Number.isInteger(price.max_compute_micro_usd) && price.max_compute_micro_usd > 0);
      assert.equal(price.max_hold_micro_usd, price.function_micro_usd + price.max_compute_micro_usd);
    }

    const quotient = await client.callTool({ name: 'divide', arguments: { a: 7, b: 2 } });
    assert.equal(text(quotient), '3.5');
    assert.notEqual(quotient.isError, true);

    const failed = await client.callTool({ name: 'divide', arguments: { a: 1, b: 0 } });
    assert.equal(failed.isError, true);
    assert.match(text(failed), /zero/);

    const echoed = await client.callTool({ name: 'echo', arguments: { text: 'Grüße ✓ "q"' } });
    assert.equal(text(echoed), 'Grüße ✓ "q"');

    await assert.rejects(client.callTool({ name: 'nope', arguments: {} }), (e) => {
      assert.ok(e instanceof McpError);
      assert.equal(e.code, -32602);
      return true;
    });
    // Calls have run: the version's recent median is known now.
    const again = await client.listTools();
    const expected = again.tools[0]._meta['io.toolgate/price'].expected_compute_micro_usd;
    assert.ok(Number.isInteger(expected) && expected >= 0, `expected compute ${expected}`);
    await client.ping();
  } finally {
    await client.close();
  }
});

test('per-tool endpoint with a version and a Bearer key', async () => {
  const client = await connect(
    transportTo(`/mcp/functions/${calcId}/0.1.0`, { authorization: `Bearer ${key}` }),
  );
  try {
    const result = await client.callTool({ name: 'divide', arguments: { a: 9, b: 4 } });
    assert.equal(text(result), '2.25');
  } finally {
    await client.close();
  }
});

// Prices an agent reads through the SDK it already uses (docs/mcp.md "Prices and costs"): each
// listed tool's _meta says what a call costs, each call's result what it cost and what is left.
test('workspace endpoint: prices in tools/list, costs in tools/call results', async () => {
  const client = await connect(transportTo('/mcp'));
  try {
    const { tools } = await client.listTools();
    const greeter = tools.find((t) => t.name === 'greeter');
    const price = greeter._meta['io.toolgate/price'];
    assert.equal(price.currency, 'USD');
    assert.equal(price.function_micro_usd, 0, 'the organization calls its own tool: no fee');
    assert.ok(Number.isInteger(price.max_compute_micro_usd) && price.max_compute_micro_usd > 0);
    assert.equal(price.max_hold_micro_usd, price.function_micro_usd + price.max_compute_micro_usd);
    for (const t of tools) assert.ok(t._meta['io.toolgate/price'], `${t.name} has a price`);

    const hello = await client.callTool({ name: 'greeter', arguments: { name: 'Ada' } });
    const cost = hello._meta['io.toolgate/cost'];
    assert.equal(cost.currency, 'USD');
    assert.equal(cost.total_micro_usd, cost.compute_micro_usd + cost.function_micro_usd);
    assert.ok(cost.total_micro_usd > 0 && cost.total_micro_usd <= price.max_hold_micro_usd);
    const execution = await fetch(new URL(`/api/v1/executions/${cost.execution_id}`, baseUrl), {
      headers: { Authorization: key },
    }).then((r) => r.json());
    assert.equal(execution.cost.total_micro_usd, cost.total_micro_usd, 'the ledger charged what _meta says');
    const balance = await fetch(new URL('/api/v1/billing/balance', baseUrl), {
      headers: { Authorization: key },
    }).then((r) => r.json());
    assert.equal(cost.available_micro_usd, balance.available_micro_usd);
    assert.equal(cost.budget_remaining_micro_usd, null);
  } finally {
    await client.close();
  }
});

test('workspace endpoint: every function, and the tools of MCP functions', async () => {
  const transport = transportTo('/mcp');
  const client = await connect(transport);
  try {
    assert.equal(client.getServerVersion().name, 'toolgate');
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['sdk-calc__divide', 'sdk-calc__echo', 'greeter']);
    const greeter = tools.find((t) => t.name === 'greeter');
    assert.equal(greeter.inputSchema.type, 'object');
    assert.equal(greeter.inputSchema.properties.name.type, 'string');

    const hello = await client.callTool({ name: 'greeter', arguments: { name: 'Ada' } });
    assert.deepEqual(hello.structuredContent, { message: 'Hello, Ada!' });
    assert.equal(hello.isError, false);
    assert.deepEqual(JSON.parse(text(hello)), { message: 'Hello, Ada!' });

    const refused = await client.callTool({ name: 'greeter', arguments: { name: 5 } });
    assert.equal(refused.isError, true);

    const nested = await client.callTool({ name: 'sdk-calc__divide', arguments: { a: 1, b: 8 } });
    assert.equal(text(nested), '0.125');

    await assert.rejects(client.callTool({ name: 'missing', arguments: {} }), McpError);
  } finally {
    await client.close();
  }
});

for (const revision of REVISIONS) {
  for (const endpoint of ['per-tool', 'workspace']) {
    test(`a ${revision} client on the ${endpoint} endpoint`, async () => {
      const url = endpoint === 'workspace' ? '/mcp' : `/mcp/functions/${calcId}`;
      const transport = askingFor(transportTo(url), revision);
      const client = await connect(transport);
      try {
        // The session runs at the revision asked for, and later requests carry it.
        assert.equal(transport.protocolVersion, revision);
        const { tools } = await client.listTools();
        assert.ok(tools.length >= 2);
      } finally {
        await client.close();
      }
    });
  }
}

async function rejectsWithStatus(promise, status) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof StreamableHTTPError, `${e}`);
    assert.equal(e.code, status, e.message);
    return true;
  });
}

// Resources, prompts, progress and logs through the SDK, at the tool's own endpoint and through
// the workspace (resources and prompts there come from the listing made at publish).
for (const [where, endpoint, prefix, uri] of [
  ['per-tool endpoint', () => `/mcp/functions/${everythingId}`, '', (u) => u],
  ['workspace endpoint', () => '/mcp', 'mcp-conformance-everything__',
    (u) => `toolgate://mcp-conformance-everything/${u}`],
]) {
  test(`${where}: resources, prompts, progress and logs`, async () => {
    const client = await connect(transportTo(endpoint(), { authorization: everythingKey }));
    try {
      const { resources } = await client.listResources();
      assert.ok(resources.some((r) => r.uri === uri('test://static-text')), JSON.stringify(resources));
      const read = await client.readResource({ uri: uri('test://static-text') });
      assert.equal(read.contents[0].mimeType, 'text/plain');
      assert.match(read.contents[0].text, /static text resource/i);

      const { prompts } = await client.listPrompts();
      assert.ok(prompts.some((p) => p.name === `${prefix}test_simple_prompt`), JSON.stringify(prompts));
      const prompt = await client.getPrompt({
        name: `${prefix}test_prompt_with_arguments`,
        arguments: { arg1: 'alpha', arg2: 'beta' },
      });
      assert.match(prompt.messages[0].content.text, /alpha/);

      // Progress while the handler runs: three notifications before the result.
      const progress = [];
      const result = await client.callTool(
        { name: `${prefix}test_tool_with_progress`, arguments: {} },
        undefined,
        { onprogress: (p) => progress.push(p.progress) },
      );
      assert.deepEqual(progress, [0, 50, 100]);
      assert.notEqual(result.isError, true);

      // Log messages at or above the level the session set.
      const logs = [];
      client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params.data));
      await client.setLoggingLevel('info');
      await client.callTool({ name: `${prefix}test_tool_with_logging`, arguments: {} });
      assert.deepEqual(logs, ['Tool execution started', 'Tool processing data', 'Tool execution completed']);
    } finally {
      await client.close();
    }
  });

  // A tool that needs the client's input: the endpoint asks the client (sampling/createMessage
  // on the response stream) and runs the tool again with its answer.
  test(`${where}: an input round trip`, async () => {
    const client = new Client(
      { name: 'toolgate-sdk-test', version: '1.0.0' },
      { capabilities: { sampling: {} } },
    );
    const asked = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params.messages[0].content.text);
      return { role: 'assistant', content: { type: 'text', text: 'forty-two' }, model: 'm', stopReason: 'endTurn' };
    });
    await client.connect(transportTo(endpoint(), { authorization: everythingKey }));
    try {
      const result = await client.callTool({ name: `${prefix}test_sampling`, arguments: { prompt: 'The answer?' } });
      assert.deepEqual(asked, ['The answer?']);
      assert.equal(text(result), 'LLM response: forty-two');
    } finally {
      await client.close();
    }
  });
}

test('session errors', async () => {
  // An ended session is gone (404), and the client learns it on its next request.
  const transport = transportTo(`/mcp/functions/${calcId}`);
  const client = await connect(transport);
  const ended = transport.sessionId;
  await transport.terminateSession();
  assert.equal(transport.sessionId, undefined);
  await client.close();

  const stale = await connect(transportTo(`/mcp/functions/${calcId}`, { sessionId: ended }));
  await rejectsWithStatus(stale.listTools(), 404);
  await stale.close();

  const forged = await connect(transportTo('/mcp', { sessionId: 'tg1.forged.token' }));
  await rejectsWithStatus(forged.listTools(), 404);
  await forged.close();

  // A session of one endpoint is not one of another.
  const elsewhere = await connect(transportTo('/mcp', { sessionId: ended }));
  await rejectsWithStatus(elsewhere.listTools(), 404);
  await elsewhere.close();

  // Without the header at all: 400.
  const raw = await fetch(new URL(`/mcp/functions/${calcId}`, baseUrl), {
    method: 'POST',
    headers: {
      Authorization: key,
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(raw.status, 400);
  assert.equal(raw.headers.get('content-type'), 'application/problem+json');
  assert.equal((await raw.json()).code, 'mcp_session_required');
});

test('header errors', async () => {
  await rejectsWithStatus(connect(transportTo('/mcp', { authorization: 'wrong' })), 401);
  await rejectsWithStatus(
    connect(transportTo('/mcp', { headers: { Origin: 'https://attacker.example' } })),
    403,
  );

  const transport = transportTo(`/mcp/functions/${calcId}`);
  const client = await connect(transport);
  try {
    transport.setProtocolVersion('1999-01-01');
    await rejectsWithStatus(client.listTools(), 400);
    // Supported, though not this session's: served, as the 2025-11-25 transport asks no more.
    transport.setProtocolVersion('2025-03-26');
    assert.deepEqual((await client.listTools()).tools.map((t) => t.name), ['divide', 'echo']);
  } finally {
    await client.close();
  }

  const endpoint = new URL('/mcp', baseUrl);
  const get = await fetch(endpoint, { headers: { Authorization: key, Accept: 'text/event-stream' } });
  assert.equal(get.status, 405);
  const html = await fetch(endpoint, {
    method: 'POST',
    headers: { Authorization: key, Accept: 'text/html', 'Content-Type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: {} }),
  });
  assert.equal(html.status, 406);
});
