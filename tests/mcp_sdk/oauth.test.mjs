// The official MCP TypeScript SDK's OAuth client (@modelcontextprotocol/sdk, client/auth.js) end
// to end against Toolgate's MCP endpoints as OAuth 2.1 protected resources and its auth service
// as their authorization server (docs/oauth.md), with a person approving in a real browser:
// Debian's Chromium driven by playwright-core, on the web app's consent page (/connect).
//
// The client is an OAuthClientProvider kept in memory, as a desktop MCP client would keep it on
// disk: it registers itself (DCR, a public client with a loopback redirect URI), and its
// redirectToAuthorization hands the SDK's authorization URL (PKCE S256, state, scope, resource)
// to Chromium. The member signs in on the page, approves, the browser lands on the client's
// callback server, and the code goes to transport.finishAuth. Then the SDK connects with the
// token, lists and calls, and the call is billed to the member's organization as made through
// the app. Also: the token is refused at every other endpoint, the SDK refreshes (rotating) when
// the server refuses its access token, and a revoked grant sends the client back to authorize.
//
// A client can instead identify itself by a Client ID Metadata Document (the provider's
// clientMetadataUrl, used because the server advertises client_id_metadata_document_supported):
// an https URL whose JSON names the client. The test hosts such documents on a loopback HTTPS
// server with a throwaway CA (made with the openssl CLI), and starts the system with auth allowed
// to fetch from 127.0.0.0/8 and trusting that CA (--oauth-metadata-allow-cidr,
// --oauth-metadata-ca-file); nothing else in the file depends on those two settings.
//
//   TOOLGATE_BIN_DIR=build/bin node --test tests/mcp_sdk/oauth.test.mjs
// Needs /usr/bin/chromium (CHROMIUM overrides), the openssl CLI and this directory's npm packages
// (npm ci).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';

import { chromium } from 'playwright-core';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

import { startSystem, toolgate } from '../node/toolgate_system.mjs';

const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';
const SCOPES = 'mcp:read mcp:invoke';

let system;
let base;
let manage;
let calcId;
let otherId;
let browser;
let page;
let callback;
let documents;
let certDir;

// Polls `probe` until it returns a truthy value or the deadline passes: for what another process
// does in its own time (billing records a run once it has finished).
async function waitFor(what, probe, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

// The client's redirect URI: http://127.0.0.1:<port>/callback. Each request to it is an answer
// of the authorization server; next() resolves with the next one's URL.
async function startCallbackServer() {
  const arrived = [];
  const waiting = [];
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, `http://${request.headers.host}`);
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    response.end('<!doctype html><title>Connected</title><p>You can close this window.</p>');
    if (url.pathname !== '/callback') return;
    if (waiting.length) waiting.shift()(url);
    else arrived.push(url);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/callback`,
    next: () => (arrived.length ? Promise.resolve(arrived.shift()) : new Promise((resolve) => waiting.push(resolve))),
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// A throwaway CA and a certificate it signed for 127.0.0.1 (IP SAN) and localhost, made in `dir`
// with the openssl CLI. Returns the CA's PEM file and the server's key and certificate.
function makeCertificates(dir) {
  const openssl = (...args) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const newKey = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  openssl('req', '-x509', ...newKey, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
    '-subj', '/CN=Toolgate CIMD test CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
  openssl('req', ...newKey, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=127.0.0.1');
  fs.writeFileSync(path.join(dir, 'server.ext'), [
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
    'basicConstraints=critical,CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
  ].join('\n'));
  openssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
    '-set_serial', `0x${crypto.randomBytes(8).toString('hex')}`, '-days', '2', '-extfile', 'server.ext',
    '-out', 'server.pem');
  return {
    caFile: path.join(dir, 'ca.pem'),
    key: fs.readFileSync(path.join(dir, 'server.key')),
    cert: fs.readFileSync(path.join(dir, 'server.pem')),
  };
}

// Client ID Metadata Documents, as a client's web site hosts them: an HTTPS server on 127.0.0.1
// with `tls`'s certificate. /oauth/client.json is a good document (its client_id is its own URL);
// /oauth/impostor.json claims client.json's client_id. fetches(path) counts the requests for one.
async function startDocumentServer(tls) {
  const requests = [];
  let origin;
  const served = {
    '/oauth/client.json': () => ({
      client_id: `${origin}/oauth/client.json`,
      client_name: 'CIMD Test App',
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      token_endpoint_auth_method: 'none',
    }),
    '/oauth/impostor.json': () => ({
      client_id: `${origin}/oauth/client.json`,
      client_name: 'CIMD Impostor',
      redirect_uris: [callback.url],
      token_endpoint_auth_method: 'none',
    }),
  };
  const server = https.createServer({ key: tls.key, cert: tls.cert }, (request, response) => {
    const { pathname } = new URL(request.url, origin);
    requests.push(`${request.method} ${pathname}`);
    const document = request.method === 'GET' ? served[pathname] : undefined;
    if (!document) {
      response.writeHead(404, { 'content-type': 'text/plain' });
      response.end('not found');
      return;
    }
    // Well beyond the test's run: a second authorization must be answered from auth's cache.
    response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=3600' });
    response.end(JSON.stringify(document()));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${server.address().port}`;
  return {
    clientUrl: `${origin}/oauth/client.json`,
    impostorUrl: `${origin}/oauth/impostor.json`,
    requests,
    fetches: (pathname) => requests.filter((r) => r === `GET ${pathname}`).length,
    close: () => new Promise((resolve) => { server.closeAllConnections(); server.close(resolve); }),
  };
}

