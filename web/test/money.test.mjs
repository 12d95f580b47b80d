// Money in the web app, in a real browser (Debian's Chromium driven by playwright-core): spending
// limits per API key and per organization, the banner that warns at 80 % and alerts at 100 %,
// the 402 budget_exceeded in Try it, Top up in each funding mode, and the earnings statement.
// Each funding mode is a system of its own (tests/node/toolgate_system.mjs starts `toolgate up`
// in a fresh data directory): play money (--dev-funding) and grants (--funding grants).
// A screenshot of each page goes to $TOOLGATE_WEB_MONEY_TEST_OUTPUT (default
// build/web-money-test-output).
//
// Run: node --test web/test/money.test.mjs   (ctest runs it as web_browser_money)
// Needs: build/bin (toolgate and the services), build/web, web/node_modules (npm ci),
// /usr/bin/chromium. TOOLGATE_BIN_DIR and CHROMIUM override where they are.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { binDir, startSystem, toolgate } from '../../tests/node/toolgate_system.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const outDir = process.env.TOOLGATE_WEB_MONEY_TEST_OUTPUT || path.join(repo, 'build', 'web-money-test-output');
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

// "$0.025" as the app writes micro-USD (format.js usd()).
function usd(micro) {
  const n = Number(micro);
  const whole = Math.floor(Math.abs(n) / 1e6);
  let frac = String(Math.abs(n) % 1e6).padStart(6, '0').replace(/0+$/, '');
  if (frac.length < 2) frac = frac.padEnd(2, '0');
  return `${n < 0 ? '-' : ''}$${whole.toLocaleString('en-US')}.${frac}`;
}

const inTwoMonths = () => new Date(Date.now() + 60 * 86400000).toISOString().slice(0, 10) + 'T23:59:59Z';

