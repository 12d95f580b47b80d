// Connecting an app over OAuth 2.1, in a real browser: Debian's Chromium driven by
// playwright-core against a whole system (tests/node/toolgate_system.mjs starts `toolgate up` in
// a fresh data directory). A client registers itself (POST /oauth/register), sends the browser to
// /oauth/authorize, and a small HTTP server on 127.0.0.1 stands in for its callback. Covers the
// consent page (/connect?request=…), approve and deny, the code exchange, login on the way,
// Settings → Connected apps with revoke, "via <app>" on Executions, hostile client metadata shown
// as text, and login/signup ignoring a next= that leaves the app. A screenshot of each page goes
// to $TOOLGATE_WEB_OAUTH_TEST_OUTPUT (default build/web-oauth-test-output).
//
// Run: node --test web/test/oauth.test.mjs   (ctest runs it as web_browser_oauth)
// Needs: build/bin (toolgate and the services), build/web, web/node_modules (npm ci),
// /usr/bin/chromium. TOOLGATE_BIN_DIR and CHROMIUM override where they are.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { binDir, startSystem } from '../../tests/node/toolgate_system.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const outDir = process.env.TOOLGATE_WEB_OAUTH_TEST_OUTPUT || path.join(repo, 'build', 'web-oauth-test-output');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch {
  throw new Error('playwright-core is not installed: run scripts/install-deps.sh (npm ci in web/)');
}

// Polls `probe` until it returns a truthy value or the deadline passes; a condition, not a sleep.
async function waitFor(what, probe, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => { setTimeout(resolve, 100); });
  }
}

// The client's redirect_uri: records every request and answers a small page.
async function startCallbackServer() {
  const hits = [];
  const server = http.createServer((req, res) => {
    hits.push(new URL(req.url, `http://${req.headers.host}`));
    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
    res.end('<!doctype html><title>Callback</title><p>The app received the answer.</p>');
  });
  await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  const { port } = server.address();
  return { hits, uri: `http://127.0.0.1:${port}/cb`, host: `127.0.0.1:${port}`, close: () => new Promise((r) => { server.close(r); }) };
}

// A PKCE pair (RFC 7636, S256).
function pkce() {
  const verifier = crypto.randomBytes(32).toString('base64url');
  return { verifier, challenge: crypto.createHash('sha256').update(verifier).digest('base64url') };
}

