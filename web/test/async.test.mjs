// Asynchronous calls in the web app, in a real browser (Debian's Chromium driven by
// playwright-core), against a system of its own (tests/node/toolgate_system.mjs starts `toolgate
// up` in a fresh data directory): the webhook secret made and rotated in Settings → Webhooks
// (shown once, never again), and on Executions an asynchronous call opened by its ID, its status
// while it runs, Cancel, its result, and its callback's attempts (a receiver on the loopback
// that fails once, then accepts, and whose deliveries are signed with the secret the page
// showed). A screenshot of each page goes to $TOOLGATE_WEB_ASYNC_TEST_OUTPUT (default
// build/web-async-test-output).
//
// Run: node --test web/test/async.test.mjs
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
const outDir = process.env.TOOLGATE_WEB_ASYNC_TEST_OUTPUT || path.join(repo, 'build', 'web-async-test-output');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

let chromium;
try {
  ({ chromium } = await import('playwright-core'));
} catch {
  throw new Error('playwright-core is not installed: run scripts/install-deps.sh (npm ci in web/)');
}

assert.ok(fs.existsSync(path.join(binDir, 'toolgate')), `${binDir}/toolgate not found: build first (scripts/build.sh)`);
assert.ok(fs.existsSync(path.join(binDir, '..', 'web', 'index.html')), 'build/web not found: build the `web` target');
fs.rmSync(outDir, { recursive: true, force: true });
fs.mkdirSync(outDir, { recursive: true });

const inTwoMonths = () => new Date(Date.now() + 60 * 86400000).toISOString().slice(0, 10) + 'T23:59:59Z';

// A callback receiver on the loopback: answers 500 to the first delivery, 204 to the others,
// and keeps each one's headers and raw body.
async function startReceiver() {
  const deliveries = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      deliveries.push({ headers: req.headers, body });
      res.writeHead(deliveries.length === 1 ? 500 : 204);
      res.end();
    });
  });
  await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  return {
    url: `http://127.0.0.1:${server.address().port}/toolgate-callback`,
    deliveries,
    close: () => new Promise((resolve) => { server.close(resolve); }),
  };
}

// Whether a delivery is signed with `secret` ("whsec_..."), the Standard Webhooks way: some
// "v1,<base64>" of webhook-signature is HMAC-SHA256 over "<id>.<timestamp>.<body>".
function signedWith(delivery, secret) {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const id = delivery.headers['webhook-id'];
  const timestamp = delivery.headers['webhook-timestamp'];
  const expected = `v1,${crypto.createHmac('sha256', key).update(`${id}.${timestamp}.${delivery.body}`).digest('base64')}`;
  return (delivery.headers['webhook-signature'] || '').split(' ').includes(expected);
}

