// The official MCP conformance suite's authorization-server scenarios
// (@modelcontextprotocol/conformance `authorization`: authorization-server-metadata-endpoint and
// authorization-code-grant) against Toolgate's auth service as an OAuth 2.1 authorization server,
// on a whole system (docs/oauth.md).
//
// The suite reads the metadata at <base>/.well-known/oauth-authorization-server, prints an
// authorization URL (PKCE S256, its own state) and waits for the browser to come back to its
// callback server on http://127.0.0.1:<port>/callback; then it exchanges the code at the token
// endpoint and checks the answer. This test is the person at the browser: it registers the suite
// as a public client (POST /oauth/register, token_endpoint_auth_method "none", that redirect
// URI), reads the URL from the suite's output, follows it to the consent page's address
// (/connect?request=<id>), approves the request through the consent API with a member's session,
// and opens the address the approval answers (the suite's callback) so the suite goes on. No
// check may fail, warn or be skipped.
//
//   TOOLGATE_BIN_DIR=build/bin node --test tests/mcp_conformance/authorization.test.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startSystem } from '../node/toolgate_system.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const suite = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

let system;
let base;
let manage;
let fixtureId;

// A port nothing listens on now, for the suite's callback server (it binds the port it is given,
// and the redirect URI registered for it must name that port). Chosen below the kernel's
// ephemeral range, as the launcher chooses its children's ports: a port of that range can become
// an outgoing connection's source port before the server binds it.
async function freePort() {
  const [low] = fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
  for (let attempt = 0; attempt < 256; attempt += 1) {
    const port = 10000 + Math.floor(Math.random() * (low - 10000));
    const server = net.createServer();
    const bound = await new Promise((resolve) => {
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (bound) {
      await new Promise((resolve) => server.close(resolve));
      return port;
    }
  }
  throw new Error('no free port below the ephemeral range');
}

// A public client registered for the suite's callback (RFC 7591).
async function registerClient(port) {
  const redirectUri = `http://127.0.0.1:${port}/callback`;
  const response = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      client_name: 'MCP conformance suite',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    }),
  });
  const text = await response.text();
  assert.equal(response.status, 201, text);
  const client = JSON.parse(text);
  assert.ok(client.client_id, text);
  assert.equal(client.client_secret, undefined, `a public client has no secret: ${text}`);
  return { clientId: client.client_id, redirectUri };
}

// Every check in the results the suite wrote (checks.json of each scenario).
function checksIn(resultsDir) {
  const checks = [];
  const files = fs.readdirSync(resultsDir, { recursive: true }).filter((f) => f.endsWith('checks.json'));
  for (const file of files.sort()) {
    for (const check of JSON.parse(fs.readFileSync(path.join(resultsDir, file), 'utf8'))) {
      checks.push({ scenario: path.dirname(file), ...check });
    }
  }
  return checks;
}

// Runs the suite's authorization-server scenarios against the system for the client `clientId`
// with its callback on `port` (and `args` besides), and answers its authorization request with
// `onAuthorizationUrl(url)`, which resolves to the address the browser would be sent back to.
// Resolves with the suite's exit code, its output, its checks and what its callback answered.
async function runSuite(name, { clientId, port, args = [] }, onAuthorizationUrl) {
  const cwd = path.join(system.dataDir, 'conformance', name);
  const resultsDir = path.join(cwd, 'results');
  fs.mkdirSync(cwd, { recursive: true });
  const child = spawn(process.execPath,
    ['--import', path.join(here, 'node20_fs_glob.mjs'), suite, 'authorization',
      '--url', base, '--client-id', clientId, '--port', String(port), ...args, '--output-dir', resultsDir],
    { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve({ code, signal }));
  });

  let output = '';
  let onListening;
  let authorizationUrl;
  const listening = new Promise((resolve) => {
    onListening = resolve;
  });
  const urlSeen = new Promise((resolve) => {
    authorizationUrl = resolve;
  });
  let pending = '';
  let urlIsNext = false;
  child.stdout.on('data', (chunk) => {
    output += chunk;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop();
    for (const line of lines) {
      if (urlIsNext) {
        urlIsNext = false;
        authorizationUrl(line.trim());
      }
      if (line.startsWith('Access the following URL in your browser')) urlIsNext = true;
      if (line.startsWith('Callback server started:')) onListening();
    }
  });
  child.stderr.on('data', (chunk) => (output += chunk));

  let callback = null;
  try {
    // The suite prints the URL and then waits (up to 5 minutes) for its callback; if it exits
    // first (it did not get that far), there is nothing to answer.
    const url = await Promise.race([urlSeen, exited.then(() => null)]);
    if (url !== null) {
      const redirectTo = await onAuthorizationUrl(url);
      assert.ok(redirectTo.startsWith(`http://127.0.0.1:${port}/callback?`),
        `the approval sends the browser to the suite's callback: ${redirectTo}`);
      // Its callback server may still be starting (it prints the URL first); if it could not
      // start, the suite ends, failing the scenario.
      if (await Promise.race([listening.then(() => true), exited.then(() => false)])) {
        const answer = await fetch(redirectTo);
        callback = { status: answer.status, body: await answer.text() };
      }
    }
  } catch (error) {
    child.kill('SIGTERM');
    await exited;
    throw new Error(`${error.stack}\nsuite output:\n${output}`);
  }
  const { code } = await exited;
  return { code, output, checks: checksIn(resultsDir), callback };
}