describe('connecting an app over OAuth, in Chromium', { timeout: 540000 }, () => {
  let system;
  let base;
  let callback;
  let profileDir;
  let context;
  let page;
  const user = { email: `oauth-${Date.now()}@example.com`, password: 'correct horse battery', org: 'OAuth Browser Org' };
  let client;        // the registered "Test App"
  let accessToken;
  let answeredRequest;  // a request id already answered
  const pageProblems = [];
  const dialogs = [];

  async function shot(name) {
    await page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
  }

  // Each step leaves a FAILED-<name>.png when it fails, to see what the page showed.
  function step(name, fn) {
    it(name, async () => {
      try {
        await fn();
      } catch (error) {
        if (page) await page.screenshot({ path: path.join(outDir, `FAILED-${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
        throw error;
      }
    });
  }

  const apiResponse = (method, prefix, status) => page.waitForResponse((r) => {
    const u = new URL(r.url());
    return r.request().method() === method && `${u.pathname}${u.search}`.startsWith(`/api/v1${prefix}`)
      && (status === undefined || r.status() === status);
  });
  // The management API with the browser's session.
  const manage = async (method, urlPath, data, headers = {}) => {
    const r = await page.request.fetch(`/api/v1${urlPath}`, { method, headers: { 'X-Toolgate-CSRF': '1', ...headers }, data });
    assert.ok(r.status() < 300, `${method} ${urlPath}: ${r.status()} ${await r.text()}`);
    return r.status() === 204 ? null : r.json();
  };

  async function register(clientName) {
    const r = await fetch(`${base}/oauth/register`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ client_name: clientName, redirect_uris: [callback.uri], token_endpoint_auth_method: 'none' }),
    });
    const text = await r.text();
    assert.equal(r.status, 201, text);
    const body = JSON.parse(text);
    assert.ok(body.client_id, text);
    return body;
  }

  // /oauth/authorize for the client, for the workspace (or `resource`), with a fresh PKCE pair.
  function authorizeUrl(clientId, { resource = `${base}/mcp`, challenge = pkce().challenge } = {}) {
    const q = new URLSearchParams({
      response_type: 'code', client_id: clientId, redirect_uri: callback.uri, code_challenge: challenge,
      code_challenge_method: 'S256', state: 'xyz', resource, scope: 'mcp:read mcp:invoke',
    });
    return `${base}/oauth/authorize?${q}`;
  }

  // Follows /oauth/authorize to the consent page; resolves to its request id.
  async function openConsent(url) {
    await page.goto(url);
    await page.waitForURL(/\/connect\?request=/);
    return new URL(page.url()).searchParams.get('request');
  }

  const callbackHit = (since) => waitFor('the client\'s callback', () => callback.hits[since], 30000);

  // A JSON-RPC message to the workspace MCP endpoint with the OAuth access token.
  const mcp = (body, session) => fetch(`${base}/mcp`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${accessToken}`, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      ...(session ? { 'Mcp-Session-Id': session } : {}) },
    body: JSON.stringify(body),
  });
  const initialize = () => mcp({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-browser-test', version: '1' } } });

  // Signs in on the login page that is open.
  async function logIn() {
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([apiResponse('POST', '/auth/login', 200), page.getByRole('button', { name: 'Log in' }).click()]);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
  }

  before(async () => {
    assert.ok(fs.existsSync(path.join(binDir, 'toolgate')), `${binDir}/toolgate not found: build first (scripts/build.sh)`);
    assert.ok(fs.existsSync(path.join(binDir, '..', 'web', 'index.html')), 'build/web not found: build the `web` target');
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.mkdirSync(outDir, { recursive: true });
    system = await startSystem('toolgate-web-oauth-');
    process.on('exit', () => { system?.stop(); });
    base = system.baseUrl;
    callback = await startCallbackServer();
    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-web-oauth-chromium-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 900 },
      baseURL: base,
    });
    page = await context.newPage();
    page.setDefaultTimeout(30000);
    page.on('pageerror', (error) => pageProblems.push(`uncaught: ${error.message}`));
    page.on('console', (msg) => {
      if (msg.type() !== 'error' || msg.text().startsWith('Failed to load resource')) return;
      // A logo the test answers with 404 fails to load by design; nothing else may be refused.
      if (/logo\.example/.test(msg.text())) return;
      pageProblems.push(msg.text());
    });
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      dialog.dismiss().catch(() => {});
    });
  });

  after(async () => {
    await context?.close().catch(() => {});
    await callback?.close();
    await system?.stop();
    if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  });

  step('sign-up ignores a next= that leaves the app', async () => {
    await page.goto(`/signup?next=${encodeURIComponent('https://evil.example/phish')}`);
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await page.getByLabel('Organization').fill(user.org);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([apiResponse('POST', '/auth/signup', 201), page.getByRole('button', { name: 'Create account' }).click()]);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    const at = new URL(page.url());
    assert.equal(at.origin, base);
    assert.equal(at.pathname, '/');
  });

  step('login honours next= only for a path of the app', async () => {
    for (const next of ['//evil.example/x', '/\\evil.example/x', 'https://evil.example/x', '/\t/evil.example/x', 'javascript:alert(1)']) {
      await context.clearCookies();
      await page.goto(`/login?next=${encodeURIComponent(next)}`);
      await page.getByRole('heading', { name: 'Log in' }).waitFor();
      // The way to sign up hands on no foreign next= either.
      assert.equal(await page.getByRole('link', { name: 'Create an account' }).getAttribute('href'), '/signup', next);
      await logIn();
      const at = new URL(page.url());
      assert.equal(at.origin, base, `next=${next}`);
      assert.equal(at.pathname, '/', `next=${next}`);
    }
    await context.clearCookies();
    await page.goto(`/login?next=${encodeURIComponent('/settings/apps?x=1')}`);
    assert.equal(await page.getByRole('link', { name: 'Create an account' }).getAttribute('href'), `/signup?next=${encodeURIComponent('/settings/apps?x=1')}`);
    await logIn();
    await page.getByRole('heading', { name: 'Connected apps', level: 2 }).waitFor();
    assert.equal(new URL(page.url()).search, '?x=1');
    await page.getByText('No connected apps.').waitFor();
    assert.deepEqual(dialogs, []);
  });

  step('a client registers itself, and the organization has a tool and a balance', async () => {
    client = await register('Test App');
    await manage('POST', '/billing/top-ups', { amount_micro_usd: 5000000 }, { 'Idempotency-Key': crypto.randomUUID() });
    const tool = await manage('POST', '/functions', { name: 'OAuth greeter', description: 'Says hi to connected apps.', category: 'Testing', visibility: 'private', price_micro_usd: 0 });
    await manage('POST', `/functions/${tool.function_id}/versions`, {
      version: '1.0.0', runtime: 'lua', compute_type: 'CPU', input_schema: { type: 'object' },
      code: 'function service_handler(event, context) return {statusCode = 200, body = {greeting = "Hi"}} end',
    });
  });

  step('the consent page shows who asks, where it returns and what for; Approve returns a code', async () => {
    const { verifier, challenge } = pkce();
    const requestId = await openConsent(authorizeUrl(client.client_id, { challenge }));
    const heading = page.locator('[data-consent="client-name"]');
    await heading.waitFor();
    assert.equal(await heading.innerText(), 'Test App wants to use your Toolgate account');
    assert.match(await page.locator('[data-consent="redirect-host"] strong').innerText(), /^127\.0\.0\.1(:\d+)?$/);
    assert.match(await page.locator('[data-consent="endpoint"]').innerText(), /whole workspace/);
    for (const scope of ['mcp:read', 'mcp:invoke']) {
      const item = page.locator(`[data-scope="${scope}"]`);
      assert.match(await item.innerText(), new RegExp(`^${scope}: \\S`), `${scope} is listed with its description`);
    }
    // A registered client's id is not an address: it is not shown as one.
    assert.equal(await page.locator('[data-consent="client-id"]').count(), 0);
    assert.equal(await page.getByLabel('Bill to organization').locator('option:checked').innerText(), user.org);
    await shot('01-consent');

    // A cap that is not an amount is refused next to its field, before anything is sent.
    await page.getByLabel('Spending cap (USD, optional)').fill('lots');
    await page.getByRole('button', { name: 'Approve' }).click();
    await page.locator('[data-field="spending_cap_micro_usd"] .field-error').waitFor();
    assert.equal(callback.hits.length, 0);

    await page.getByLabel('Spending cap (USD, optional)').fill('5');
    const since = callback.hits.length;
    const approved = apiResponse('POST', `/oauth/requests/${requestId}/approve`, 200);
    await page.getByRole('button', { name: 'Approve' }).click();
    assert.equal((await (await approved).request().postDataJSON()).spending_cap_micro_usd, 5000000);
    const hit = await callbackHit(since);
    await page.waitForURL((u) => u.href.startsWith(callback.uri));
    assert.equal(hit.searchParams.get('state'), 'xyz');
    assert.ok(hit.searchParams.get('code'), hit.href);
    assert.ok(hit.searchParams.get('iss'), `the answer names its issuer (RFC 9207): ${hit.href}`);
    answeredRequest = requestId;

    const token = await fetch(`${base}/oauth/token`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code: hit.searchParams.get('code'), redirect_uri: callback.uri,
        code_verifier: verifier, client_id: client.client_id }),
    });
    const tokenText = await token.text();
    assert.equal(token.status, 200, tokenText);
    accessToken = JSON.parse(tokenText).access_token;
    assert.ok(accessToken, tokenText);
  });

  step('the token opens the workspace MCP endpoint, and Executions says the call came via the app', async () => {
    const init = await initialize();
    assert.equal(init.status, 200, await init.clone().text());
    const session = init.headers.get('mcp-session-id');
    const list = await (await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} }, session)).json();
    const tool = (list.result?.tools || []).find((t) => /greeter/i.test(t.name));
    assert.ok(tool, JSON.stringify(list));
    const called = await (await mcp({ jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: tool.name, arguments: {} } }, session)).json();
    assert.equal(called.result?.isError, false, JSON.stringify(called));

    await page.goto('/executions');
    await page.getByRole('heading', { name: 'Executions', level: 1 }).waitFor();
    // Executions are recorded as they finish: reload until the call is listed.
    await waitFor('the call on Executions', async () => {
      const n = await page.locator('tr[data-execution-id]').count();
      if (!n) {
        await page.reload();
        await page.getByRole('heading', { name: 'Executions', level: 1 }).waitFor();
      }
      return n > 0;
    }, 30000);
    const badge = page.locator('tr[data-execution-id] [data-client="Test App"]').first();
    await badge.waitFor();
    assert.equal(await badge.innerText(), 'via Test App');
    await shot('02-executions-via-app');
  });

  step('not signed in, the consent page asks to log in first and then opens; Deny returns access_denied', async () => {
    await context.clearCookies();
    await page.goto(authorizeUrl(client.client_id));
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.match(page.url(), /\/login\?next=%2Fconnect%3Frequest%3D/);
    await page.locator('[data-note="connect"]').waitFor();
    await shot('03-login-to-connect');
    await logIn();
    const heading = page.locator('[data-consent="client-name"]');
    await heading.waitFor();
    assert.match(page.url(), /\/connect\?request=/);
    const requestId = new URL(page.url()).searchParams.get('request');
    const since = callback.hits.length;
    await Promise.all([apiResponse('POST', `/oauth/requests/${requestId}/deny`, 200), page.getByRole('button', { name: 'Deny' }).click()]);
    const hit = await callbackHit(since);
    assert.equal(hit.searchParams.get('error'), 'access_denied');
    assert.equal(hit.searchParams.get('state'), 'xyz');
    assert.ok(hit.searchParams.get('iss'), hit.href);
    assert.equal(hit.searchParams.get('code'), null);
  });

  step('an answered or unknown request says so, with no buttons and no redirect', async () => {
    for (const id of [answeredRequest, 'no-such-request']) {
      // Whatever the query string says, the page sends no one anywhere.
      await page.goto(`/connect?request=${encodeURIComponent(id)}&redirect_uri=${encodeURIComponent('https://evil.example/')}&redirect_to=${encodeURIComponent('https://evil.example/')}`);
      const notice = page.getByRole('alert').filter({ hasText: 'This connection request is no longer valid' });
      await notice.waitFor();
      assert.equal(await page.locator('main button').count(), 0, 'no Approve, Deny or Try again');
      assert.equal(new URL(page.url()).origin, base);
    }
    await shot('04-request-not-found');
  });

  step('a request for a tool the organization cannot use shows why, with no buttons', async () => {
    // Another organization's tools: a public one that is no MCP server (403), and a private one,
    // which does not exist for anyone else (404, and not "request no longer valid").
    const other = await system.signUp('Other Tools Org');
    const tools = {};
    for (const visibility of ['public', 'private']) {
      const tool = await other('POST', '/functions', { name: `Other ${visibility} thing`, description: 'Not an MCP server.', category: 'Testing', visibility, price_micro_usd: 0 });
      await other('POST', `/functions/${tool.function_id}/versions`, {
        version: '1.0.0', runtime: 'lua', compute_type: 'CPU', input_schema: { type: 'object' },
        code: 'function service_handler(event, context) return {statusCode = 200, body = {}} end',
      });
      tools[visibility] = tool.function_id;
    }
    for (const [visibility, status] of [['public', 403], ['private', 404]]) {
      const shown = apiResponse('GET', '/oauth/requests/');
      await openConsent(authorizeUrl(client.client_id, { resource: `${base}/mcp/functions/${tools[visibility]}` }));
      const answer = await shown;
      assert.equal(answer.status(), status, await answer.text());
      const problem = await answer.json();
      assert.notEqual(problem.code, 'oauth_request_not_found');
      const notice = page.getByRole('alert');
      await notice.getByText(problem.title).waitFor();
      if (problem.detail) await notice.getByText(problem.detail).waitFor();
      assert.equal(await page.getByText('This connection request is no longer valid').count(), 0);
      assert.equal(await page.locator('main button').count(), 0);
      await shot(`05-request-${visibility}-tool`);
    }
  });

  step('Connected apps lists the grant; Revoke stops its token', async () => {
    await page.goto('/settings/keys');
    await page.getByRole('link', { name: 'Connected apps' }).click();
    await page.getByRole('heading', { name: 'Connected apps', level: 2 }).waitFor();
    const row = page.locator('tr[data-grant-id]', { hasText: 'Test App' });
    await row.waitFor();
    assert.equal(await row.count(), 1, 'one grant: the denied request made none');
    const cells = await row.locator('td').allInnerTexts();
    assert.match(cells[0], /Test App\s+127\.0\.0\.1/);
    assert.equal(cells[1], 'Your whole workspace');
    assert.equal(cells[2], 'mcp:read, mcp:invoke');
    assert.equal(cells[3], user.org);
    assert.equal(cells[4], '$5.00');
    assert.match(cells[7], /^\d+$/);
    assert.match(cells[8], /^\$\d+\.\d+$/);
    assert.equal(cells[9], 'active');
    await shot('06-connected-apps');

    await row.getByRole('button', { name: 'Revoke Test App' }).click();
    await Promise.all([apiResponse('DELETE', '/oauth/grants/', 204), row.getByRole('button', { name: 'Confirm revoke' }).click()]);
    await page.getByRole('status').filter({ hasText: 'Test App is disconnected' }).waitFor();
    await row.getByText('revoked', { exact: true }).waitFor();
    assert.equal(await row.getByRole('button', { name: 'Revoke Test App' }).count(), 0);
    const refused = await initialize();
    assert.equal(refused.status, 401, await refused.text());
  });

  step('a hostile client name is shown as text, never as markup', async () => {
    const hostile = '<img src=x onerror=alert(1)>';
    const evil = await register(hostile);
    await openConsent(authorizeUrl(evil.client_id));
    const heading = page.locator('[data-consent="client-name"]');
    await heading.waitFor();
    assert.equal(await heading.innerText(), `${hostile} wants to use your Toolgate account`);
    assert.equal(await page.locator('img[src="x"]').count(), 0);
    assert.equal(await page.locator('.consent-head .client-logo.placeholder').innerText(), '<');
    await shot('07-hostile-name');
    assert.deepEqual(dialogs, []);
  });

  step('only an https logo is shown, without a Referer; an answer elsewhere than the redirect_uri is refused', async () => {
    // The API's answers are mocked here: the client metadata a hostile client could claim.
    let logo = null;
    const mockRequest = () => ({
      request_id: 'mock-request',
      client: { client_id: 'https://app.example/oauth/client.json', name: 'Mock App', logo_uri: logo, client_uri: 'javascript:alert(2)',
        redirect_uri: 'https://app.example/cb', redirect_host: 'app.example', kind: 'metadata_document' },
      resource: `${base}/mcp/functions/0b6f8e84-2a53-4d7e-9a70-5e6c61f3d2a1/1.0.0`,
      endpoint: { kind: 'function', function_id: '0b6f8e84-2a53-4d7e-9a70-5e6c61f3d2a1', function_name: 'weather', version: '1.0.0' },
      scopes: [{ name: 'mcp:read', description: 'See the tools, resources and prompts' }],
      organizations: [{ id: 'org-1', name: 'Mock Org' }],
      expires_at: new Date(Date.now() + 600000).toISOString(),
    });
    const pattern = '**/api/v1/oauth/requests/mock-request**';
    await page.route(pattern, (route) => {
      if (route.request().method() === 'GET') return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(mockRequest()) });
      // An answer that points somewhere other than the client's redirect_uri.
      return route.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify({ redirect_to: 'https://evil.example/cb?code=x' }) });
    });
    try {
      for (const bad of ['http://logo.example/a.png', 'javascript:alert(1)', 'data:image/svg+xml,<svg/>', '//logo.example/a.png']) {
        logo = bad;
        await page.goto('/connect?request=mock-request');
        await page.locator('[data-consent="client-name"]').waitFor();
        assert.equal(await page.locator('.consent img').count(), 0, `no image for ${bad}`);
        await page.locator('.consent-head .client-logo.placeholder', { hasText: 'M' }).waitFor();
      }
      // The logo host is answered here, so whether the image loads is the test's to say: a
      // real PNG stays (fetched without a Referer), a failing one gives way to the initial.
      const logoRequests = [];
      const onePixelPng = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
      await page.route('https://logo.example/**', (route) => {
        logoRequests.push(route.request());
        if (route.request().url().endsWith('/broken.png')) return route.fulfill({ status: 404, body: '' });
        return route.fulfill({ status: 200, contentType: 'image/png', body: onePixelPng });
      });
      logo = 'https://logo.example/broken.png';
      await page.goto('/connect?request=mock-request');
      await page.locator('[data-consent="client-name"]').waitFor();
      await page.locator('.consent-head .client-logo.placeholder', { hasText: 'M' }).waitFor();
      assert.equal(await page.locator('.consent img').count(), 0, 'a logo that fails to load is replaced');

      logo = 'https://logo.example/a.png';
      await page.goto('/connect?request=mock-request');
      await page.locator('[data-consent="client-name"]').waitFor();
      const img = page.locator('.consent-head img.client-logo');
      await page.waitForFunction(() => document.querySelector('.consent-head img.client-logo')?.complete === true);
      assert.equal(await img.evaluate((el) => el.naturalWidth), 1, 'the https logo loaded');
      assert.equal(await img.getAttribute('src'), 'https://logo.example/a.png');
      assert.equal(await img.getAttribute('referrerpolicy'), 'no-referrer');
      assert.equal(await img.getAttribute('alt'), 'Mock App logo');
      const fetched = logoRequests.find((r) => r.url() === 'https://logo.example/a.png');
      assert.ok(fetched, 'the logo was fetched');
      assert.equal((await fetched.allHeaders()).referer, undefined, 'no Referer goes to the logo host');
      await page.unroute('https://logo.example/**');
      // A metadata document's client id is an address, shown as such; the javascript: website is not a link.
      assert.equal(await page.locator('[data-consent="client-id"]').innerText(), 'https://app.example/oauth/client.json');
      assert.equal(await page.locator('.consent a[href^="javascript"]').count(), 0);
      assert.equal(await page.locator('[data-consent="endpoint"]').innerText(), 'Use the tool weather 1.0.0');
      await shot('08-consent-metadata-document');

      await Promise.all([page.waitForResponse((r) => r.url().endsWith('/mock-request/approve')), page.getByRole('button', { name: 'Approve' }).click()]);
      await page.getByText('Toolgate answered with an unexpected address').waitFor();
      assert.equal(new URL(page.url()).origin, base, 'the browser stays');
      await Promise.all([page.waitForResponse((r) => r.url().endsWith('/mock-request/deny')), page.getByRole('button', { name: 'Deny' }).click()]);
      await page.getByText('Toolgate answered with an unexpected address').waitFor();
      assert.equal(new URL(page.url()).origin, base, 'the browser stays');
    } finally {
      await page.unroute(pattern);
    }
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(pageProblems, []);
    assert.deepEqual(dialogs, []);
  });
});