// An MCP client's OAuth state, in memory (a desktop client keeps the same on disk): its
// registration, tokens, the PKCE verifier and state of the authorization under way. Every
// authorization URL the SDK builds is recorded and opened in the browser. With clientMetadataUrl
// the client is the one that document describes, and the SDK does not register.
class MemoryOAuthProvider {
  constructor(clientName, { clientMetadataUrl } = {}) {
    this.clientName = clientName;
    this.clientMetadataUrl = clientMetadataUrl;
    this.client = undefined;
    this.saved = undefined;
    this.verifier = undefined;
    this.expectedState = undefined;
    this.authorizationUrls = [];
    this.invalidated = [];
    // What its transports sent: "POST /mcp 401", "POST /oauth/token 200", ...
    this.requests = [];
    this.fetch = async (url, init) => {
      const response = await fetch(url, init);
      this.requests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname} ${response.status}`);
      return response;
    };
  }

  get redirectUrl() {
    return callback.url;
  }

  get clientMetadata() {
    return {
      client_name: this.clientName,
      redirect_uris: [callback.url],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  state() {
    this.expectedState = crypto.randomBytes(16).toString('base64url');
    return this.expectedState;
  }

  clientInformation() {
    return this.client;
  }

  saveClientInformation(information) {
    this.client = information;
  }

  tokens() {
    return this.saved;
  }

  saveTokens(tokens) {
    this.saved = tokens;
  }

  async redirectToAuthorization(url) {
    this.authorizationUrls.push(url);
    await page.goto(url.href);
  }

  saveCodeVerifier(verifier) {
    this.verifier = verifier;
  }

  codeVerifier() {
    assert.ok(this.verifier, 'an authorization is under way');
    return this.verifier;
  }

  invalidateCredentials(scope) {
    this.invalidated.push(scope);
    if (scope === 'all' || scope === 'client') this.client = undefined;
    if (scope === 'all' || scope === 'tokens') this.saved = undefined;
    if (scope === 'all' || scope === 'verifier') this.verifier = undefined;
  }
}

// A transport to `endpoint` that authorizes with `provider` (and sends no API key).
function transportTo(endpoint, provider) {
  return new StreamableHTTPClientTransport(new URL(endpoint, base), { authProvider: provider, fetch: provider.fetch });
}

function newClient() {
  return new Client({ name: 'toolgate-sdk-oauth-test', version: '1.0.0' });
}

function text(result) {
  assert.equal(result.content[0].type, 'text', JSON.stringify(result));
  return result.content[0].text;
}

// The member at the browser, which the SDK has sent to the authorization URL: signs in on the way
// if the page asks, checks what the consent page says, and approves. Resolves with the URL the
// browser was sent back to (the client's callback) and whether the member had to sign in.
// clientIdUrl: the metadata document URL the page must show (a registered client shows none).
async function approveInBrowser(provider, { endpointText, clientIdUrl }) {
  const consentHeading = page.locator('[data-consent="client-name"]');
  const login = page.getByRole('heading', { name: 'Log in' });
  await consentHeading.or(login).waitFor();
  const signedIn = await login.isVisible();
  if (signedIn) {
    assert.match(page.url(), /\/login\?next=%2Fconnect%3Frequest%3D/);
    await page.getByLabel('Email').fill(manage.email);
    await page.getByLabel('Password').fill(manage.password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }
  await consentHeading.waitFor();
  assert.match(page.url(), new RegExp(`^${base}/connect\\?request=`));
  assert.equal(await consentHeading.innerText(), `${provider.clientName} wants to use your Toolgate account`);
  assert.equal(await page.locator('[data-consent="endpoint"]').innerText(), endpointText);
  const clientId = page.locator('[data-consent="client-id"]');
  if (clientIdUrl) assert.equal(await clientId.innerText(), clientIdUrl);
  else assert.equal(await clientId.count(), 0, 'a registered client has no client ID URL to show');
  for (const scope of SCOPES.split(' ')) {
    assert.equal(await page.locator(`[data-scope="${scope}"]`).count(), 1, `${scope} is asked for`);
  }
  const answer = callback.next();
  await page.getByRole('button', { name: 'Approve' }).click();
  const url = await answer;
  await page.waitForURL((u) => u.href.startsWith(callback.url));
  return { url, signedIn };
}

// Connects to `endpoint` with a provider that has nothing yet: the SDK learns from the 401 where
// to authorize, registers, and sends the browser; the member approves; the code is exchanged.
// Resolves with the connected client and the provider.
async function authorizeAndConnect(endpoint, clientName, { endpointText, signsIn }) {
  const provider = new MemoryOAuthProvider(clientName);
  const transport = transportTo(endpoint, provider);
  await assert.rejects(newClient().connect(transport), UnauthorizedError);
  // It asked without a token, was refused, and read what the 401 pointed at.
  assert.deepEqual(provider.requests, [
    `POST ${endpoint} 401`,
    `GET /.well-known/oauth-protected-resource${endpoint} 200`,
    'GET /.well-known/oauth-authorization-server 200',
    'POST /oauth/register 201',
  ]);

  // Registered (RFC 7591) as a public client.
  assert.ok(provider.client?.client_id, JSON.stringify(provider.client));
  assert.equal(provider.client.client_secret, undefined);
  assert.equal(provider.client.token_endpoint_auth_method, 'none');
  // The authorization URL: the server's endpoint, PKCE S256, this endpoint as the resource and
  // the scopes the 401 named.
  assert.equal(provider.authorizationUrls.length, 1);
  const authorization = provider.authorizationUrls[0];
  assert.equal(`${authorization.origin}${authorization.pathname}`, `${base}/oauth/authorize`);
  const q = authorization.searchParams;
  assert.equal(q.get('response_type'), 'code');
  assert.equal(q.get('client_id'), provider.client.client_id);
  assert.equal(q.get('redirect_uri'), callback.url);
  assert.equal(q.get('code_challenge_method'), 'S256');
  assert.equal(q.get('code_challenge'),
    crypto.createHash('sha256').update(provider.verifier).digest('base64url'));
  assert.equal(q.get('resource'), `${base}${endpoint}`);
  assert.equal(q.get('scope'), SCOPES);
  assert.equal(q.get('state'), provider.expectedState);

  const { url: answer, signedIn } = await approveInBrowser(provider, { endpointText });
  assert.equal(signedIn, signsIn, signsIn ? 'the consent page asked to sign in first' : 'the browser was signed in');
  assert.equal(answer.searchParams.get('state'), provider.expectedState);
  assert.equal(answer.searchParams.get('iss'), base, 'the answer names its issuer (RFC 9207)');
  assert.equal(answer.searchParams.get('error'), null, answer.href);
  const code = answer.searchParams.get('code');
  assert.ok(code, answer.href);

  // The transport that asked exchanges the code (PKCE verifier, resource).
  await transport.finishAuth(code);
  assert.equal(provider.requests.at(-1), 'POST /oauth/token 200');
  const tokens = provider.tokens();
  assert.match(tokens.access_token, /^tgo_/);
  assert.equal(tokens.token_type.toLowerCase(), 'bearer');
  assert.equal(tokens.expires_in, 900);
  assert.ok(tokens.refresh_token, 'the client registered for refresh tokens');
  assert.equal(tokens.scope, SCOPES);

  // And connects again, now with the token.
  const client = newClient();
  await client.connect(transportTo(endpoint, provider));
  return { client, provider };
}

// A JSON-RPC initialize with `authorization` at `endpoint`, by hand.
function initialize(endpoint, authorization) {
  return fetch(new URL(endpoint, base), {
    method: 'POST',
    headers: {
      ...(authorization ? { Authorization: authorization } : {}),
      Accept: 'application/json, text/event-stream',
      'Content-Type': 'application/json',
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
}

async function assertRefused(endpoint, authorization, status, error) {
  const response = await initialize(endpoint, authorization);
  const body = await response.text();
  assert.equal(response.status, status, `${endpoint}: ${body}`);
  const challenge = response.headers.get('www-authenticate') ?? '';
  assert.match(challenge, /^Bearer /, challenge);
  assert.ok(challenge.includes(`error="${error}"`), `${endpoint}: ${challenge}`);
  assert.ok(challenge.includes(`resource_metadata="${base}/.well-known/oauth-protected-resource${endpoint}"`),
    `${endpoint}: ${challenge}`);
}

// The organization's executions of `functionId` made through the app `clientName`, once billing
// has recorded `count` of them.
function executionsVia(functionId, clientName, count = 1) {
  return waitFor(`${count} execution(s) of ${functionId} via ${clientName}`, async () => {
    const { items } = await manage('GET', `/executions?function_id=${functionId}&limit=50`);
    const via = items.filter((e) => e.client_name === clientName);
    return via.length >= count ? via : null;
  });
}

// `toolgate new --mcp` + `toolgate publish`: an MCP server tool as an author makes one.
function publishMcpTemplate(name, key) {
  const dir = path.join(system.dataDir, 'tools', name);
  execFileSync(toolgate, ['new', dir, '--runtime', 'lua', '--mcp'], { stdio: 'pipe' });
  return system.publish(dir, key);
}

before(async () => {
  callback = await startCallbackServer();
  certDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-cimd-tls-'));
  const tls = makeCertificates(certDir);
  documents = await startDocumentServer(tls);
  system = await startSystem('toolgate-mcp-sdk-oauth-', {
    extraEnv: {
      TOOLGATE_OAUTH_METADATA_ALLOW_CIDR: '127.0.0.0/8',
      TOOLGATE_OAUTH_METADATA_CA_FILE: tls.caFile,
    },
  });
  base = system.baseUrl;
  manage = await system.signUp('SDK OAuth Org');
  await manage('POST', '/billing/top-ups', { amount_micro_usd: 100_000_000 });
  const { key } = await manage('POST', '/api-keys', { name: 'publish', scopes: ['manage'] });
  calcId = publishMcpTemplate('sdk-calc', key);
  otherId = publishMcpTemplate('other-calc', key);
  browser = await chromium.launch({
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
  });
  page = await (await browser.newContext()).newPage();
  page.setDefaultTimeout(30_000);
}, { timeout: 300_000 });

after(async () => {
  await browser?.close().catch(() => {});
  await callback?.close();
  await documents?.close();
  if (system) await system.stop();
  if (certDir) fs.rmSync(certDir, { recursive: true, force: true });
}, { timeout: 60_000 });

test('the endpoints are protected resources that name their authorization server', async () => {
  for (const endpoint of ['/mcp', `/mcp/functions/${calcId}`, `/mcp/functions/${calcId}/0.1.0`]) {
    const response = await initialize(endpoint);
    assert.equal(response.status, 401, await response.text());
    assert.equal(response.headers.get('www-authenticate'),
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource${endpoint}", scope="${SCOPES}"`);
    const metadata = await fetch(`${base}/.well-known/oauth-protected-resource${endpoint}`);
    assert.equal(metadata.status, 200);
    const { resource, authorization_servers, scopes_supported, bearer_methods_supported } = await metadata.json();
    assert.deepEqual({ resource, authorization_servers, scopes_supported, bearer_methods_supported }, {
      resource: `${base}${endpoint}`,
      authorization_servers: [base],
      scopes_supported: SCOPES.split(' '),
      bearer_methods_supported: ['header'],
    });
  }
  const root = await (await fetch(`${base}/.well-known/oauth-protected-resource`)).json();
  assert.equal(root.resource, `${base}/mcp`);
});

