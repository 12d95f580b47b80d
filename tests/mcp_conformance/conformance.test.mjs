// The official MCP conformance suite (@modelcontextprotocol/conformance) against a whole
// Toolgate system (docs/mcp.md, "Conformance"). Starts its own system, publishes the suite's
// server fixture (fixture/, a JavaScript tool like any other), and runs the suite's frozen
// requirement set of each protocol revision against the fixture's per-tool endpoint, and the
// scenarios that apply to an aggregating server against the workspace endpoint.
//
// The suite cannot send an API key, so it talks to a forwarding proxy (authorizing_proxy.mjs)
// that adds the Authorization header and passes everything else, Host and Origin included,
// unchanged. A scenario may fail only when expected-failures/<revision>.yaml lists it, with its
// reason; one listed that passes fails the run too (the suite's own rule), so the lists shrink as
// the gateway grows.
//
//   TOOLGATE_BIN_DIR=build/bin node --test tests/mcp_conformance/conformance.test.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { startSystem } from '../node/toolgate_system.mjs';
import { startAuthorizingProxy } from './authorizing_proxy.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const suite = path.join(here, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

let system;
let proxy;
let fixtureId;

// Runs the suite with args in a directory of its own (it writes results/ there); resolves with
// its exit code and output.
function runSuite(name, args) {
  const cwd = path.join(system.dataDir, 'conformance', name);
  fs.mkdirSync(cwd, { recursive: true });
  return new Promise((resolve, reject) => {
    const argv = ['--import', path.join(here, 'node20_fs_glob.mjs'), suite, ...args,
      '--output-dir', path.join(cwd, 'results')];
    const child = spawn(process.execPath, argv, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) => resolve({ code, output }));
  });
}

// The suite's per-scenario and total lines, for the log of the run (docs/mcp.md's figures).
function summary(output) {
  return output
    .split('\n')
    .filter((line) => /^\s*[✓✗] .*: \d+ passed|^Total:|Unexpected|Stale/.test(line))
    .join('\n');
}

// Every check that failed, with the suite's reason, from the results it wrote (checks.json of
// each scenario).
function failedChecks(name) {
  const results = path.join(system.dataDir, 'conformance', name, 'results');
  if (!fs.existsSync(results)) return '';
  const lines = [];
  const files = fs.readdirSync(results, { recursive: true }).filter((f) => f.endsWith('checks.json'));
  for (const file of files.sort()) {
    for (const check of JSON.parse(fs.readFileSync(path.join(results, file), 'utf8'))) {
      if (check.status === 'FAILURE') {
        lines.push(`${path.dirname(file)}: ${check.id}: ${check.errorMessage ?? ''}`.slice(0, 600));
      }
    }
  }
  return lines.join('\n');
}

async function assertSuitePasses(name, args) {
  const { code, output } = await runSuite(name, args);
  console.log(`--- ${name}\n${summary(output)}\nfailed checks:\n${failedChecks(name)}`);
  assert.equal(code, 0, `the conformance suite failed (${name}):\n${output.slice(-20000)}`);
}

before(async () => {
  system = await startSystem('toolgate-mcp-conformance-');
  const manage = await system.signUp('Conformance Org');
  await manage('POST', '/billing/top-ups', { amount_micro_usd: 100_000_000 });
  const { key } = await manage('POST', '/api-keys', { name: 'conformance', scopes: ['invoke', 'manage'] });
  // publish writes the new function's id into the manifest: publish a copy.
  const dir = path.join(system.dataDir, 'fixture');
  fs.cpSync(path.join(here, 'fixture'), dir, { recursive: true });
  fixtureId = system.publish(dir, key);
  proxy = await startAuthorizingProxy(system.baseUrl, key);
}, { timeout: 300_000 });

after(async () => {
  if (proxy) await proxy.close();
  if (system) await system.stop();
}, { timeout: 60_000 });

for (const revision of ['2025-11-25', '2026-07-28']) {
  test(`per-tool endpoint: every scenario ${revision} requires`, { timeout: 600_000 }, async () => {
    await assertSuitePasses(`function-${revision}`, [
      'server',
      '--url', `${proxy.url}/mcp/functions/${fixtureId}`,
      '--requirements', revision,
      '--expected-failures', path.join(here, 'expected-failures', `${revision}.yaml`),
    ]);
  });
}

// The workspace endpoint is Toolgate's own server over every tool of the organization (the
// fixture's tools under a prefix), so only the scenarios about the server itself apply.
const WORKSPACE_SCENARIOS = {
  '2025-11-25': ['server-initialize', 'ping', 'dns-rebinding-protection'],
  '2026-07-28': ['server-stateless', 'dns-rebinding-protection'],
};
for (const [revision, scenarios] of Object.entries(WORKSPACE_SCENARIOS)) {
  for (const scenario of scenarios) {
    test(`workspace endpoint: ${scenario} at ${revision}`, { timeout: 300_000 }, async () => {
      await assertSuitePasses(`workspace-${scenario}-${revision}`, [
        'server',
        '--url', `${proxy.url}/mcp`,
        '--scenario', scenario,
        '--spec-version', revision,
        '--expected-failures', path.join(here, 'expected-failures', `workspace-${revision}.yaml`),
      ]);
    });
  }
}