// A started system with a Chromium profile of its own, and the helpers every suite's steps use.
// signedInAs(member) puts the member's session cookie in the browser.
async function openBrowser(system, name) {
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), `toolgate-web-money-${name}-`));
  const context = await chromium.launchPersistentContext(profileDir, {
    executablePath: chromiumPath,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
      '--disable-sync', '--no-first-run'],
    viewport: { width: 1280, height: 900 },
    baseURL: system.baseUrl,
    acceptDownloads: true,
  });
  const page = await context.newPage();
  page.setDefaultTimeout(30000);
  const problems = [];
  page.on('pageerror', (error) => problems.push(`uncaught: ${error.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) problems.push(msg.text());
  });
  return {
    context,
    page,
    problems,
    async signedInAs(member) {
      await context.clearCookies();
      const [cookieName, ...value] = member.cookie.split('=');
      await context.addCookies([{ name: cookieName, value: value.join('='), url: system.baseUrl }]);
    },
    async close() {
      await context.close().catch(() => {});
      fs.rmSync(profileDir, { recursive: true, force: true });
    },
  };
}

// node:test `it`s that leave FAILED-<name>.png when they fail, and a screenshot helper.
function stepper(prefix, browser) {
  const shot = (name) => browser().page.screenshot({ path: path.join(outDir, `${prefix}-${name}.png`), fullPage: true });
  const step = (name, fn) => it(name, async () => {
    try {
      await fn();
    } catch (error) {
      await browser()?.page.screenshot({ path: path.join(outDir, `FAILED-${prefix}-${name.replace(/\W+/g, '-')}.png`), fullPage: true }).catch(() => {});
      throw error;
    }
  });
  return { shot, step };
}

// The next answer to `method` on a path (with its query) starting with /api/v1<prefix>.
const apiResponse = (page, method, prefix, status) => page.waitForResponse((r) => {
  const u = new URL(r.url());
  return r.request().method() === method && `${u.pathname}${u.search}`.startsWith(`/api/v1${prefix}`)
    && (status === undefined || r.status() === status);
});

// A request with a member's session that may fail: {status, body}.
async function raw(system, member, method, urlPath, body, headers = {}) {
  const r = await fetch(`${system.baseUrl}/api/v1${urlPath}`, {
    method,
    headers: { cookie: member.cookie, 'content-type': 'application/json', 'x-toolgate-csrf': '1', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await r.text();
  let parsed = text;
  try { parsed = JSON.parse(text); } catch { /* text */ }
  return { status: r.status, body: parsed, headers: r.headers };
}

// A platform operator of the system, made on its database as an operator would
// (`toolgate admin create`) and signed in: {email, cookie}.
async function operatorOf(system) {
  const passwordFile = path.join(system.dataDir, 'operator-password');
  const password = 'operator password long enough';
  fs.writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  const email = `operator-${Date.now()}@example.com`;
  execFileSync(toolgate, ['admin', 'create', '--email', email, '--password-file', passwordFile, '--data-dir', system.dataDir], { stdio: 'pipe' });
  const login = await fetch(`${system.baseUrl}/api/v1/auth/login`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email, password }),
  });
  assert.equal(login.status, 200, await login.text());
  return { email, cookie: login.headers.get('set-cookie').split(';')[0] };
}

describe('money with play money (demo funding), in Chromium', { timeout: 600000 }, () => {
  let system;
  let browser;
  let publisher;   // the organization whose paid tool is called
  let caller;      // the organization the browser signs in as
  let toolId;
  let callerKey;   // {id, key, name}
  const PRICE = 10000;  // $0.01 a call
  const { shot, step } = stepper('demo', () => browser);

  // One call of the paid tool with the caller's key: {status, body}.
  const invokeWithKey = async () => {
    const r = await fetch(`${system.baseUrl}/api/v1/functions/${toolId}/invoke`, {
      method: 'POST', headers: { Authorization: callerKey.key, 'Content-Type': 'application/json' }, body: '{"event":{}}',
    });
    return { status: r.status, body: await r.json() };
  };

  before(async () => {
    system = await startSystem('toolgate-web-money-demo-');
    process.on('exit', () => { system?.stop(); });
    publisher = await system.signUp('Money Publisher');
    const tool = await publisher('POST', '/functions', { name: 'Paid echo', description: 'Costs a cent a call.', category: 'Testing', visibility: 'public', price_micro_usd: PRICE });
    toolId = tool.function_id;
    await publisher('POST', `/functions/${toolId}/versions`, {
      version: '1.0.0', runtime: 'lua', compute_type: 'CPU', input_schema: { type: 'object' }, timeout_ms: 1000, memory_mb: 128,
      code: 'function service_handler(event, context) return {statusCode = 200, body = "paid"} end',
    });
    caller = await system.signUp('Money Caller');
    await caller('POST', '/workspace/tools', { function_id: toolId });
    callerKey = await caller('POST', '/api-keys', { name: 'caller', expires_at: inTwoMonths(), scopes: ['invoke'] });
    browser = await openBrowser(system, 'demo');
    await browser.signedInAs(caller);
  });

  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  step('tops up with play money', async () => {
    const { page } = browser;
    await page.goto('/settings/billing');
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    await page.locator('[data-funding="demo"]', { hasText: 'play money' }).waitFor();
    const form = page.getByRole('form', { name: 'Top up' });
    await form.getByRole('heading', { name: 'Top up with play money' }).waitFor();
    await form.getByText('Free play money').waitFor();
    await page.getByLabel('Amount (USD)').fill('1');
    await Promise.all([apiResponse(page, 'POST', '/billing/top-ups', 201), form.getByRole('button', { name: 'Top up', exact: true }).click()]);
    await page.locator('[data-money="available"] .amount', { hasText: '$1.00' }).waitFor();
    await page.locator('table tr[data-type="top_up"]').first().waitFor();
    await shot('01-top-up');
  });

  step('sets a key\'s limits, with clear messages for bad amounts, and clears one', async () => {
    const { page } = browser;
    await page.goto('/settings/keys');
    const row = page.locator(`tr[data-key-id="${callerKey.id}"]`);
    await row.locator('[data-limits]', { hasText: 'No limits' }).waitFor();
    await row.getByRole('button', { name: 'Spending limits of key caller' }).click();
    const form = page.getByRole('form', { name: 'Spending limits of key caller' });
    const daily = form.getByLabel('Daily limit (USD)');
    const monthly = form.getByLabel('Monthly limit (USD)');
    // Bad amounts are named by their field and nothing is sent.
    let puts = 0;
    page.on('request', (r) => { if (r.method() === 'PUT' && r.url().includes('/budget')) puts += 1; });
    await daily.fill('0.0000001');
    await monthly.fill('ten');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await form.locator('[data-field="daily_micro_usd"] .field-error', { hasText: 'more than six decimals' }).waitFor();
    await form.locator('[data-field="monthly_micro_usd"] .field-error', { hasText: 'must be an amount in USD' }).waitFor();
    assert.equal(await daily.getAttribute('aria-invalid'), 'true');
    await daily.fill('0');
    await monthly.fill('');
    await form.getByRole('button', { name: 'Save limits' }).click();
    await form.locator('[data-field="daily_micro_usd"] .field-error', { hasText: 'must be more than $0' }).waitFor();
    assert.equal(puts, 0, 'no bad amount reached the API');
    await shot('02-key-limit-errors');

    // 0.1 + 0.2 style amounts are exact: $0.025 is 25,000 micro-USD, $12.34 is 12,340,000.
    await daily.fill('0.025');
    await monthly.fill('12.34');
    await Promise.all([apiResponse(page, 'PUT', `/api-keys/${callerKey.id}/budget`, 200), form.getByRole('button', { name: 'Save limits' }).click()]);
    await row.locator('[data-limits]', { hasText: 'Daily: $0.00 of $0.025 (0 %) · Monthly: $0.00 of $12.34 (0 %)' }).waitFor();
    let budget = await caller('GET', `/api-keys/${callerKey.id}/budget`);
    assert.equal(budget.daily_micro_usd, 25000);
    assert.equal(budget.monthly_micro_usd, 12340000);
    // Empty is no limit.
    await monthly.fill('');
    await Promise.all([apiResponse(page, 'PUT', `/api-keys/${callerKey.id}/budget`, 200), form.getByRole('button', { name: 'Save limits' }).click()]);
    await row.locator('[data-limits]', { hasText: 'Daily: $0.00 of $0.025 (0 %)' }).waitFor();
    budget = await caller('GET', `/api-keys/${callerKey.id}/budget`);
    assert.equal(budget.daily_micro_usd, 25000);
    assert.equal(budget.monthly_micro_usd, null);
    await form.locator('li[data-period="monthly"]', { hasText: 'Monthly: no limit' }).waitFor();
    await shot('03-key-limits-set');
  });

  step('warns on every page once a key has spent 80 % of its daily limit, and alerts at 100 %', async () => {
    const { page } = browser;
    await page.goto('/marketplace');
    await page.getByRole('heading', { name: 'Marketplace', level: 1 }).waitFor();
    assert.equal(await page.locator('[data-banner="budget"]').count(), 0, 'no banner below 80 %');
    // Two calls of a cent each: 20,000-odd micro-USD of 25,000, just past 80 %.
    for (let i = 0; i < 2; i += 1) assert.equal((await invokeWithKey()).status, 200);
    const spent = (await caller('GET', `/api-keys/${callerKey.id}/budget`)).spent_today_micro_usd;
    assert.ok(spent >= 20000 && spent < 25000, `spent ${spent}`);
    // A third would pass the limit: refused, naming the limit and when it resets.
    const refused = await invokeWithKey();
    assert.equal(refused.status, 402);
    assert.equal(refused.body.code, 'budget_exceeded');
    assert.match(refused.body.detail, /daily spending limit of \$0\.025/);

    await page.goto('/marketplace');
    const banner = page.locator('[data-banner="budget"]');
    await banner.waitFor();
    assert.equal(await banner.getAttribute('role'), 'status');
    assert.equal(await banner.getAttribute('data-level'), 'warn');
    const text = await banner.innerText();
    assert.match(text, /API key “caller” \(.+…\) daily spending limit of \$0\.025 is at 8\d %/);
    // The next UTC midnight.
    const tomorrow = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate() + 1));
    const reset = /resets at (\d{1,2}) \w{3,4} (\d{4}), 00:00 UTC/.exec(text);
    assert.ok(reset, `${text} names the reset`);
    assert.deepEqual([Number(reset[1]), Number(reset[2])], [tomorrow.getUTCDate(), tomorrow.getUTCFullYear()]);
    await shot('04-banner-warning');
    // Another page shows it too.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    await page.locator('[data-banner="budget"][data-level="warn"]').waitFor();

    // Lowered to what was spent, the limit is reached: an alert.
    await page.goto('/settings/keys');
    await page.locator(`tr[data-key-id="${callerKey.id}"]`).getByRole('button', { name: 'Spending limits of key caller' }).click();
    const form = page.getByRole('form', { name: 'Spending limits of key caller' });
    await form.locator('li[data-period="daily"][data-level="warn"]').waitFor();
    await form.getByLabel('Daily limit (USD)').fill('0.02');
    await Promise.all([apiResponse(page, 'PUT', `/api-keys/${callerKey.id}/budget`, 200), form.getByRole('button', { name: 'Save limits' }).click()]);
    const reached = page.locator('[data-banner="budget"][data-level="reached"]');
    await reached.waitFor();
    assert.equal(await reached.getAttribute('role'), 'alert');
    assert.match(await reached.innerText(), /daily spending limit of \$0\.02 is reached/);
    await form.locator('li[data-period="daily"][data-level="reached"]').waitFor();
    await shot('05-banner-reached');
  });

  step('sets the organization\'s limit on the billing page; Try it shows the 402 with its reset', async () => {
    const { page } = browser;
    await page.goto('/settings/billing');
    const panel = page.locator('[data-limits="organization"]');
    const form = panel.getByRole('form', { name: 'Spending limits of the organization' });
    await form.getByLabel('Daily limit (USD)').fill('0.000001');
    await Promise.all([apiResponse(page, 'PUT', '/billing/budget', 200), form.getByRole('button', { name: 'Save limits' }).click()]);
    await form.locator('li[data-period="daily"][data-level="reached"]').waitFor();
    assert.equal((await caller('GET', '/billing/budget')).daily_micro_usd, 1);
    await page.locator('[data-banner="budget"]', { hasText: 'The organization’s daily spending limit of $0.000001 is reached' }).waitFor();
    await shot('06-org-limit');

    await page.goto(`/tools/${toolId}?tab=try`);
    await Promise.all([apiResponse(page, 'POST', `/functions/${toolId}`, 402), page.getByRole('button', { name: 'Run' }).click()]);
    const notice = page.locator('[data-result="problem"][data-code="budget_exceeded"]');
    await notice.waitFor();
    assert.equal(await notice.getAttribute('role'), 'alert');
    const reset = notice.locator('[data-budget="reset"]');
    assert.match(await reset.innerText(), /^Stopped by your organization’s daily spending limit of \$0\.000001\. It resets at \d{1,2} \w{3,4} \d{4}, 00:00 UTC; nothing was charged\.$/);
    await notice.getByRole('link', { name: 'Review spending limits' }).waitFor();
    await shot('07-try-it-budget-exceeded');

    // Both limits removed: the organization leaves the banner.
    await page.goto('/settings/billing');
    await Promise.all([apiResponse(page, 'PUT', '/billing/budget', 200),
      page.locator('[data-limits="organization"]').getByRole('button', { name: 'Remove both limits' }).click()]);
    const after = await caller('GET', '/billing/budget');
    assert.equal(after.daily_micro_usd, null);
    assert.equal(after.monthly_micro_usd, null);
    await waitFor('the banner to drop the organization', async () => !(await page.locator('[data-banner="budget"]').innerText()).includes('organization’s'), 10000);
  });

  step('the publisher\'s earnings page shows per day, per tool, payouts and payable as the API does, and a CSV', async () => {
    const { page } = browser;
    // An operator pays part of the earnings out.
    const operator = await operatorOf(system);
    const publisherOrg = (await publisher('GET', '/me')).organization.id;
    const payout = await raw(system, operator, 'POST', `/admin/organizations/${publisherOrg}/payouts`, { amount_micro_usd: 5000, reference: 'SEPA-TEST-1' });
    assert.equal(payout.status, 201, JSON.stringify(payout.body));

    await browser.signedInAs(publisher);
    const [answer] = await Promise.all([apiResponse(page, 'GET', '/billing/earnings', 200), page.goto('/settings/earnings')]);
    await page.getByRole('heading', { name: 'Earnings', level: 2 }).waitFor();
    // The same statement read independently, for the period the page asked for.
    const asked = new URL(answer.url());
    const statement = await publisher('GET', `/billing/earnings${asked.search}`);
    assert.equal(statement.totals.calls, 2, JSON.stringify(statement));
    assert.equal(statement.totals.gross_micro_usd, 2 * PRICE);
    const net = statement.totals.net_micro_usd;
    assert.equal(net, 2 * PRICE * 0.8, 'the fees less the 20 % commission');
    assert.equal(await page.locator('[data-money="earned"] .amount').innerText(), usd(net));
    assert.equal(await page.locator('[data-money="paid-out"] .amount').innerText(), usd(5000));
    assert.equal(await page.locator('[data-money="payable"] .amount').innerText(), usd(statement.payable_micro_usd));
    assert.equal(statement.payable_micro_usd, net - 5000);
    const today = new Date().toISOString().slice(0, 10);
    const dayRow = page.getByRole('region', { name: 'Earnings per day' }).locator(`tr[data-day="${today}"]`);
    assert.deepEqual((await dayRow.locator('td').allInnerTexts()).slice(1), ['2', usd(2 * PRICE), usd(2 * PRICE - net), usd(net)]);
    const toolRow = page.getByRole('region', { name: 'Earnings per tool' }).locator(`tr[data-function-id="${toolId}"]`);
    await toolRow.getByRole('link', { name: 'Paid echo' }).waitFor();
    assert.equal(await toolRow.locator('[data-net]').innerText(), usd(net));
    const payoutRow = page.getByRole('region', { name: 'Payouts' }).locator('tr[data-payout-id]');
    assert.deepEqual((await payoutRow.locator('td').allInnerTexts()).slice(1), [usd(5000), 'SEPA-TEST-1']);
    await shot('08-earnings');

    // Download CSV gives the API's CSV statement of the same period.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download CSV' }).click()]);
    const csv = fs.readFileSync(await download.path(), 'utf8');
    const fromApi = await fetch(`${system.baseUrl}/api/v1/billing/earnings${asked.search}`, { headers: { cookie: publisher.cookie, Accept: 'text/csv' } });
    assert.equal(fromApi.status, 200);
    assert.equal(csv, await fromApi.text());
    assert.match(csv, /^date,function_id,function_name,calls,gross_micro_usd,commission_micro_usd,net_micro_usd\r\n/);
    assert.ok(csv.includes(`${today},${toolId},Paid echo,2,${2 * PRICE},${2 * PRICE - net},${net}`), csv);
    assert.match(download.suggestedFilename(), /\.csv$/);

    // A period the API refuses (over 366 days) is named at its field.
    await Promise.all([apiResponse(page, 'GET', '/billing/earnings', 400), page.goto('/settings/earnings?from=2024-01-01&to=2026-11-30')]);
    await page.getByRole('form', { name: 'Period' }).locator('.field-error').first().waitFor();
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(browser.problems, []);
  });
});

describe('money with operators\' grants (grants funding), in Chromium', { timeout: 600000 }, () => {
  let system;
  let browser;
  let member;
  const reason = 'Pilot credit <b>for</b> the browser test';
  const { shot, step } = stepper('grants', () => browser);

  before(async () => {
    system = await startSystem('toolgate-web-money-grants-', { flags: ['--funding', 'grants'] });
    process.on('exit', () => { system?.stop(); });
    member = await system.signUp('Granted Org');
    // An operator grants credit with a reason.
    const operator = await operatorOf(system);
    const me = await member('GET', '/me');
    const granted = await raw(system, operator, 'POST', `/admin/organizations/${me.organization.id}/credits`, { amount_micro_usd: 2500000, reason });
    assert.equal(granted.status, 201, JSON.stringify(granted.body));
    browser = await openBrowser(system, 'grants');
    await browser.signedInAs(member);
  });

  after(async () => {
    await browser?.close();
    await system?.stop();
  });

  step('shows no top-up form, says the operator grants credit, and lists the grant with its reason', async () => {
    const { page } = browser;
    await page.goto('/settings/billing');
    await page.locator('[data-funding="grants"]', { hasText: 'the operator of this system' }).waitFor();
    await page.locator('[data-money="available"] .amount', { hasText: '$2.50' }).waitFor();
    assert.equal(await page.getByRole('form', { name: 'Top up' }).count(), 0, 'no top-up form');
    assert.equal(await page.getByRole('button', { name: 'Top up' }).count(), 0);
    const grants = page.getByRole('region', { name: 'Grants' });
    const row = grants.locator('tr[data-grant-id]');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    // The reason is text, never markup.
    assert.equal(await row.locator('td').nth(2).innerText(), reason);
    assert.match(await row.locator('td').nth(3).innerText(), /^operator-\d+@example\.com$/);
    assert.equal(await row.locator('td').nth(1).innerText(), '$2.50');
    await shot('01-billing-grants');
  });

  step('a member\'s own top-up is refused', async () => {
    const refused = await raw(system, member, 'POST', '/billing/top-ups', { amount_micro_usd: 1000000 });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'funding_by_grant_only');
    assert.equal((await member('GET', '/billing/balance')).balance_micro_usd, 2500000, 'nothing credited');
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(browser.problems, []);
  });
});

// Stripe's API reduced to what billing calls (POST /v1/checkout/sessions), on loopback, as
// tests/integration/payments_test.cc's stand-in answers it; its payment page is a page of its
// own (GET /c/pay/<id>), so that the browser's trip to the provider can be seen. Records the
// sessions it created with the form billing sent.
const STRIPE_KEY = 'sk_test_toolgate_web_stand_in_0123456789';
const WEBHOOK_SECRET = 'whsec_toolgate_web_stand_in_secret';
async function startStandInStripe() {
  const sessions = new Map();  // id -> the form billing sent
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      const url = new URL(req.url, 'http://stand-in');
      if (req.method === 'GET' && url.pathname.startsWith('/c/pay/')) {
        res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
        res.end('<!doctype html><title>Stand-in checkout</title><h1>Pay Toolgate</h1>');
        return;
      }
      if (req.method !== 'POST' || url.pathname !== '/v1/checkout/sessions' || req.headers.authorization !== `Bearer ${STRIPE_KEY}`) {
        res.writeHead(404, { 'Content-Type': 'application/json' });
        res.end('{"error":{"type":"invalid_request_error","message":"Unrecognized request"}}');
        return;
      }
      const form = Object.fromEntries(new URLSearchParams(body));
      const id = `cs_test_${crypto.randomBytes(12).toString('hex')}`;
      sessions.set(id, form);
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ id, object: 'checkout.session', mode: 'payment', status: 'open', payment_status: 'unpaid', currency: 'usd',
        amount_total: Number(form['line_items[0][price_data][unit_amount]']), client_reference_id: form.client_reference_id,
        url: `${stripe.url}/c/pay/${id}` }));
    });
  });
  await new Promise((resolve) => { server.listen(0, '127.0.0.1', resolve); });
  const stripe = { url: `http://127.0.0.1:${server.address().port}`, sessions, close: () => new Promise((r) => { server.close(r); }) };
  return stripe;
}

// A checkout.session.completed event delivered to the webhook route as Stripe delivers it:
// no cookie, signed with the endpoint's secret (Stripe-Signature: t=..,v1=HMAC-SHA256).
async function deliverCompleted(system, sessionId, form) {
  const payload = JSON.stringify({ id: `evt_${crypto.randomBytes(8).toString('hex')}`, object: 'event', type: 'checkout.session.completed', livemode: false,
    data: { object: { id: sessionId, object: 'checkout.session', mode: 'payment', client_reference_id: form.client_reference_id,
      metadata: { toolgate_org_id: form['metadata[toolgate_org_id]'] }, amount_subtotal: Number(form['line_items[0][price_data][unit_amount]']),
      amount_total: Number(form['line_items[0][price_data][unit_amount]']), currency: 'usd', payment_status: 'paid', status: 'complete',
      payment_intent: `pi_${crypto.randomBytes(8).toString('hex')}` } } });
  const t = Math.floor(Date.now() / 1000);
  const signature = crypto.createHmac('sha256', WEBHOOK_SECRET).update(`${t}.${payload}`).digest('hex');
  const r = await fetch(`${system.baseUrl}/api/v1/billing/webhooks/stripe`, {
    method: 'POST', headers: { 'Content-Type': 'application/json; charset=utf-8', 'Stripe-Signature': `t=${t},v1=${signature}` }, body: payload,
  });
  const text = await r.text();
  assert.equal(r.status, 200, text);
  assert.equal(JSON.parse(text).outcome, 'credited', text);
}

describe('money bought through checkout (checkout funding, a stand-in for Stripe), in Chromium', { timeout: 600000 }, () => {
  let system;
  let stripe;
  let browser;
  let member;
  const { shot, step } = stepper('checkout', () => browser);

  before(async () => {
    stripe = await startStandInStripe();
    const secrets = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-web-money-stripe-'));
    const secretFile = (name, secret) => {
      const file = path.join(secrets, name);
      fs.writeFileSync(file, `${secret}\n`, { mode: 0o600 });
      return file;
    };
    system = await startSystem('toolgate-web-money-checkout-', {
      flags: ['--funding', 'checkout', '--stripe-api-base', stripe.url, '--stripe-secret-key-file', secretFile('stripe.key', STRIPE_KEY),
        '--stripe-webhook-secret-file', secretFile('stripe-webhook.secret', WEBHOOK_SECRET)],
    });
    process.on('exit', () => { system?.stop(); });
    member = await system.signUp('Buying Org');
    browser = await openBrowser(system, 'checkout');
    await browser.signedInAs(member);
  });

  after(async () => {
    await browser?.close();
    await system?.stop();
    await stripe?.close();
  });

  step('Top up goes to the provider\'s checkout page; the balance grows only when its webhook lands', async () => {
    const { page } = browser;
    await page.goto('/settings/billing');
    await page.locator('[data-funding="checkout"]', { hasText: 'payment provider' }).waitFor();
    const form = page.getByRole('form', { name: 'Top up' });
    await form.getByRole('heading', { name: 'Buy credit' }).waitFor();
    // The provider takes whole cents: anything finer is refused at the field, before any request.
    await page.getByLabel('Amount (USD)').fill('25.005');
    await form.getByRole('button', { name: 'Top up', exact: true }).click();
    await form.locator('[data-field="amount_micro_usd"] .field-error', { hasText: 'whole cents' }).waitFor();
    assert.equal(stripe.sessions.size, 0);
    await page.getByLabel('Amount (USD)').fill('25');
    await shot('01-buy-credit');
    // The API's answer, read on its way to the page (the page leaves before it could be read).
    let session = null;
    await page.route('**/api/v1/billing/checkout-sessions', async (route) => {
      const response = await route.fetch();
      assert.equal(response.status(), 201, await response.text());
      session = await response.json();
      await route.fulfill({ response });
    });
    await Promise.all([page.waitForURL(`${stripe.url}/c/pay/**`), form.getByRole('button', { name: 'Top up', exact: true }).click()]);
    await page.unroute('**/api/v1/billing/checkout-sessions');
    assert.ok(session, 'billing answered the checkout session');
    assert.equal(page.url(), session.checkout_url, 'the browser is at the checkout_url');
    assert.equal(session.amount_micro_usd, 25000000);
    const sent = stripe.sessions.get(session.checkout_session_id);
    assert.equal(sent['line_items[0][price_data][unit_amount]'], '2500');
    await page.getByRole('heading', { name: 'Pay Toolgate' }).waitFor();

    // The provider sends the payer back before its webhook: nothing is credited yet.
    const successUrl = sent.success_url.replace('{CHECKOUT_SESSION_ID}', session.checkout_session_id);
    assert.ok(successUrl.startsWith(`${system.baseUrl}/settings/billing?checkout=success`), successUrl);
    await page.goto(successUrl);
    const notice = page.locator('[data-checkout="success"]');
    await notice.getByText('Your balance goes up when the payment provider confirms the payment').waitFor();
    await page.locator('[data-money="balance"] .amount', { hasText: '$0.00' }).waitFor();
    await shot('02-returned-before-webhook');

    await deliverCompleted(system, session.checkout_session_id, sent);
    await notice.getByRole('button', { name: 'Check the balance again' }).click();
    await page.locator('[data-money="balance"] .amount', { hasText: '$25.00' }).waitFor();
    // The ledger's payment names the provider's checkout session it answers for.
    await page.locator('table tr[data-type="payment"]', { hasText: session.checkout_session_id }).waitFor();
    await shot('03-credited-by-webhook');

    // Cancelled at the provider: the page says nothing was paid.
    await page.goto(sent.cancel_url);
    await page.locator('[data-checkout="cancelled"]', { hasText: 'Nothing was paid' }).waitFor();
    // Members still cannot mint credit themselves.
    const refused = await raw(system, member, 'POST', '/billing/top-ups', { amount_micro_usd: 1000000 });
    assert.equal(refused.status, 403);
    assert.equal(refused.body.code, 'funding_by_grant_only');
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(browser.problems, []);
  });
});
