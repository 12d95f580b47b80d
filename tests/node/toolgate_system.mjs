// A whole Toolgate system for the Node.js suites (tests/mcp_sdk, tests/mcp_conformance): starts
// `toolgate up` on free ports in a fresh data directory, waits until it answers, signs up
// organizations through the management API, publishes tools with the CLI, and stops it.
//
//   const system = await startSystem('toolgate-mcp-sdk-');
//   const manage = await system.signUp('Org');          // the API with a member's session
//   const { redirectTo } = await system.consent(manage, authorizeUrl);  // an OAuth approval
//   ...
//   await system.stop();
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const binDir = process.env.TOOLGATE_BIN_DIR ?? path.resolve(here, '../../build/bin');
export const toolgate = path.join(binDir, 'toolgate');

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

// Polls until the launcher has written the edge's URL and the system answers /healthz.
async function waitForSystem(dataDir, launcher, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  const stateFile = path.join(dataDir, 'run', 'state.json');
  while (Date.now() < deadline) {
    if (launcher.exitCode !== null) break;
    try {
      const state = JSON.parse(fs.readFileSync(stateFile, 'utf8'));
      if (state.url) {
        const health = await fetch(`${state.url}/healthz`);
        if (health.ok) return state.url;
      }
    } catch {
      // not written yet, or the edge is not listening yet
    }
    await sleep(100);
  }
  const log = fs.existsSync(path.join(dataDir, 'launcher.log'))
    ? fs.readFileSync(path.join(dataDir, 'launcher.log'), 'utf8')
    : '';
  throw new Error(`the system did not come up:\n${log}`);
}

// extraEnv: variables for the system's services (TOOLGATE_*), on top of this process's.
// flags: more `toolgate up` flags; a suite that names --funding gets that funding instead of
// play money.
export async function startSystem(prefix, { extraEnv = {}, flags = [] } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const log = fs.openSync(path.join(dataDir, 'launcher.log'), 'w');
  // --dev-funding: the suites fund their organizations with top-ups, which only play money
  // allows (docs/decisions.md, "Funding: grants by default, play money asked for").
  const funding = flags.includes('--funding') ? [] : ['--dev-funding'];
  const launcher = spawn(toolgate, ['up', '--data-dir', dataDir, '--http-port', '0', ...funding, ...flags], {
    stdio: ['ignore', log, log],
    env: { ...process.env, ...extraEnv },
  });
  const launcherExit = new Promise((resolve) => launcher.once('exit', resolve));
  const baseUrl = await waitForSystem(dataDir, launcher, 180_000);

  // The management API with the session cookie of a new member of a new organization.
  // The function has the member's email, password and session cookie as properties, for a
  // browser that signs in as them.
  async function signUp(organization) {
    const email = `node-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`;
    const password = 'correct horse battery';
    const response = await fetch(`${baseUrl}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password, organization }),
    });
    assert.equal(response.status, 201, await response.clone().text());
    const cookie = response.headers.get('set-cookie').split(';')[0];
    const manage = async (method, urlPath, body) => {
      const r = await fetch(`${baseUrl}/api/v1${urlPath}`, {
        method,
        // The edge refuses cookie-signed changes without the CSRF header.
        headers: { cookie, 'content-type': 'application/json', 'x-toolgate-csrf': '1' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await r.text();
      assert.ok(r.status < 300, `${method} ${urlPath}: ${r.status} ${text}`);
      return text ? JSON.parse(text) : null;
    };
    return Object.assign(manage, { email, password, cookie });
  }

  // An OAuth authorization request answered as a member would on the consent page, through the
  // API with `manage`'s session: follows `authorizeUrl` (/oauth/authorize?...) to the consent
  // page's address (/connect?request=<id>), reads the request, and approves it for the member's
  // organization (or denies it). Resolves with the request id, the request as the consent page
  // sees it, and the address the answer sends the browser to (the client's redirect_uri with
  // code or error, state and iss).
  async function consent(manage, authorizeUrl, { approve = true, spendingCapMicroUsd = null } = {}) {
    const authorize = await fetch(authorizeUrl, { redirect: 'manual' });
    const location = authorize.headers.get('location');
    assert.ok(authorize.status === 302 || authorize.status === 303,
      `${authorizeUrl}: ${authorize.status} ${await authorize.text()}`);
    const consentPage = new URL(location, baseUrl);
    assert.equal(consentPage.origin, baseUrl, `the consent page is the web app's: ${location}`);
    assert.equal(consentPage.pathname, '/connect', location);
    const requestId = consentPage.searchParams.get('request');
    assert.ok(requestId, location);
    const answerPath = `/oauth/requests/${encodeURIComponent(requestId)}`;
    const request = await manage('GET', answerPath);
    let answer;
    if (approve) {
      const me = await manage('GET', '/me');
      answer = await manage('POST', `${answerPath}/approve`, {
        organization_id: me.organization.id,
        spending_cap_micro_usd: spendingCapMicroUsd,
      });
    } else {
      answer = await manage('POST', `${answerPath}/deny`);
    }
    assert.ok(answer?.redirect_to, JSON.stringify(answer));
    return { requestId, request, redirectTo: answer.redirect_to };
  }

  // `toolgate publish DIR` with an API key of the `manage` scope; the new function's id.
  function publish(dir, key) {
    const out = execFileSync(toolgate, ['publish', dir, '--json', '--url', baseUrl, '--api-key', key], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return JSON.parse(out.toString()).function_id;
  }

  async function stop() {
    if (launcher.exitCode === null) {
      launcher.kill('SIGTERM');
      await launcherExit;
    }
    fs.rmSync(dataDir, { recursive: true, force: true });
  }

  return { baseUrl, dataDir, signUp, consent, publish, stop };
}
