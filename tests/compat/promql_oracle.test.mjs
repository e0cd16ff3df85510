// strata's Prometheus API against a real Prometheus as oracle. The same
// samples (promql_samples.mjs) go to a `strata serve` over OTLP/HTTP and,
// as OpenMetrics, through `promtool tsdb create-blocks-from openmetrics`
// into a throwaway Prometheus on loopback (Debian's 2.42, installed by
// scripts/setup.sh --tests). Every query of promql_oracle_queries.txt, and
// generated combinations, is evaluated by both as instant queries at two
// times and as a range query; the answers must be equal: the same result
// type, the same series (label sets), and values equal within 1e-9
// relative. Then promtool, a real Prometheus HTTP client, queries strata.
//
// STRATA_BINARY: the server (default build/release/strata).

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer } from '../ui/strata_server.mjs';
import { buildModel, openMetrics, otlpRequests, POINTS, STEP_S } from './promql_samples.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const t0 = Math.floor(Date.now() / 60_000) * 60 - 4 * 3600;
const model = buildModel(t0);
const tEnd = t0 + (POINTS - 1) * STEP_S;
let strata;
let token;
let prometheus;
let promUrl;
let work;

async function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitReady(url, what, ms = 60_000) {
  const until = Date.now() + ms;
  for (;;) {
    try {
      const answer = await fetch(url);
      if (answer.ok) return;
    } catch { /* not listening yet */ }
    if (Date.now() > until) throw new Error(`${what} not ready after ${ms} ms`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

before(async () => {
  work = mkdtempSync(path.join(tmpdir(), 'strata-promql-'));
  writeFileSync(path.join(work, 'data.om'), openMetrics(model));
  const blocks = spawnSync('promtool', ['tsdb', 'create-blocks-from', 'openmetrics',
    path.join(work, 'data.om'), path.join(work, 'tsdb')], { timeout: 120_000 });
  assert.equal(blocks.status, 0, `promtool create-blocks failed: ${blocks.stderr}`);
  writeFileSync(path.join(work, 'prometheus.yml'), 'global: {}\n');
  const port = await freePort();
  promUrl = `http://127.0.0.1:${port}`;
  prometheus = spawn('prometheus', [`--config.file=${path.join(work, 'prometheus.yml')}`,
    `--storage.tsdb.path=${path.join(work, 'tsdb')}`, '--storage.tsdb.retention.time=100y',
    `--web.listen-address=127.0.0.1:${port}`, '--log.level=error'], { stdio: 'ignore' });
  await waitReady(`${promUrl}/-/ready`, 'prometheus');

  strata = await startServer();
  const setup = await fetch(`${strata.api}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
    body: JSON.stringify({ token: strata.setupToken, email: 'admin@example.com', name: 'Admin',
      password: 'correct horse battery staple' }),
  });
  assert.equal(setup.status, 201, await setup.text());
  const cookie = setup.headers.get('set-cookie').split(';')[0];
  const made = await fetch(`${strata.api}/api/v1/tokens`, {
    method: 'POST',
    headers: { Cookie: cookie, 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
    body: JSON.stringify({ name: 'oracle', scope: 'read' }),
  });
  const madeText = await made.text();
  assert.equal(made.status, 201, madeText);
  token = JSON.parse(madeText).token;
  for (const request of otlpRequests(model)) {
    const sent = await fetch(`${strata.otlpHttp}/v1/metrics`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${strata.ingestToken}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(request),
    });
    assert.equal(sent.status, 200, await sent.text());
  }
});

after(async () => {
  prometheus?.kill('SIGTERM');
  await strata?.stop();
  if (work) rmSync(work, { recursive: true, force: true });
});

// POST form-encoded (Grafana's default) to strata, GET to Prometheus.
async function ask(server, route, params) {
  const body = new URLSearchParams(params);
  const answer = server === 'strata'
    ? await fetch(`${strata.api}/prometheus/api/v1/${route}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`,
        'Content-Type': 'application/x-www-form-urlencoded' },
      body })
    : await fetch(`${promUrl}/api/v1/${route}?${body}`);
  const text = await answer.text();
  let json;
  try { json = JSON.parse(text); } catch { throw new Error(`${server} ${route}: not JSON (${answer.status}): ${text}`); }
  return { status: answer.status, json };
}

const labelKey = (metric) => JSON.stringify(Object.entries(metric ?? {}).sort());

function sameValue(a, b) {
  if (a === b) return true;
  const x = Number(a), y = Number(b);
  if (Number.isNaN(x) && Number.isNaN(y)) return true;
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

function samePoint([t1, v1], [t2, v2]) {
  return Math.abs(t1 - t2) < 1e-6 && sameValue(v1, v2);
}

// '' when equal, else what differs.
function compare(ours, theirs) {
  if (theirs.status !== 'success') {
    return ours.status === 'success' ? `Prometheus refused (${theirs.error}) but strata answered` : '';
  }
  if (ours.status !== 'success') return `strata refused: ${ours.errorType}: ${ours.error}`;
  const a = ours.data, b = theirs.data;
  if (a.resultType !== b.resultType) return `result type ${a.resultType}, Prometheus ${b.resultType}`;
  if (a.resultType === 'scalar' || a.resultType === 'string') {
    return samePoint(a.result, b.result) ? '' : `${JSON.stringify(a.result)} vs ${JSON.stringify(b.result)}`;
  }
  const mine = new Map(a.result.map((s) => [labelKey(s.metric), s]));
  if (mine.size !== a.result.length) return 'strata answered two series with the same labels';
  for (const s of b.result) {
    const m = mine.get(labelKey(s.metric));
    if (!m) return `missing series ${labelKey(s.metric)}`;
    mine.delete(labelKey(s.metric));
    if (a.resultType === 'vector') {
      if (!samePoint(m.value, s.value)) {
        return `${labelKey(s.metric)}: ${JSON.stringify(m.value)} vs ${JSON.stringify(s.value)}`;
      }
    } else {
      if (m.values.length !== s.values.length) {
        return `${labelKey(s.metric)}: ${m.values.length} points vs ${s.values.length}`;
      }
      for (let i = 0; i < s.values.length; ++i) {
        if (!samePoint(m.values[i], s.values[i])) {
          return `${labelKey(s.metric)} point ${i}: ${JSON.stringify(m.values[i])} vs ${JSON.stringify(s.values[i])}`;
        }
      }
    }
  }
  if (mine.size > 0) return `extra series ${[...mine.keys()][0]}`;
  return '';
}

function queries() {
  const listed = readFileSync(path.join(here, 'promql_oracle_queries.txt'), 'utf8').split('\n')
    .map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
  const generated = [];
  const counters = ['http_server_requests_total{job="shop/cart"}', 'http_server_request_duration_seconds_count'];
  for (const f of ['rate', 'irate', 'increase', 'resets', 'changes', 'delta', 'idelta', 'deriv']) {
    for (const range of ['45s', '2m', '13m']) {
      generated.push(`${f}(${counters[generated.length % 2]}[${range}])`);
      generated.push(`${f}(process_memory_usage_bytes{job="billing"}[${range}])`);
    }
  }
  for (const agg of ['sum', 'avg', 'min', 'max', 'count', 'stddev', 'stdvar', 'group']) {
    generated.push(`${agg} by (job) (rate(http_server_requests_total[3m]))`);
    generated.push(`${agg} without (instance, cpu_state) (system_cpu_utilization_ratio)`);
  }
  for (const f of ['avg', 'min', 'max', 'sum', 'count', 'stddev', 'last', 'present']) {
    generated.push(`${f}_over_time(system_cpu_utilization_ratio{cpu_state="system"}[90s])`);
  }
  for (const q of [0.25, 0.75, 0.95]) {
    generated.push(`histogram_quantile(${q}, sum by (le, http_route) (rate(http_server_request_duration_seconds_bucket{job="billing"}[4m])))`);
  }
  return [...listed, ...generated];
}

test('at least 200 queries answer as Prometheus answers them, instant and range', async () => {
  const all = queries();
  assert.ok(all.length >= 200, `only ${all.length} queries`);
  const failures = [];
  const instants = [t0 + 3600 + 7, tEnd - 30];
  const range = { start: t0 + 1800, end: tEnd - 600, step: 60 };
  const evaluations = [];
  for (const query of all) {
    for (const time of instants) {
      evaluations.push(['query', { query, time }, `instant ${query} @ ${time - t0}s`]);
    }
    const step = query.length % 2 ? 60 : 337;
    evaluations.push(['query_range', { query, ...range, step }, `range ${query} step ${step}`]);
  }
  // Three at a time: the API's workers answer them in parallel.
  let next = 0;
  const worker = async () => {
    while (next < evaluations.length) {
      const [route, params, what] = evaluations[next++];
      const [ours, theirs] = await Promise.all([ask('strata', route, params),
        ask('prometheus', route, params)]);
      const diff = compare(ours.json, theirs.json);
      if (diff) failures.push(`${what}: ${diff}`);
    }
  };
  await Promise.all([worker(), worker(), worker()]);
  assert.deepEqual(failures, [], `${failures.length} of ${evaluations.length} evaluations differ`);
});

test('series, labels and label values agree with Prometheus', async () => {
  const window = { start: t0, end: tEnd };
  for (const match of ['http_server_requests_total', '{__name__=~"http_server_request_duration_seconds_.*", http_route="/a"}', 'target_info']) {
    const [ours, theirs] = await Promise.all([ask('strata', 'series', { 'match[]': match, ...window }),
      ask('prometheus', 'series', { 'match[]': match, ...window })]);
    assert.equal(ours.json.status, 'success', JSON.stringify(ours.json));
    assert.deepEqual(ours.json.data.map(labelKey).sort(), theirs.json.data.map(labelKey).sort(), match);
  }
  const [ours, theirs] = await Promise.all([ask('strata', 'labels', window), ask('prometheus', 'labels', window)]);
  assert.deepEqual(ours.json.data, theirs.json.data);
  for (const name of ['job', '__name__', 'le', 'http_response_status_code']) {
    const [a, b] = await Promise.all([
      fetch(`${strata.api}/prometheus/api/v1/label/${name}/values?start=${t0}&end=${tEnd}`,
        { headers: { Authorization: `Bearer ${token}` } }).then((r) => r.json()),
      fetch(`${promUrl}/api/v1/label/${name}/values?start=${t0}&end=${tEnd}`).then((r) => r.json())]);
    assert.deepEqual(a.data, b.data, name);
  }
});

test('promtool, a Prometheus HTTP client, queries strata', () => {
  // promtool 2.42 has no auth options: the token goes as the basic-auth
  // password in the URL, which strata accepts like a bearer token.
  const url = new URL(`${strata.api}/prometheus`);
  url.username = 'promtool';
  url.password = token;
  const run = (...args) => {
    const out = spawnSync('promtool', ['query', ...args], { timeout: 60_000 });
    assert.equal(out.status, 0, `promtool query ${args.join(' ')}: ${out.stderr}`);
    return out.stdout.toString();
  };
  const instant = run('instant', `--time=${tEnd}`, url.href,
    'sum by (job) (http_server_requests_total)');
  for (const svc of model.services) assert.ok(instant.includes(`job="${svc.job}"`), instant);
  const ranged = run('range', `--start=${t0 + 600}`, `--end=${t0 + 1200}`, '--step=60s', url.href,
    'process_memory_usage_bytes{job="billing"}');
  assert.ok(ranged.includes('process_memory_usage_bytes'), ranged);
  const labels = run('labels', `--start=${t0}`, `--end=${tEnd}`, url.href, 'job');
  for (const svc of model.services) assert.ok(labels.includes(svc.job), labels);
  const series = run('series', `--start=${t0}`, `--end=${tEnd}`, '--match=target_info', url.href);
  assert.equal(series.trim().split('\n').length, 3, series);
});

test('bad requests are refused as Prometheus refuses them: same HTTP status and errorType', async () => {
  const cases = [
    ['query', {}],
    ['query', { query: 'sum(' }],
    ['query', { query: 'rate(process_memory_usage_bytes)' }],
    ['query', { query: '1', time: 'yesterday' }],
    ['query', { query: '1', timeout: 'soon' }],
    ['query_range', { query: '1', start: t0, end: tEnd }],
    ['query_range', { query: '1', start: t0, end: tEnd, step: '0' }],
    ['query_range', { query: '1', start: tEnd, end: t0, step: '60' }],
    ['query_range', { query: '1', start: 0, end: 1e9, step: '1' }],
    ['query_range', { query: 'process_memory_usage_bytes[5m]', start: t0, end: tEnd, step: '60' }],
    ['series', { start: t0, end: tEnd }],
    ['series', { 'match[]': 'sum(x)', start: t0, end: tEnd }],
  ];
  const differ = [];
  for (const [route, params] of cases) {
    const [ours, theirs] = await Promise.all([ask('strata', route, params), ask('prometheus', route, params)]);
    const what = `${route} ${JSON.stringify(params)}`;
    if (theirs.status < 400) throw new Error(`Prometheus accepted ${what}: the case is no error case`);
    if (ours.status !== theirs.status || ours.json.errorType !== theirs.json.errorType) {
      differ.push(`${what}: strata ${ours.status} ${ours.json.errorType} (${ours.json.error}), ` +
        `Prometheus ${theirs.status} ${theirs.json.errorType} (${theirs.json.error})`);
    }
  }
  // Label values are GET only, in Prometheus and in strata.
  const [a, b] = await Promise.all([
    fetch(`${strata.api}/prometheus/api/v1/label/1bad/values`, { headers: { Authorization: `Bearer ${token}` } }),
    fetch(`${promUrl}/api/v1/label/1bad/values`)]);
  const [aj, bj] = [await a.json(), await b.json()];
  if (a.status !== b.status || aj.errorType !== bj.errorType) {
    differ.push(`label/1bad/values: strata ${a.status} ${aj.errorType}, Prometheus ${b.status} ${bj.errorType}`);
  }
  assert.deepEqual(differ, []);
});