test('a token without mcp:invoke lists the tools but may not call one (403 insufficient_scope)', async () => {
  const registered = await fetch(`${base}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: 'Read-only app', redirect_uris: [callback.url], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(registered.status, 201);
  const { client_id: clientId } = await registered.json();
  const verifier = crypto.randomBytes(32).toString('base64url');
  const endpoint = `/mcp/functions/${calcId}`;
  const authorize = `${base}/oauth/authorize?${new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: callback.url, state: 's', scope: 'mcp:read',
    code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    resource: `${base}${endpoint}`,
  })}`;
  const { request, redirectTo } = await system.consent(manage, authorize);
  assert.deepEqual(request.scopes.map((x) => x.name), ['mcp:read']);
  const token = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code: new URL(redirectTo).searchParams.get('code'),
      redirect_uri: callback.url, code_verifier: verifier, client_id: clientId, resource: `${base}${endpoint}` }),
  });
  const tokens = await token.json();
  assert.equal(token.status, 200, JSON.stringify(tokens));
  assert.equal(tokens.scope, 'mcp:read');
  assert.equal(tokens.refresh_token, undefined, 'a client registered without refresh_token gets none');

  const bearer = `Bearer ${tokens.access_token}`;
  const init = await initialize(endpoint, bearer);
  assert.equal(init.status, 200, await init.text());
  const send = (id, method, params) => fetch(new URL(endpoint, base), {
    method: 'POST',
    headers: { Authorization: bearer, Accept: 'application/json, text/event-stream', 'Content-Type': 'application/json',
      'Mcp-Session-Id': init.headers.get('mcp-session-id'), 'Mcp-Protocol-Version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  const list = await send(2, 'tools/list', {});
  const listed = await list.text();
  assert.equal(list.status, 200, listed);
  assert.match(listed, /"divide"/);
  const call = await send(3, 'tools/call', { name: 'divide', arguments: { a: 1, b: 2 } });
  assert.equal(call.status, 403, await call.text());
  assert.equal(call.headers.get('www-authenticate'),
    `Bearer error="insufficient_scope", scope="${SCOPES}", resource_metadata="${base}/.well-known/oauth-protected-resource${endpoint}"`);
});

// Filled by the tests below, in order: the grants they make.
let perTool;
let workspace;

test('a tool\'s endpoint: discovery, registration, consent in the browser, code exchange, list and call', { timeout: 120_000 }, async () => {
  perTool = await authorizeAndConnect(`/mcp/functions/${calcId}`, 'SDK OAuth test app',
    { endpointText: 'Use the tool sdk-calc (latest version)', signsIn: true });
  const { client, provider } = perTool;
  assert.equal(client.getServerVersion().name, 'sdk-calc');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name), ['divide', 'echo']);
  assert.equal(text(await client.callTool({ name: 'divide', arguments: { a: 7, b: 2 } })), '3.5');

  // Billed to the member's organization, as a call of the app.
  const [run] = await executionsVia(calcId, provider.clientName);
  assert.equal(run.function_id, calcId);
  assert.equal(run.status_code, 200, JSON.stringify(run));

  // A token for a tool also serves that tool's versions, and nothing else.
  const bearer = `Bearer ${provider.tokens().access_token}`;
  const versioned = await initialize(`/mcp/functions/${calcId}/0.1.0`, bearer);
  assert.equal(versioned.status, 200, await versioned.text());
  await assertRefused('/mcp', bearer, 401, 'invalid_token');
  await assertRefused(`/mcp/functions/${otherId}`, bearer, 401, 'invalid_token');
  await assertRefused(`/mcp/functions/${calcId}`, 'Bearer tgo_not-a-token', 401, 'invalid_token');
});

test('the workspace endpoint: the same flow, signed in already; the call is billed via the app', { timeout: 120_000 }, async () => {
  workspace = await authorizeAndConnect('/mcp', 'SDK OAuth workspace app',
    { endpointText: 'Use your whole workspace: every tool your organization owns or has added', signsIn: false });
  const { client, provider } = workspace;
  assert.equal(client.getServerVersion().name, 'toolgate');
  const { tools } = await client.listTools();
  assert.deepEqual(tools.map((t) => t.name).sort(),
    ['other-calc__divide', 'other-calc__echo', 'sdk-calc__divide', 'sdk-calc__echo']);
  assert.equal(text(await client.callTool({ name: 'sdk-calc__divide', arguments: { a: 1, b: 8 } })), '0.125');
  const [run] = await executionsVia(calcId, provider.clientName);
  assert.equal(run.status_code, 200, JSON.stringify(run));

  // Connected apps lists both grants, each for its endpoint.
  const { items } = await manage('GET', '/oauth/grants');
  const granted = items.filter((g) => g.client.name.startsWith('SDK OAuth'))
    .map((g) => ({ client: g.client.name, resource: g.resource, scopes: g.scopes, status: g.status }))
    .sort((a, b) => a.resource.localeCompare(b.resource));
  assert.deepEqual(granted, [
    { client: 'SDK OAuth workspace app', resource: `${base}/mcp`, scopes: SCOPES.split(' '), status: 'active' },
    { client: 'SDK OAuth test app', resource: `${base}/mcp/functions/${calcId}`, scopes: SCOPES.split(' '), status: 'active' },
  ]);
});

test('a refused access token: the SDK refreshes (the refresh token rotates) and the session goes on', { timeout: 60_000 }, async () => {
  const { client, provider } = workspace;
  const before = provider.tokens();
  // The access token the client holds is no longer good (as when it has expired): the server
  // refuses it, and the SDK refreshes with the refresh token and sends the request again.
  provider.saveTokens({ ...before, access_token: `tgo_${crypto.randomBytes(24).toString('base64url')}` });
  const sent = provider.requests.length;
  assert.equal(text(await client.callTool({ name: 'sdk-calc__divide', arguments: { a: 9, b: 4 } })), '2.25');
  const posts = provider.requests.slice(sent).filter((r) => r.startsWith('POST'));
  assert.deepEqual(posts, ['POST /mcp 401', 'POST /oauth/token 200', 'POST /mcp 200'], provider.requests.slice(sent).join('\n'));
  assert.equal(provider.authorizationUrls.length, 1, 'no new authorization in the browser');
  const after = provider.tokens();
  assert.match(after.access_token, /^tgo_/);
  assert.notEqual(after.access_token, before.access_token);
  assert.ok(after.refresh_token);
  assert.notEqual(after.refresh_token, before.refresh_token, 'the refresh token rotates');
  assert.equal(after.scope, SCOPES);
  await executionsVia(calcId, provider.clientName, 2);
  assert.equal(text(await client.callTool({ name: 'sdk-calc__echo', arguments: { text: 'again' } })), 'again');

  // The refresh token it replaced is spent.
  const replay = await fetch(`${base}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: before.refresh_token, client_id: provider.client.client_id }),
  });
  const replayBody = await replay.text();
  assert.equal(replay.status, 400, replayBody);
  assert.equal(JSON.parse(replayBody).error, 'invalid_grant');
  await client.close();
});

