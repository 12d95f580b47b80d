// The web app in a real browser: Debian's Chromium driven by playwright-core, against a whole
// system (`toolgate up --demo`) that this test starts in a fresh data directory and stops with
// SIGTERM. One person's first session, step by step; a screenshot of each page goes to
// $TOOLGATE_WEB_TEST_OUTPUT (default build/web-test-output).
//
// Run: node --test web/test/browser.test.mjs   (ctest runs it as web_browser)
// Needs: build/bin (toolgate and the services), build/web, web/node_modules (npm ci),
// /usr/bin/chromium. TOOLGATE_BIN_DIR and CHROMIUM override where they are.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '..', '..');
const binDir = process.env.TOOLGATE_BIN_DIR || path.join(repo, 'build', 'bin');
const outDir = process.env.TOOLGATE_WEB_TEST_OUTPUT || path.join(repo, 'build', 'web-test-output');
const chromiumPath = process.env.CHROMIUM || '/usr/bin/chromium';

const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };
const START_TIMEOUT_MS = 180000;  // first start: initdb and migrations on a 2-core machine

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

// `toolgate up` in its own data directory; resolves once the URL is known and the demo seeded.
async function startSystem(dataDir) {
  const launcher = path.join(binDir, 'toolgate');
  assert.ok(fs.existsSync(launcher), `${launcher} not found: build first (scripts/build.sh)`);
  assert.ok(fs.existsSync(path.join(binDir, '..', 'web', 'index.html')), 'build/web not found: build the `web` target');
  const child = spawn(launcher, ['up', '--data-dir', dataDir, '--http-port', '0', '--demo'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exited = null;
  child.stdout.on('data', (d) => { output += d; });
  child.stderr.on('data', (d) => { output += d; });
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  const stateFile = path.join(dataDir, 'run', 'state.json');
  const url = await waitFor('the system to start', () => {
    if (exited) throw new Error(`toolgate up exited (${JSON.stringify(exited)}):\n${output}`);
    if (!fs.existsSync(stateFile)) return null;
    try {
      return JSON.parse(fs.readFileSync(stateFile, 'utf8')).url || null;
    } catch {
      return null;  // being rewritten
    }
  }, START_TIMEOUT_MS);
  await waitFor('the demo catalogue', () => {
    if (exited) throw new Error(`toolgate up exited (${JSON.stringify(exited)}):\n${output}`);
    return output.includes('Demo organization ready');
  }, START_TIMEOUT_MS);
  return { child, url, output: () => output, exited: () => exited };
}

async function stopSystem(system) {
  if (!system || system.exited()) return;
  system.child.kill('SIGTERM');
  try {
    await waitFor('the system to stop', () => system.exited(), 60000);
  } catch {
    system.child.kill('SIGKILL');
  }
}

describe('web app in Chromium', { timeout: 540000 }, () => {
  let dataDir;
  let system;
  let context;
  let page;
  let base;
  const user = { email: `web-${Date.now()}@example.com`, password: 'correct horse battery', org: 'Browser Test Org' };
  let apiKey;
  let echoId;
  let echoRunsBefore;
  const pageProblems = [];
  let publishedId;

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

  // The next answer to `method` on a path (with its query) starting with /api/v1<prefix>.
  const apiResponse = (method, prefix, status) => page.waitForResponse((r) => {
    const u = new URL(r.url());
    return r.request().method() === method && `${u.pathname}${u.search}`.startsWith(`/api/v1${prefix}`)
      && (status === undefined || r.status() === status);
  });
  // The marketplace's results once they answer a search whose query string contains `part`.
  const resultsFor = async (part) => {
    await page.locator(`.results[data-query*="${part}"]`).waitFor();
    return page.getByRole('list', { name: 'Tools' });
  };

  before(async () => {
    fs.rmSync(outDir, { recursive: true, force: true });
    fs.mkdirSync(outDir, { recursive: true });
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'toolgate-web-'));
    system = await startSystem(dataDir);
    // Should this process end without reaching after() (an uncaught error), the system goes too.
    process.on('exit', () => { if (!system.exited()) system.child.kill('SIGTERM'); });
    base = system.url;
    // A fresh profile in the test's own directory (Playwright passes it as --user-data-dir).
    context = await chromium.launchPersistentContext(path.join(dataDir, 'chromium'), {
      executablePath: chromiumPath,
      headless: true,
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
        '--disable-sync', '--no-first-run'],
      viewport: DESKTOP,
      baseURL: base,
    });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    page = await context.newPage();
    page.setDefaultTimeout(30000);
    // Everything the pages load comes from the edge (CSP self-only) and no script may throw:
    // either is a bug, reported by the last step. 4xx answers the app expects are not.
    page.on('pageerror', (error) => pageProblems.push(`uncaught: ${error.message}`));
    page.on('console', (msg) => {
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) pageProblems.push(msg.text());
    });
  });

  after(async () => {
    await context?.close().catch(() => {});
    await stopSystem(system);
    if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
  });

  step('the login that toolgate up --demo prints signs in', async () => {
    const printed = system.output().match(/sign in as (\S+) with the password (\S+)/);
    assert.ok(printed, `no login printed:\n${system.output()}`);
    const r = await fetch(`${base}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: printed[1], password: printed[2] }),
    });
    assert.equal(r.status, 200, await r.text());
  });

  step('signs up', async () => {
    await page.goto('/signup');
    await page.getByRole('heading', { name: 'Create your account' }).waitFor();
    await shot('01-signup');
    // Too short a password: the server's 422 appears next to the field.
    await page.getByLabel('Organization').fill(user.org);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('short');
    await page.getByRole('button', { name: 'Create account' }).click();
    await page.locator('[data-field="password"] .field-error').waitFor();
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([apiResponse('POST', '/auth/signup', 201), page.getByRole('button', { name: 'Create account' }).click()]);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    await page.getByRole('heading', { name: 'Marketplace', level: 1 }).waitFor();
  });

  step('creates an API key and sees it once', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Settings' }).click();
    await page.getByRole('heading', { name: 'API Keys' }).waitFor();
    await page.getByLabel('Name').fill('laptop');
    await Promise.all([apiResponse('POST', '/api-keys', 201), page.getByRole('button', { name: 'Create key' }).click()]);
    const keyInput = page.locator('input.key-value');
    await keyInput.waitFor();
    apiKey = await keyInput.inputValue();
    assert.ok(apiKey.length >= 20, 'the new key is shown');
    await page.getByText('this is the only time Toolgate shows it').waitFor();
    await page.locator('tr', { hasText: 'laptop' }).getByText('active').waitFor();
    await shot('02-api-key-created');
    await page.reload();
    await page.locator('tr', { hasText: 'laptop' }).waitFor();
    assert.equal(await page.locator('input.key-value').count(), 0, 'the key is not shown again');
    assert.ok(!(await page.content()).includes(apiKey), 'the key text is nowhere on the page');
  });

  step('tops up the balance', async () => {
    await page.getByRole('link', { name: 'Billing' }).click();
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
    // `toolgate up --demo` funds with play money, and the page says so.
    await page.locator('[data-funding="demo"]', { hasText: 'play money' }).waitFor();
    await page.getByLabel('Amount (USD)').fill('5');
    await Promise.all([apiResponse('POST', '/billing/top-ups', 201), page.getByRole('button', { name: 'Top up', exact: true }).click()]);
    await page.locator('[data-money="available"] .amount', { hasText: '$5.00' }).waitFor();
    await page.locator('table tr[data-type="top_up"]').first().waitFor();
    await shot('03-billing');
  });

  step('browses, searches and filters the marketplace', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Marketplace' }).click();
    await page.getByRole('heading', { name: 'Trending' }).waitFor();
    await page.getByRole('heading', { name: 'Top rated' }).waitFor();
    const results = page.getByRole('list', { name: 'Tools' });
    await results.locator('article').first().waitFor();
    const all = await results.locator('article').count();
    assert.ok(all >= 3, `the demo catalogue is listed (${all} cards)`);
    // Each tool's card appears once: the highlights are ranked links, and Top rated repeats no
    // tool of Trending.
    const cardNames = await page.locator('article h3').allInnerTexts();
    assert.equal(new Set(cardNames).size, cardNames.length, `a card repeated: ${cardNames}`);
    const trending = await page.getByRole('list', { name: 'Trending' }).getByRole('link').allInnerTexts();
    const topRated = await page.getByRole('list', { name: 'Top rated' }).getByRole('link').allInnerTexts();
    assert.ok(trending.length > 0 && topRated.length > 0, 'both highlights name tools');
    assert.ok(topRated.every((name) => !trending.includes(name)), `${topRated} repeats ${trending}`);
    await shot('04-marketplace');

    await page.getByRole('searchbox', { name: 'Search tools' }).fill('echo');
    await page.getByRole('button', { name: 'Search' }).click();
    let found = await resultsFor('q=echo');
    assert.equal(await found.locator('article h3').first().innerText(), 'Echo', 'the tool named like the query ranks first');
    // The demo ran Echo: its card shows its success rate and median latency of the last 7 days.
    assert.match(await found.locator('article').first().locator('[data-stat="week"]').innerText(),
      /^\d+\.\d% succeeded · p50 under \d+ ms$/);

    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('heading', { name: 'Trending' }).waitFor();
    await page.getByLabel('Runtime').selectOption('lua');
    found = await resultsFor('runtime=lua');
    const runtimes = await found.locator('article .badges .badge:first-child').allInnerTexts();
    assert.ok(runtimes.length > 0 && runtimes.every((r) => r === 'Lua'), `runtime filter: ${runtimes}`);
    await page.getByLabel('Pricing').selectOption('paid');
    found = await resultsFor('pricing=paid');
    const prices = await found.locator('article .badges').allInnerTexts();
    assert.ok(prices.length > 0 && prices.every((p) => p.includes('/ run')), 'pricing filter: paid only');
    assert.ok(prices.length < all, 'filters narrow the list');
    await page.getByLabel('Sort by').selectOption('rating');
    await resultsFor('sort=rating');
    assert.match(page.url(), /runtime=lua/);
    assert.match(page.url(), /pricing=paid/);
    await shot('05-marketplace-filtered');
    await page.getByRole('button', { name: 'Clear filters' }).click();
    await page.getByRole('heading', { name: 'Trending' }).waitFor();
  });

  step('favorites a tool and finds it under Favorites', async () => {
    await page.getByRole('searchbox', { name: 'Search tools' }).fill('echo');
    await page.getByRole('button', { name: 'Search' }).click();
    const heart = (await resultsFor('q=echo')).getByRole('button', { name: 'Favorite Echo' }).first();
    assert.equal(await heart.getAttribute('aria-pressed'), 'false');
    await Promise.all([apiResponse('PUT', '/favorites/', 204), heart.click()]);
    assert.equal(await heart.getAttribute('aria-pressed'), 'true');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My Tools' }).click();
    await page.getByRole('tab', { name: 'Favorites' }).click();
    await page.getByRole('list', { name: 'Favorites' }).getByRole('link', { name: 'Echo' }).waitFor();
    await shot('06-my-tools-favorites');
  });

  step('opens a detail page and adds the tool to the workspace', async () => {
    await page.getByRole('list', { name: 'Favorites' }).getByRole('link', { name: 'Echo' }).click();
    await page.getByRole('heading', { name: 'Echo', level: 1 }).waitFor();
    const toolId = await page.locator('code.tool-id').innerText();
    assert.match(toolId, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    await page.getByText('Price per execution').waitFor();
    // The demo ran Echo: its last 7 days show runs, a success rate and a median latency.
    assert.match(await page.locator('[data-stat="week"]').innerText(), /^\d+ runs? · \d+\.\d% succeeded · p50 under \d+ ms$/);
    await page.getByRole('heading', { name: 'Input schema' }).waitFor();
    // Echo declares no egress: its permissions say so before anyone runs it.
    assert.equal(await page.locator('[data-stat="egress"]').innerText(), 'No network access');
    await Promise.all([apiResponse('POST', '/workspace/tools', 201), page.getByRole('button', { name: 'Add to workspace' }).click()]);
    await page.getByText('In your workspace').waitFor();
    await shot('07-tool-detail');
  });

  step('copies the Integrate snippet', async () => {
    await page.getByRole('tab', { name: 'Integrate' }).click();
    const curl = page.locator('[data-snippet="curl"]');
    await curl.locator('pre').waitFor();
    const shown = await curl.locator('pre').innerText();
    assert.match(shown, /\/invoke/);
    assert.match(shown, /<API_KEY>/);
    await curl.getByRole('button', { name: 'Copy cURL snippet' }).click();
    await curl.getByRole('button', { name: 'Copy cURL snippet' }).filter({ hasText: 'Copied' }).waitFor();
    const copied = await page.evaluate(() => navigator.clipboard.readText());
    assert.equal(copied.trim(), shown.trim(), 'the clipboard holds the snippet');
    // The MCP endpoint a client connects to is shown beside the snippets.
    const mcp = await page.locator('[data-snippet="mcp"] pre').innerText();
    assert.match(mcp, /^http:\/\/127\.0\.0\.1:\d+\/mcp(\/functions\/[0-9a-f-]{36}(\/[0-9.]+)?)?$/);
    await shot('08-integrate');
  });

  step('runs the tool in Try it and sees its summary', async () => {
    echoId = await page.locator('code.tool-id').innerText();
    echoRunsBefore = (await (await fetch(`${base}/api/v1/functions/${echoId}`)).json()).executions;
    await page.getByRole('tab', { name: 'Try it' }).click();
    // The input schema's fields, filled from the example.
    const hello = page.getByLabel('hello', { exact: true });
    assert.equal(await hello.inputValue(), 'world', 'the form starts from the example');
    await hello.fill('from the form');
    await Promise.all([apiResponse('POST', '/functions/', 200), page.getByRole('button', { name: 'Run' }).click()]);
    const result = page.locator('[data-result="handler"]');
    await result.waitFor();
    await result.getByText('Status 200').waitFor();
    assert.match(await result.locator('pre').innerText(), /from the form/);
    // Raw JSON keeps what the form held, and runs what is typed there.
    await page.getByLabel('Edit the event as raw JSON').check();
    const editor = page.getByLabel('Event (JSON)');
    assert.match(await editor.inputValue(), /from the form/, 'the editor starts from the form');
    await editor.fill('{"hello": "from the browser"}');
    await Promise.all([apiResponse('POST', '/functions/', 200), page.getByRole('button', { name: 'Run' }).click()]);
    await result.getByText(/from the browser/).waitFor();
    assert.match(await result.locator('pre').innerText(), /from the browser/);
    const summary = await result.locator('dl.summary').innerText();
    assert.match(summary, /Runtime\s+\d+ ms/);
    assert.match(summary, /Compute type\s+CPU/);
    assert.match(summary, /Cost\s+\$0\.\d+ \(compute \$0\.\d+, function \$0\.00\)/);
    await shot('09-try-it');
  });

  step('refuses the session to requests another site could make', async () => {
    const toolId = await page.locator('code.tool-id').innerText();
    const cookie = (await context.cookies(base)).find((c) => c.name === 'tg_session');
    assert.ok(cookie, 'signed in with a session cookie');
    const invoke = (headers) => fetch(`${base}/api/v1/functions/${toolId}/invoke`, {
      method: 'POST',
      headers: { Cookie: `tg_session=${cookie.value}`, 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify({ event: {} }),
    });
    // A form on another site sends the cookie but cannot add the custom header.
    let r = await invoke({});
    assert.equal(r.status, 401);
    assert.equal((await r.json()).code, 'missing_api_key');
    // A script on another site is named by its Origin.
    r = await invoke({ 'X-Toolgate-CSRF': '1', Origin: 'http://attacker.example' });
    assert.equal(r.status, 403);
    assert.equal((await r.json()).code, 'forbidden');
    r = await invoke({ 'X-Toolgate-CSRF': '1', Origin: base });
    assert.equal(r.status, 200);
  });

  step('rates the tool it ran', async () => {
    // Only an organization that has run a tool may rate it, and the registry learns of runs
    // from execution events it writes in batches: wait until it has counted our two runs.
    await waitFor('the registry to count our runs', async () => {
      const detail = await (await fetch(`${base}/api/v1/functions/${echoId}`)).json();
      return detail.executions >= echoRunsBefore + 2;
    }, 30000);
    await page.getByRole('tab', { name: 'Reviews' }).click();
    await page.getByRole('heading', { name: 'Rate this tool' }).waitFor();
    await page.getByLabel('5 stars').check();
    await page.getByLabel('Review (optional)').fill('Echoes <b>exactly</b> what it is given.');
    await Promise.all([apiResponse('PUT', '/functions/', 201), page.getByRole('button', { name: 'Save rating' }).click()]);
    const review = page.locator('article.review', { hasText: '(you)' });
    await review.getByText('Echoes <b>exactly</b> what it is given.').waitFor();
    await page.getByRole('heading', { name: 'Change your rating' }).waitFor();
    await shot('10-reviews');
  });

  step('opens the publisher page from a tool', async () => {
    await page.goto(`/tools/${echoId}`);
    await page.getByRole('heading', { name: 'Echo', level: 1 }).waitFor();
    await page.locator('.detail-head').getByRole('link', { name: 'Toolgate Samples' }).click();
    const found = await resultsFor('creator=');
    const publishers = await found.locator('article a.publisher').allInnerTexts();
    assert.ok(publishers.length >= 3, `the publisher's tools are listed (${publishers})`);
    assert.ok(publishers.every((p) => p === 'Toolgate Samples'), `only the publisher's tools: ${publishers}`);
  });

  step('manages secrets and maps one into a snippet', async () => {
    await page.goto('/settings/secrets');
    await page.getByRole('heading', { name: 'Secrets', level: 2 }).waitFor();
    await page.getByLabel('Name').fill('weather-token');
    await page.getByLabel('Value').fill('first-secret-value');
    await Promise.all([apiResponse('POST', '/secrets', 201), page.getByRole('button', { name: 'Create secret' }).click()]);
    const row = page.locator('tr', { hasText: 'weather-token' });
    await row.waitFor();
    const secretId = await row.getAttribute('data-secret-id');
    await row.getByRole('button', { name: 'Replace the value of weather-token' }).click();
    await page.getByLabel('New value for weather-token').fill('second-secret-value');
    await Promise.all([apiResponse('PUT', `/secrets/${secretId}`, 200), page.getByRole('button', { name: 'Save' }).click()]);
    await page.locator('tr', { hasText: 'weather-token' }).getByRole('button', { name: 'Replace the value of weather-token' }).waitFor();
    const html = await page.content();
    assert.ok(!html.includes('first-secret-value') && !html.includes('second-secret-value'), 'values are never shown');
    await shot('11-secrets');

    await page.goto('/?q=forecast');
    await (await resultsFor('q=forecast')).getByRole('link', { name: 'Forecast' }).first().click();
    await page.getByRole('heading', { name: 'Forecast', level: 1 }).waitFor();
    await page.getByRole('tab', { name: 'Integrate' }).click();
    const curl = page.locator('[data-snippet="curl"] pre');
    await curl.getByText('WEATHER_API_KEY=<secret_id>').waitFor();
    await page.getByLabel('WEATHER_API_KEY').selectOption(secretId);
    await curl.getByText(`WEATHER_API_KEY=${secretId}`).waitFor();
    await shot('12-integrate-with-secret');

    await page.goto('/settings/secrets');
    await page.locator('tr', { hasText: 'weather-token' }).getByRole('button', { name: 'Delete secret weather-token' }).click();
    await Promise.all([apiResponse('DELETE', `/secrets/${secretId}`, 204), page.getByRole('button', { name: 'Confirm delete' }).click()]);
    await page.getByText('No secrets yet.').waitFor();
  });

  step('publishes a tool and a version, with the server\'s field errors', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Publish' }).click();
    await page.getByRole('heading', { name: 'Publish a tool' }).waitFor();
    await page.getByLabel('Description').fill('Says hello from the browser test.');
    assert.ok(await page.getByLabel(/^Private:/).isChecked(), 'a new tool is private until made public');
    await page.getByLabel('Category', { exact: true }).fill('Testing');
    await page.getByLabel('Price per execution (USD)').fill('0.01');
    await Promise.all([apiResponse('POST', '/functions', 422), page.getByRole('button', { name: 'Create tool' }).click()]);
    await page.locator('[data-field="name"] .field-error').waitFor();
    await shot('13-publish-field-error');
    await page.getByLabel('Name', { exact: true }).fill('Browser greeter');
    await page.getByLabel('Overview (Markdown)').fill('# Greeter\n\nSays **hello**. <script>alert(1)</script>');
    const created = apiResponse('POST', '/functions', 201);
    await page.getByRole('button', { name: 'Create tool' }).click();
    publishedId = (await (await created).json()).function_id;
    await page.getByRole('heading', { name: 'Publish a version of Browser greeter' }).waitFor();

    await page.getByLabel('Code').fill('function service_handler(event, context)\n  return {statusCode = 200, body = {greeting = "Hello"}\nend');
    await Promise.all([apiResponse('POST', `/functions/${publishedId}/versions`, 422), page.getByRole('button', { name: 'Publish version' }).click()]);
    await page.locator('[data-field="code"] .field-error').waitFor();
    await page.getByLabel('Code').fill('function service_handler(event, context)\n  return {statusCode = 200, body = {greeting = "Hello, " .. (event.name or "world")}}\nend');
    // A bad egress entry is the server's 422 on its own index, shown by the field.
    await page.getByLabel('Network access').fill('api.open-meteo.com, *.*.com');
    await Promise.all([apiResponse('POST', `/functions/${publishedId}/versions`, 422), page.getByRole('button', { name: 'Publish version' }).click()]);
    await page.locator('[data-field="egress"] .field-error', { hasText: 'egress[1]' }).waitFor();
    await page.getByLabel('Network access').fill('api.open-meteo.com, *.example.com:8443');
    await Promise.all([apiResponse('POST', `/functions/${publishedId}/versions`, 201), page.getByRole('button', { name: 'Publish version' }).click()]);
    await page.getByText('Version 1.0.0 is published.').waitFor();
    await shot('14-publish-version');

    await page.getByRole('link', { name: 'View the tool' }).click();
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    // The overview's Markdown is rendered; its HTML is shown as text, never run.
    await page.locator('.markdown strong', { hasText: 'hello' }).waitFor();
    assert.equal(await page.locator('.markdown script').count(), 0);
    await page.locator('.markdown', { hasText: '<script>alert(1)</script>' }).waitFor();
    await page.getByText('Your organization owns this tool').waitFor();
    // The declared egress is the tool's permissions, on its page.
    assert.equal(await page.locator('[data-stat="egress"]').innerText(),
      'Can connect to: api.open-meteo.com, *.example.com:8443');
  });

  step('the publisher deprecates a version and unpublishes another', async () => {
    // A second version, published through the API with the page's session.
    const published = await page.request.post(`/api/v1/functions/${publishedId}/versions`, {
      headers: { 'X-Toolgate-CSRF': '1' },
      data: { version: '1.0.1', runtime: 'lua', compute_type: 'CPU', input_schema: { type: 'object' },
        code: 'function service_handler(event, context) return {statusCode = 200, body = {greeting = "Hi"}} end' },
    });
    assert.equal(published.status(), 201, await published.text());
    await page.goto(`/tools/${publishedId}`);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    assert.equal(await page.locator('[data-stat="latest-version"]').innerText(), '1.0.1');
    const versions = page.getByRole('region', { name: 'Versions' });
    await versions.locator('tr[data-version="1.0.1"]').waitFor();

    await Promise.all([apiResponse('PATCH', `/functions/${publishedId}/versions/1.0.0`, 200),
      page.getByRole('button', { name: 'Deprecate version 1.0.0' }).click()]);
    await versions.locator('tr[data-version="1.0.0"]').getByText('Deprecated').waitFor();
    await page.getByRole('button', { name: 'Undeprecate version 1.0.0' }).waitFor();
    // Deprecated, it still runs.
    const pinned = (version) => fetch(`${base}/api/v1/functions/${publishedId}/${version}/invoke`, {
      method: 'POST', headers: { Authorization: apiKey, 'Content-Type': 'application/json' }, body: '{"event":{}}',
    });
    assert.equal((await pinned('1.0.0')).status, 200);

    await page.getByRole('button', { name: 'Unpublish version 1.0.1' }).click();
    await page.getByText('the number can never be published again').waitFor();
    await shot('14b-unpublish-version');
    await Promise.all([apiResponse('DELETE', `/functions/${publishedId}/versions/1.0.1`, 204),
      page.getByRole('button', { name: 'Unpublish 1.0.1 for good' }).click()]);
    await page.getByText('Version 1.0.1 is unpublished.').waitFor();
    assert.equal(await versions.locator('tr[data-version="1.0.1"]').count(), 0);
    assert.equal(await page.locator('[data-stat="latest-version"]').innerText(), '1.0.0');
    const gone = await pinned('1.0.1');
    assert.equal(gone.status, 404);
    assert.equal((await gone.json()).code, 'version_not_found');
  });

  step('binds a secret for MCP calls from the workspace, which then need no X-Env-Keys', async () => {
    const secret = await page.request.post('/api/v1/secrets', {
      headers: { 'X-Toolgate-CSRF': '1' }, data: { name: 'mcp-weather', value: 'bound-for-mcp' },
    });
    assert.equal(secret.status(), 201, await secret.text());
    const secretId = (await secret.json()).id;
    // Forecast declares WEATHER_API_KEY; the user adds it to the workspace.
    await page.goto('/?q=forecast');
    await (await resultsFor('q=forecast')).getByRole('link', { name: 'Forecast' }).first().click();
    await page.getByRole('heading', { name: 'Forecast', level: 1 }).waitFor();
    await Promise.all([apiResponse('POST', '/workspace/tools', 201), page.getByRole('button', { name: 'Add to workspace' }).click()]);
    await page.getByText('In your workspace').waitFor();
    const forecastId = await page.locator('code.tool-id').innerText();

    // MCP over the workspace endpoint, as a client would: initialize, then call the tool.
    const mcpCall = async () => {
      const post = (body, session) => fetch(`${base}/mcp`, {
        method: 'POST',
        headers: { Authorization: apiKey, 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
          ...(session ? { 'Mcp-Session-Id': session } : {}) },
        body: JSON.stringify(body),
      });
      const init = await post({ jsonrpc: '2.0', id: 1, method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' } } });
      assert.equal(init.status, 200, await init.clone().text());
      const session = init.headers.get('mcp-session-id');
      const called = await post({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'forecast', arguments: { city: 'Lisbon' } } }, session);
      assert.equal(called.status, 200);
      return (await called.json()).result;
    };
    assert.equal((await mcpCall()).isError, true, 'without a mapping the call is a tool error');

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My Tools' }).click();
    await page.getByRole('tab', { name: 'Added' }).click();
    const card = page.getByRole('article', { name: 'Forecast' });
    await card.getByRole('button', { name: 'MCP secrets of Forecast' }).click();
    await card.getByText('No mapping stored').waitFor();
    await card.getByLabel('WEATHER_API_KEY').selectOption(secretId);
    await Promise.all([apiResponse('PUT', `/workspace/tools/${forecastId}/env-keys`, 204),
      card.getByRole('button', { name: 'Save mapping' }).click()]);
    await card.getByText('Saved: MCP calls of Forecast from your workspace use these secrets.').waitFor();
    await shot('14c-mcp-secret-binding');
    // The binding round trip: read back after a reload.
    await page.reload();
    await page.getByRole('article', { name: 'Forecast' }).getByRole('button', { name: 'MCP secrets of Forecast' }).click();
    await page.getByRole('article', { name: 'Forecast' }).getByText('Stored for the workspace MCP endpoint').waitFor();
    assert.equal(await page.getByRole('article', { name: 'Forecast' }).getByLabel('WEATHER_API_KEY').inputValue(), secretId);

    const result = await mcpCall();
    assert.equal(result.isError, false, JSON.stringify(result));
    assert.equal(result.structuredContent.city, 'Lisbon');
    // Forecast's answer came from the demo's weather service, through the egress gateway.
    assert.equal(result.structuredContent.source, 'demo weather service');
  });

  step('warns on every page about a key that expires in 3 days', async () => {
    await page.goto('/settings/keys');
    await page.getByRole('heading', { name: 'API Keys' }).waitFor();
    assert.equal(await page.locator('[data-banner="key-expiry"]').count(), 0, 'no warning before');
    const in3days = new Date(Date.now() + 3 * 86400000).toISOString().slice(0, 10);
    await page.getByLabel('Name').fill('short-lived');
    await page.getByLabel('Expires on').fill(in3days);
    await Promise.all([apiResponse('POST', '/api-keys', 201), page.getByRole('button', { name: 'Create key' }).click()]);
    const banner = page.locator('[data-banner="key-expiry"]');
    await banner.getByText('“short-lived”').waitFor();
    assert.match(await banner.innerText(), /in 3 days/);
    await page.locator('tr', { hasText: 'short-lived' }).getByText('expiring').waitFor();
    await shot('15-key-expiry-warning');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Marketplace' }).click();
    await page.getByRole('heading', { name: 'Marketplace', level: 1 }).waitFor();
    await banner.getByText('“short-lived”').waitFor();
  });

  step('lists executions with summary and cost; the owner sees logs and each stage\'s time', async () => {
    // Run the published tool once, so the owner has an execution with logs.
    await page.goto(`/tools/${publishedId}?tab=try`);
    await Promise.all([apiResponse('POST', '/functions/', 200), page.getByRole('button', { name: 'Run' }).click()]);
    await page.locator('[data-result="handler"]').getByText('Status 200').waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Executions' }).click();
    const rows = page.locator('tr[data-execution-id]');
    await rows.first().waitFor();
    assert.ok(await rows.count() >= 2, 'both runs are listed');
    await rows.first().getByRole('button', { name: /Details of execution/ }).click();
    await page.locator('tr.detail-row').getByText('Trace ID').waitFor();
    await page.locator('tr.detail-row', { hasText: /Logs|The handler wrote nothing/ }).waitFor();
    // The chain's stages, in order, each with a duration.
    const hops = page.locator('tr.detail-row tr[data-hop]');
    await hops.first().waitFor();
    const names = await hops.evaluateAll((trs) => trs.map((tr) => tr.dataset.hop));
    // The edge decides key and version itself (secrets joins before billing only for a tool
    // that declares keys).
    assert.equal(names[0], 'edge.decide');
    assert.equal(names[names.length - 2], 'billing.hold');
    assert.match(names[names.length - 1], /^executor\./);
    for (const text of await hops.locator('td:nth-child(3)').allInnerTexts()) assert.match(text, /^\d+(\.\d+)? ms$/);
    await shot('16-executions');
  });

  step('a failed load shows one error, and its retry works', async () => {
    let answered = 0;
    const pattern = '**/api/v1/executions?*';
    await page.route(pattern, (route) => {
      if (answered++ > 0) return route.continue();
      return route.fulfill({
        status: 503,
        contentType: 'application/problem+json',
        body: JSON.stringify({ type: 'urn:toolgate:error:service_unavailable', title: 'Service unavailable', status: 503, detail: 'Try again in a moment.', code: 'service_unavailable' }),
      });
    });
    await page.goto('/executions');
    const notice = page.getByRole('alert').filter({ hasText: 'Service unavailable' });
    await notice.waitFor();
    assert.equal(await notice.count(), 1, 'the error is shown once');
    await notice.getByRole('button', { name: 'Try again' }).click();
    await page.locator('tr[data-execution-id]').first().waitFor();
    assert.equal(await notice.count(), 0, 'the error is gone once the list loads');
    await page.unroute(pattern);
  });

  step('fits a phone-width screen', async () => {
    await page.setViewportSize(PHONE);
    await page.goto('/');
    await page.getByRole('list', { name: 'Tools' }).locator('article').first().waitFor();
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
    assert.ok(overflow <= 0, `no sideways scrolling on a phone (${overflow}px too wide)`);
    await shot('17-phone-marketplace');
    await page.getByRole('button', { name: 'Menu' }).click();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'My Tools' }).waitFor();
    await shot('18-phone-menu');
    await page.goto(`/tools/${publishedId}`);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    await shot('19-phone-detail');
    await page.setViewportSize(DESKTOP);
  });

  step('follows the system in dark mode', async () => {
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto('/');
    await page.getByRole('list', { name: 'Tools' }).locator('article').first().waitFor();
    const colours = await page.evaluate(() => {
      const root = getComputedStyle(document.documentElement);
      return { bg: root.backgroundColor, text: root.color };
    });
    assert.deepEqual(colours, { bg: 'rgb(15, 17, 21)', text: 'rgb(230, 232, 236)' });
    await shot('20-dark-marketplace');
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(246, 247, 249)');
  });

  step('works from the keyboard', async () => {
    await page.goto(`/tools/${publishedId}`);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    await page.keyboard.press('Tab');
    assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to content');
    // Tabs follow the WAI-ARIA pattern: arrows and End move the selection.
    await page.getByRole('tab', { name: 'Overview' }).focus();
    await page.keyboard.press('ArrowRight');
    assert.equal(await page.getByRole('tab', { name: 'Integrate' }).getAttribute('aria-selected'), 'true');
    await page.keyboard.press('End');
    assert.equal(await page.getByRole('tab', { name: 'Reviews' }).getAttribute('aria-selected'), 'true');
    // The heart toggles with Enter like a click.
    const heart = page.getByRole('button', { name: 'Favorite Browser greeter' });
    await heart.focus();
    await Promise.all([apiResponse('PUT', '/favorites/', 204), page.keyboard.press('Enter')]);
    await page.locator('button.heart[aria-pressed="true"]').waitFor();
  });

  step('the owner edits the listing', async () => {
    await page.goto(`/tools/${publishedId}`);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    await page.getByRole('link', { name: 'Edit listing' }).click();
    await page.getByRole('heading', { name: 'Edit the listing of Browser greeter' }).waitFor();
    const description = page.getByLabel('Description', { exact: true });
    assert.notEqual(await description.inputValue(), '', 'the form starts from the listing');
    await description.fill('Greets whoever it is given, politely.');
    await Promise.all([apiResponse('PATCH', `/functions/${publishedId}`, 200), page.getByRole('button', { name: 'Save listing' }).click()]);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    await page.getByText('Greets whoever it is given, politely.').first().waitFor();
  });

  step('the owner deletes the tool, and it is gone', async () => {
    await page.goto(`/tools/${publishedId}`);
    await page.getByRole('heading', { name: 'Browser greeter', level: 1 }).waitFor();
    await page.getByRole('button', { name: 'Delete tool' }).click();
    await page.getByText('The executions and charges of past calls stay on record.').waitFor();
    await Promise.all([apiResponse('DELETE', `/functions/${publishedId}`, 204),
      page.getByRole('button', { name: 'Delete for good' }).click()]);
    await page.getByRole('heading', { name: 'My Tools', level: 1 }).waitFor();
    assert.equal((await fetch(`${base}/api/v1/functions/${publishedId}`)).status, 404);
  });

  step('logs out, and a protected page asks to log in and then opens', async () => {
    await page.goto('/');
    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.equal(await page.locator('[data-banner="key-expiry"]').count(), 0);
    await page.goto('/settings/billing');
    await page.getByRole('heading', { name: 'Log in' }).waitFor();
    assert.match(page.url(), /\/login\?next=%2Fsettings%2Fbilling$/);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill('wrong password!');
    await Promise.all([apiResponse('POST', '/auth/login', 401), page.getByRole('button', { name: 'Log in' }).click()]);
    await page.locator('.form-notice .notice.error').waitFor();
    await shot('20-login-error');
    await page.getByLabel('Password').fill(user.password);
    await Promise.all([apiResponse('POST', '/auth/login', 200), page.getByRole('button', { name: 'Log in' }).click()]);
    await page.getByRole('button', { name: 'Log out' }).waitFor();
    await page.getByRole('heading', { name: 'Billing', level: 2 }).waitFor();
  });

  step('ran without script errors or content-security violations', async () => {
    assert.deepEqual(pageProblems, []);
  });
});
