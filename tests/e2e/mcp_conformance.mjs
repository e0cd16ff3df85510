// Runs the official MCP conformance suite (@modelcontextprotocol/conformance,
// pinned in package.json) against a running strata's /mcp.
//
// Usage: node mcp_conformance.mjs <api host:port> <read token> <expected.yaml>
//
// The suite's server command takes only a URL, and strata's /mcp wants a
// token, so this script listens on a loopback port of its own and relays
// each request to strata unchanged but for an added Authorization header
// (the Host and Origin the suite sends reach strata as sent, so its
// DNS-rebinding checks test strata's). The suite's per-check results are
// read back from its output directory, and one JSON line is printed:
// {"ok": bool, "passed": n, "failed": n, "failures": [...], "unexpected": [...]},
// where `unexpected` lists failed scenarios that <expected.yaml> (the
// scenarios docs/mcp.md explains) does not name, and scenarios it names
// that now pass (so the list cannot go stale). Exit status 0 when ok.

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const [api, token, expectedPath] = process.argv.slice(2);
if (!api || !token || !expectedPath) {
  console.error('usage: node mcp_conformance.mjs <api host:port> <read token> <expected.yaml>');
  process.exit(2);
}
const [apiHost, apiPort] = api.split(':');
const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.join(here, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist',
                      'index.js');

// The expected-failures file: `server:` then `  - <scenario>` lines.
function readExpected(file) {
  const names = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const match = line.match(/^\s*-\s*([A-Za-z0-9_./-]+)\s*(#.*)?$/);
    if (match) names.push(match[1]);
  }
  return names;
}

const relay = http.createServer((req, res) => {
  const headers = { ...req.headers, authorization: `Bearer ${token}` };
  const upstream = http.request(
      { host: apiHost, port: Number(apiPort), method: req.method, path: req.url, headers },
      (answer) => {
        res.writeHead(answer.statusCode, answer.headers);
        answer.pipe(res);
      });
  upstream.on('error', (error) => {
    res.writeHead(502, { 'content-type': 'text/plain' });
    res.end(`relay: ${error.message}`);
  });
  req.pipe(upstream);
});
await new Promise((resolve) => relay.listen(0, '127.0.0.1', resolve));
const url = `http://127.0.0.1:${relay.address().port}/mcp`;

const outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-mcp-conformance-'));
const child = spawn(process.execPath, [bin, 'server', '--url', url, '--output-dir', outDir],
                    { stdio: ['ignore', 'pipe', 'pipe'] });
let log = '';
child.stdout.on('data', (chunk) => { log += chunk; });
child.stderr.on('data', (chunk) => { log += chunk; });
const timer = setTimeout(() => child.kill('SIGKILL'), 240_000);
const exitCode = await new Promise((resolve) => child.on('close', resolve));
clearTimeout(timer);
relay.close();

// Each scenario writes <outDir>/<run>/<scenario>/checks.json (or similar):
// find every checks.json below outDir.
function findChecks(dir, found = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) findChecks(full, found);
    else if (entry.name === 'checks.json') found.push(full);
  }
  return found;
}
const files = findChecks(outDir);
let passed = 0;
let failed = 0;
const failures = [];
const failedScenarios = new Set();
const seenScenarios = new Set();
for (const file of files) {
  const scenario = path.basename(path.dirname(file)).replace(/^server-/, '')
      .replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
  seenScenarios.add(scenario);
  for (const check of JSON.parse(fs.readFileSync(file, 'utf8'))) {
    if (check.status === 'SUCCESS') passed++;
    if (check.status === 'FAILURE') {
      failed++;
      failedScenarios.add(scenario);
      failures.push(`${scenario}: ${check.id}: ${check.errorMessage ?? ''}`.slice(0, 300));
    }
  }
}
const expected = readExpected(expectedPath);
const unexpected = [];
for (const scenario of failedScenarios) {
  if (!expected.includes(scenario)) unexpected.push(`fails but is not expected: ${scenario}`);
}
for (const scenario of expected) {
  if (seenScenarios.has(scenario) && !failedScenarios.has(scenario)) {
    unexpected.push(`expected to fail but passes: ${scenario}`);
  }
}
const ok = files.length > 0 && passed > 0 && unexpected.length === 0;
console.log(JSON.stringify({
  ok, exitCode, scenarios: seenScenarios.size, passed, failed, failures, unexpected,
  ...(ok ? {} : { log: log.slice(-4000) }),
}));
fs.rmSync(outDir, { recursive: true, force: true });
process.exit(ok ? 0 : 1);