test('a revoked grant: the token is refused, the refresh fails, and the SDK asks for authorization again', { timeout: 60_000 }, async () => {
  const { client, provider } = perTool;
  const { items } = await manage('GET', '/oauth/grants');
  const grant = items.find((g) => g.client.client_id === provider.client.client_id);
  await manage('DELETE', `/oauth/grants/${grant.grant_id}`);

  await assertRefused(`/mcp/functions/${calcId}`, `Bearer ${provider.tokens().access_token}`, 401, 'invalid_token');
  await assert.rejects(client.callTool({ name: 'divide', arguments: { a: 1, b: 2 } }), UnauthorizedError);
  assert.ok(provider.invalidated.includes('tokens'), `the refresh was refused: ${provider.invalidated}`);
  assert.equal(provider.authorizationUrls.length, 2, 'the browser is sent to authorize again');
  await page.locator('[data-consent="client-name"]').waitFor();
  await client.close();
});

// Connects to `endpoint` with a fresh provider whose client is the metadata document at
// documents.clientUrl: the SDK discovers, finds client_id_metadata_document_supported, and sends
// the browser with the document's URL as client_id, registering nothing; the member approves;
// the code is exchanged. Resolves with the connected client and the provider.
async function authorizeWithDocument(endpoint, { endpointText }) {
  const provider = new MemoryOAuthProvider('CIMD Test App', { clientMetadataUrl: documents.clientUrl });
  const transport = transportTo(endpoint, provider);
  await assert.rejects(newClient().connect(transport), UnauthorizedError);
  assert.deepEqual(provider.requests, [
    `POST ${endpoint} 401`,
    `GET /.well-known/oauth-protected-resource${endpoint} 200`,
    'GET /.well-known/oauth-authorization-server 200',
  ], 'discovery, and no POST /oauth/register');
  // The client "information" the SDK saved is the URL and nothing a registration would give.
  assert.equal(provider.client?.client_id, documents.clientUrl, JSON.stringify(provider.client));
  assert.equal(provider.client.client_secret, undefined);

  assert.equal(provider.authorizationUrls.length, 1);
  const q = provider.authorizationUrls[0].searchParams;
  assert.equal(q.get('client_id'), documents.clientUrl);
  assert.equal(q.get('redirect_uri'), callback.url);
  assert.equal(q.get('code_challenge_method'), 'S256');
  assert.equal(q.get('resource'), `${base}${endpoint}`);
  assert.equal(q.get('scope'), SCOPES);

  const { url: answer } = await approveInBrowser(provider, { endpointText, clientIdUrl: documents.clientUrl });
  assert.equal(answer.searchParams.get('state'), provider.expectedState);
  assert.equal(answer.searchParams.get('iss'), base);
  assert.equal(answer.searchParams.get('error'), null, answer.href);
  const code = answer.searchParams.get('code');
  assert.ok(code, answer.href);

  // A public client: the code goes with client_id (the URL) and the PKCE verifier, no secret.
  await transport.finishAuth(code);
  assert.equal(provider.requests.at(-1), 'POST /oauth/token 200');
  assert.ok(!provider.requests.some((r) => r.includes('/oauth/register')), provider.requests.join('\n'));
  const tokens = provider.tokens();
  assert.match(tokens.access_token, /^tgo_/);
  assert.ok(tokens.refresh_token, 'the document lists the refresh_token grant');
  assert.equal(tokens.scope, SCOPES);

  const client = newClient();
  await client.connect(transportTo(endpoint, provider));
  return { client, provider };
}

