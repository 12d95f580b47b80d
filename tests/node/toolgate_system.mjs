// A whole Toolgate system for the Node.js suites (tests/mcp_sdk, tests/mcp_conformance): starts
// `toolgate up` on free ports in a fresh data directory, waits until it answers, signs up
// organizations through the management API, publishes tools with the CLI, and stops it.
//
//   const system = await startSystem('toolgate-mcp-sdk-');
//   const manage = await system.signUp('Org');          // the API with a member's session
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
export async function startSystem(prefix, { extraEnv = {} } = {}) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  const log = fs.openSync(path.join(dataDir, 'launcher.log'), 'w');
  const launcher = spawn(toolgate, ['up', '--data-dir', dataDir, '--http-port', '0'], {
    stdio: ['ignore', log, log],
    env: { ...process.env, ...extraEnv },
  });
  const launcherExit = new Promise((resolve) => launcher.once('exit', resolve));
  const baseUrl = await waitForSystem(dataDir, launcher, 180_000);

  // The management API with the session cookie of a new member of a new organization.
  async function signUp(organization) {
    const response = await fetch(`${baseUrl}/api/v1/auth/signup`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        email: `node-${Date.now()}-${Math.random().toString(16).slice(2)}@example.com`,
        password: 'correct horse battery',
        organization,
      }),
    });
    assert.equal(response.status, 201, await response.clone().text());
    const cookie = response.headers.get('set-cookie').split(';')[0];
    return async (method, urlPath, body) => {
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

  return { baseUrl, dataDir, signUp, publish, stop };
}