describe('asynchronous calls and the webhook secret, in Chromium', { timeout: 600000 }, () => {
  let system;
  let receiver;
  let member;
  let key;
  let echoId;
  let endlessId;
  let context;
  let page;
  let profileDir;
  let secretShown = '';  // the secret the page showed last, which signs the callbacks
  const problems = [];

  const shot = (name) => page.screenshot({ path: path.join(outDir, `${name}.png`), fullPage: true });
  const step = (name, fn) => it(name, async () => {
    try {
      await fn();
    } catch (error) {
      await page?.screenshot({ path: path.join(outDir, `FAILED-${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
      throw error;
    }
  });

  // One invoke with the API key: {status, body}.
  const invoke = async (functionId, headers = {}) => {
    const r = await fetch(`${system.baseUrl}/api/v1/functions/${functionId}/invoke`, {
      method: 'POST', headers: { Authorization: key, 'Content-Type': 'application/json', ...headers }, body: '{"event":{"city":"Paris"}}',
    });
    return { status: r.status, body: await r.json() };
  };

  before(async () => {
    receiver = await startReceiver();
    // Callbacks go to the receiver on the loopback: the operator allows that network, as it
    // would an internal one (the platform's own ports stay refused).
    system = await startSystem('toolgate-web-async-', { extraEnv: { TOOLGATE_EGRESS_ALLOW_CIDR: '127.0.0.1/32' } });
    process.on('exit', () => { system?.stop(); });
    member = await system.signUp('Async Org');
    await member('POST', '/billing/top-ups', { amount_micro_usd: 5000000 });
    const publish = async (name, code, timeoutMs) => {
      const tool = await member('POST', '/functions', { name, description: `${name} for the browser test.`, category: 'Testing', visibility: 'private', price_micro_usd: 0 });
      await member('POST', `/functions/${tool.function_id}/versions`, {
        version: '1.0.0', runtime: 'lua', compute_type: 'CPU', input_schema: { type: 'object' }, timeout_ms: timeoutMs, memory_mb: 128, code,
      });
      return tool.function_id;
    };
    echoId = await publish('Echo', 'function service_handler(event, context) return {statusCode = 200, body = event} end', 1000);
    // Runs until it is stopped: long enough that only Cancel ends it.
    endlessId = await publish('Endless', 'function service_handler(event, context) while true do end end', 60000);
    key = (await member('POST', '/api-keys', { name: 'async caller', expires_at: inTwoMonths(), scopes: ['invoke'] })).key;

    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-web-async-'));
    context = await chromium.launchPersistentContext(profileDir, {
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run'],
      viewport: { width: 1280, height: 900 },
      baseURL: system.baseUrl,
    });
    page = await context.newPage();
    page.setDefaultTimeout(30000);
    page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
    page.on('console', (msg) => {
      // A 404 of the unknown execution below is expected; everything else is a problem.
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(msg.text());
    });
    const [cookieName, ...value] = member.cookie.split('=');
    await context.addCookies([{ name: cookieName, value: value.join('='), url: system.baseUrl }]);
  });

  after(async () => {
    await context?.close().catch(() => {});
    if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
    await system?.stop();
    await receiver?.close();
  });

  step('makes the webhook secret in Settings, shows it once, and rotates it after a confirmation', async () => {
    await page.goto('/settings/webhooks');
    await page.getByRole('heading', { name: 'Webhooks', level: 2 }).waitFor();
    await page.locator('[data-webhook-secret-state="none"]').waitFor();
    await page.getByRole('button', { name: 'Make a webhook secret' }).click();
    const notice = page.getByRole('alert', { name: 'New webhook secret' });
    const input = notice.getByRole('textbox', { name: 'The new webhook secret' });
    await input.waitFor();
    const first = await input.inputValue();
    assert.match(first, /^whsec_[A-Za-z0-9+/=_-]{40,}$/, 'whsec_ and the base64 of 32 bytes');
    await notice.getByRole('button', { name: 'Copy webhook secret' }).waitFor();
    await notice.getByText('this is the only time Toolgate shows it').waitFor();
    // The page shows when it was made as the API says, and the API never gives the secret again.
    const made = page.locator('[data-webhook-secret-state="made"]');
    await made.waitFor();
    const shown = await member('GET', '/webhooks/secret');
    assert.equal(shown.secret, undefined);
    assert.equal(await made.locator('[data-created-at]').getAttribute('data-created-at'), shown.created_at);
    assert.equal(shown.previous_valid_until, null);
    await shot('01-webhook-secret-made');

    // Once stored (or after a reload) it is gone from the page.
    await notice.getByRole('button', { name: 'I have stored it' }).click();
    assert.equal(await page.getByRole('alert', { name: 'New webhook secret' }).count(), 0);
    await page.reload();
    await made.waitFor();
    assert.equal(await page.getByText(first).count(), 0, 'the secret is not shown again');
    assert.equal(await page.locator('input.key-value').count(), 0);

    // Rotating asks first; Cancel leaves it as it was.
    let posts = 0;
    page.on('request', (r) => { if (r.method() === 'POST' && r.url().endsWith('/api/v1/webhooks/secret')) posts += 1; });
    await page.getByRole('button', { name: 'Rotate the webhook secret' }).click();
    await page.getByRole('button', { name: 'Cancel', exact: true }).click();
    assert.equal(posts, 0);
    await page.getByRole('button', { name: 'Rotate the webhook secret' }).click();
    await page.getByRole('button', { name: 'Confirm rotate' }).click();
    const second = await page.getByRole('alert', { name: 'New webhook secret' }).getByRole('textbox', { name: 'The new webhook secret' }).inputValue();
    assert.match(second, /^whsec_/);
    assert.notEqual(second, first);
    await page.getByRole('alert', { name: 'New webhook secret' }).getByText('The previous secret also signs until').waitFor();
    const rotated = await member('GET', '/webhooks/secret');
    assert.ok(rotated.previous_valid_until, 'the previous secret signs for a while');
    await made.locator(`[data-previous-valid-until="${rotated.previous_valid_until}"]`).waitFor();
    secretShown = second;
    await shot('02-webhook-secret-rotated');
  });

  step('opens an asynchronous call by its ID: its status while it runs, Cancel, its result and callback attempts', async () => {
    const accepted = await invoke(endlessId, { Prefer: 'respond-async', 'X-Callback-Url': receiver.url });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    const id = accepted.body.execution_id;
    assert.equal(accepted.body.status, 'queued');

    await page.goto('/executions');
    await page.getByRole('heading', { name: 'Executions', level: 1 }).waitFor();
    const form = page.getByRole('form', { name: 'Open an execution' });
    await form.getByLabel('Execution ID').fill(id);
    await form.getByRole('button', { name: 'Open' }).click();
    const opened = page.getByRole('region', { name: 'Execution', exact: true });
    await opened.locator('[data-execution-status]').waitFor();
    assert.match(page.url(), new RegExp(`[?&]execution=${id}`), 'the address names it');
    // Not yet in the list, which holds finished runs; the view reads it again by itself.
    assert.equal(await page.locator(`tr[data-execution-id="${id}"]`).count(), 0);
    await opened.locator('[data-execution-status="running"]').waitFor();
    await opened.getByText('Asynchronous', { exact: true }).waitFor();
    await opened.locator('[data-callback="pending"]').waitFor();
    await shot('03-execution-running');

    await opened.getByRole('button', { name: `Cancel execution ${id}` }).click();
    // Stopped and settled cancelled, with the result a cancelled handler gets.
    await opened.locator('[data-execution-status="cancelled"]').waitFor();
    assert.equal(await opened.getByRole('button', { name: `Cancel execution ${id}` }).count(), 0, 'no Cancel once it has finished');
    await opened.locator('[data-execution-result]').getByText('499').waitFor();
    await opened.locator('[data-execution-result]').getByText('Cancelled').waitFor();
    const status = await member('GET', `/executions/${id}`);
    assert.equal(status.status, 'cancelled');

    // The callback: the receiver's 500, then its 204, each a row; both signed with the secret the
    // page showed.
    await opened.locator('[data-callback="delivered"]').waitFor({ timeout: 60000 });
    const rows = opened.getByRole('region', { name: 'Callback attempts' }).locator('tr[data-attempt]');
    assert.equal(await rows.count(), 2);
    const cells = async (n) => (await rows.nth(n).locator('td').allInnerTexts()).map((t) => t.trim());
    const [a1, a2] = [await cells(0), await cells(1)];
    assert.deepEqual([a1[0], a1[2]], ['1', '500']);
    assert.deepEqual([a2[0], a2[2], a2[3]], ['2', '204', 'delivered']);
    assert.match(a1[1], /\d{2}:\d{2}:\d{2} UTC$/, 'the attempt\'s time, to the second');
    assert.equal(receiver.deliveries.length, 2);
    for (const d of receiver.deliveries) {
      assert.equal(d.headers['webhook-id'], id);
      assert.ok(signedWith(d, secretShown), `signed with the secret the page showed: ${d.headers['webhook-signature']}`);
      assert.equal(JSON.parse(d.body).status, 'cancelled');
    }
    await shot('04-execution-cancelled');

    // A reload opens it again from the address.
    await page.reload();
    await page.getByRole('region', { name: 'Execution', exact: true }).locator('[data-execution-status="cancelled"]').waitFor();
  });

  step('a finished synchronous call\'s detail says it succeeded, from the list and by its ID', async () => {
    const done = await invoke(echoId);
    assert.equal(done.status, 200, JSON.stringify(done.body));
    const id = done.body.summary.execution_id;
    await page.goto('/executions');
    const row = page.locator(`tr[data-execution-id="${id}"]`);
    await row.getByRole('button', { name: `Details of execution ${id}` }).click();
    const detail = page.locator('tr.detail-row');
    await detail.locator('[data-execution-status="succeeded"]').waitFor();
    await detail.getByText('Synchronous', { exact: true }).waitFor();
    await detail.getByText('Trace ID').waitFor();
    assert.equal(await detail.getByRole('button', { name: /^Cancel execution/ }).count(), 0);

    const form = page.getByRole('form', { name: 'Open an execution' });
    await form.getByLabel('Execution ID').fill(id);
    await form.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('region', { name: 'Execution', exact: true }).locator('[data-execution-status="succeeded"]').waitFor();
    await shot('05-execution-succeeded');

    // An ID that names nothing says so; an empty one is refused at its field.
    await form.getByLabel('Execution ID').fill('00000000-0000-4000-8000-000000000000');
    await form.getByRole('button', { name: 'Open' }).click();
    await page.getByRole('region', { name: 'Execution', exact: true }).locator('.notice.error').waitFor();
    await form.getByLabel('Execution ID').fill('');
    await form.getByRole('button', { name: 'Open' }).click();
    await form.locator('[data-field="execution_id"] .field-error', { hasText: 'is required' }).waitFor();
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(problems, []);
  });
});