// What one run must show: both scenarios ran, and every check succeeded.
function assertAllPassed(run) {
  const { code, output, checks } = run;
  console.log(output.split('\n').filter((l) => /^\s*[✓✗] |^Total:/.test(l)).join('\n'));
  const notPassed = checks.filter((c) => c.status !== 'SUCCESS')
    .map((c) => `${c.scenario}: ${c.id}: ${c.status}: ${c.errorMessage ?? ''}`);
  assert.deepEqual(notPassed, [], `checks that did not pass:\n${notPassed.join('\n')}\n\nsuite output:\n${output}`);
  assert.deepEqual(checks.map((c) => c.id).sort(),
    ['authorization-code-grant', 'authorization-server-metadata', 'authorization-server-metadata-cimd'],
    output);
  assert.match(output, /^Total: 3 passed, 0 failed$/m, output);
  assert.equal(code, 0, output);
}

before(async () => {
  system = await startSystem('toolgate-mcp-conformance-auth-');
  base = system.baseUrl;
  manage = await system.signUp('Conformance Auth Org');
  // An MCP function of the member's organization, for a grant to one tool's endpoint.
  const { key } = await manage('POST', '/api-keys', { name: 'publish', scopes: ['manage'] });
  const dir = path.join(system.dataDir, 'fixture');
  fs.cpSync(path.join(here, 'fixture'), dir, { recursive: true });
  fixtureId = system.publish(dir, key);
}, { timeout: 300_000 });

after(async () => {
  if (system) await system.stop();
}, { timeout: 60_000 });

test('authorization server: metadata and the authorization code grant (the workspace)', { timeout: 400_000 }, async () => {
  const port = await freePort();
  const { clientId, redirectUri } = await registerClient(port);
  let consent;
  const run = await runSuite('authorization-workspace', { clientId, port }, async (url) => {
    const authorize = new URL(url);
    assert.equal(`${authorize.origin}${authorize.pathname}`, `${base}/oauth/authorize`, url);
    assert.equal(authorize.searchParams.get('redirect_uri'), redirectUri, url);
    consent = await system.consent(manage, url);
    return consent.redirectTo;
  });
  assertAllPassed(run);
  assert.deepEqual(run.callback, { status: 200, body: 'OK. You can close this page.' }, run.output);
  // Without a resource parameter the request is for the workspace endpoint.
  assert.equal(consent.request.resource, `${base}/mcp`);
  assert.equal(consent.request.endpoint.kind, 'workspace');
  assert.equal(consent.request.client.client_id, clientId);
  assert.equal(consent.request.client.name, 'MCP conformance suite');
  const answer = new URL(consent.redirectTo);
  assert.equal(answer.searchParams.get('iss'), base);
});

test('authorization server: the authorization code grant for one tool (RFC 8707 resource)', { timeout: 400_000 }, async () => {
  const port = await freePort();
  const { clientId } = await registerClient(port);
  const resource = `${base}/mcp/functions/${fixtureId}`;
  let consent;
  const run = await runSuite('authorization-function', { clientId, port, args: ['--resource', resource] },
    async (url) => {
      assert.equal(new URL(url).searchParams.get('resource'), resource, url);
      consent = await system.consent(manage, url);
      return consent.redirectTo;
    });
  assertAllPassed(run);
  assert.deepEqual(run.callback, { status: 200, body: 'OK. You can close this page.' }, run.output);
  assert.equal(consent.request.resource, resource);
  assert.equal(consent.request.endpoint.kind, 'function');
  assert.equal(consent.request.endpoint.function_id, fixtureId);

  // The approval is one of the member's connected apps, for that tool's endpoint only.
  const { items } = await manage('GET', '/oauth/grants');
  const granted = items.filter((g) => g.client.client_id === clientId)
    .map((g) => ({ resource: g.resource, status: g.status, scopes: g.scopes }));
  assert.deepEqual(granted, [{ resource, status: 'active', scopes: ['mcp:read', 'mcp:invoke'] }], JSON.stringify(items));
});