test('a Client ID Metadata Document client: no registration, consent shows the document\'s name and URL, list and call; a second authorization uses the cached document', { timeout: 180_000 }, async () => {
  assert.equal(documents.fetches('/oauth/client.json'), 0);

  const tool = await authorizeWithDocument(`/mcp/functions/${calcId}`,
    { endpointText: 'Use the tool sdk-calc (latest version)' });
  // Auth fetched the document (at /oauth/authorize) once; the token endpoint used its cache.
  assert.equal(documents.fetches('/oauth/client.json'), 1, documents.requests.join('\n'));
  assert.equal(text(await tool.client.callTool({ name: 'divide', arguments: { a: 9, b: 2 } })), '4.5');
  const [run] = await executionsVia(calcId, 'CIMD Test App');
  assert.equal(run.status_code, 200, JSON.stringify(run));

  // A second authorization by the same client (another endpoint, fresh tokens), well within the
  // document's max-age: auth answers it from its cache and does not fetch again.
  const workspaceApp = await authorizeWithDocument('/mcp',
    { endpointText: 'Use your whole workspace: every tool your organization owns or has added' });
  assert.equal(text(await workspaceApp.client.callTool({ name: 'sdk-calc__divide', arguments: { a: 1, b: 4 } })), '0.25');

  // And a refresh (the server refuses the access token): the token endpoint knows the client by
  // its URL, from the cache as well.
  const { provider } = workspaceApp;
  provider.saveTokens({ ...provider.tokens(), access_token: `tgo_${crypto.randomBytes(24).toString('base64url')}` });
  const sent = provider.requests.length;
  assert.equal(text(await workspaceApp.client.callTool({ name: 'sdk-calc__echo', arguments: { text: 'cimd' } })), 'cimd');
  assert.deepEqual(provider.requests.slice(sent).filter((r) => r.startsWith('POST')),
    ['POST /mcp 401', 'POST /oauth/token 200', 'POST /mcp 200'], provider.requests.slice(sent).join('\n'));
  assert.equal(documents.fetches('/oauth/client.json'), 1, documents.requests.join('\n'));

  // Connected apps: two grants of the one client, named by its document.
  const { items } = await manage('GET', '/oauth/grants');
  const grants = items.filter((g) => g.client.client_id === documents.clientUrl);
  assert.deepEqual(grants.map((g) => ({ name: g.client.name, resource: g.resource, status: g.status }))
    .sort((a, b) => a.resource.localeCompare(b.resource)), [
    { name: 'CIMD Test App', resource: `${base}/mcp`, status: 'active' },
    { name: 'CIMD Test App', resource: `${base}/mcp/functions/${calcId}`, status: 'active' },
  ]);
  await tool.client.close();
  await workspaceApp.client.close();
});

test('a metadata document whose client_id is not its own URL: /oauth/authorize answers 400, no redirect', async () => {
  const verifier = crypto.randomBytes(32).toString('base64url');
  const response = await fetch(`${base}/oauth/authorize?${new URLSearchParams({
    response_type: 'code', client_id: documents.impostorUrl, redirect_uri: callback.url, state: 's', scope: SCOPES,
    code_challenge: crypto.createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256',
    resource: `${base}/mcp/functions/${calcId}`,
  })}`, { redirect: 'manual' });
  const body = await response.text();
  assert.equal(response.status, 400, body);
  assert.equal(response.headers.get('location'), null, 'nothing is sent to the redirect URI');
  assert.match(body, /client_id/);
  assert.ok(body.includes(documents.impostorUrl), body);
  // Refused for what the document says: auth did fetch it (the address and TLS were fine).
  assert.equal(documents.fetches('/oauth/impostor.json'), 1, documents.requests.join('\n'));
});
