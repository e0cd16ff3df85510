// Drives strata's MCP server with the official TypeScript SDK client over
// both transports (Streamable HTTP at /mcp, and stdio through `strata mcp`)
// and checks every tool's answer against the REST API's.
//
// Usage: node mcp_client.mjs STRATA_BINARY API_ADDRESS READ_TOKEN INGEST_TOKEN REVOKED_TOKEN
// Prints one JSON line of what it checked; exits 1 on the first failure.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

const [binary, api, reader, ingest, revoked] = process.argv.slice(2);
const BUDGET = 24 * 1024;
const base = `http://${api}`;
const report = { tools: {}, budgets: {}, refused: {} };

async function rest(path, init = {}) {
  const response = await fetch(base + path, {
    ...init,
    headers: { Authorization: `Bearer ${reader}`, ...(init.headers ?? {}) },
  });
  const text = await response.text();
  assert.equal(response.status, 200, `${path}: ${text}`);
  return JSON.parse(text);
}

async function sql(query) {
  return rest('/api/v1/sql', {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain' },
    body: query,
  });
}

function httpClient(token) {
  const headers = token === undefined ? {} : { Authorization: `Bearer ${token}` };
  const transport = new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
    requestInit: { headers },
  });
  return { client: new Client({ name: 'strata-e2e', version: '1.0.0' }), transport };
}

// Calls a tool and returns its parsed JSON, checking the budget.
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.equal(result.content.length, 1, name);
  const text = result.content[0].text;
  assert.ok(Buffer.byteLength(text) <= BUDGET, `${name}: ${Buffer.byteLength(text)} bytes`);
  assert.notEqual(result.isError, true, `${name}: ${text}`);
  return JSON.parse(text);
}

const windowArgs = (() => {
  const end = new Date(Date.now() + 60_000);
  const start = new Date(end.getTime() - 2 * 3600_000);
  return { start: start.toISOString(), end: end.toISOString() };
})();
const restWindow = `start=${encodeURIComponent(windowArgs.start)}&end=${encodeURIComponent(windowArgs.end)}`;

async function checkTools(client, label) {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['find_traces', 'get_trace', 'investigate_error', 'query_metrics',
    'run_sql', 'search_logs', 'service_map', 'service_performance', 'services_overview']);
  for (const tool of tools) assert.equal(tool.inputSchema.type, 'object', tool.name);

  // services_overview: the same services and request counts as /api/v1/services.
  const overview = await call(client, 'services_overview', windowArgs);
  const services = await rest(`/api/v1/services?${restWindow}`);
  const restCounts = Object.fromEntries(services.services.map((s) => [s.name, s.request_count]));
  const mcpCounts = Object.fromEntries(overview.services.map((s) => [s.name, s.requests.count]));
  assert.deepEqual(mcpCounts, restCounts);
  assert.ok(overview.services.length > 0, 'no services');
  const busiest = overview.services[0].name;

  // completion/complete: the prompts' service argument completes to the
  // services with that prefix.
  const completed = await client.complete({
    ref: { type: 'ref/prompt', name: 'why_is_service_slow' },
    argument: { name: 'service', value: busiest.slice(0, 2) },
  });
  assert.ok(completed.completion.values.includes(busiest), JSON.stringify(completed));
  assert.ok(completed.completion.values.every((v) => v.startsWith(busiest.slice(0, 2))));

  // find_traces: the same trace ids as /api/v1/traces.
  const found = await call(client, 'find_traces', { ...windowArgs, service: busiest, limit: 10 });
  const restTraces = await rest(`/api/v1/traces?${restWindow}&service=${encodeURIComponent(busiest)}&limit=10`);
  assert.deepEqual(found.traces.map((t) => t.trace_id).sort(),
    restTraces.traces.map((t) => t.trace_id).sort());
  assert.ok(found.traces.length > 0);

  // find_traces with TraceQL: only traces with error spans, each saying
  // how many of its spans matched; other filters beside it are refused.
  const failing = await call(client, 'find_traces', { ...windowArgs, traceql: '{ status = error }', limit: 10 });
  assert.ok(failing.traces.length > 0, 'no trace with an error span');
  for (const t of failing.traces) {
    assert.ok(t.matched_spans >= 1 && t.error_span_count >= t.matched_spans, JSON.stringify(t));
  }
  const mixed = await client.callTool({ name: 'find_traces', arguments: { traceql: '{ }', service: busiest } });
  assert.equal(mixed.isError, true, 'traceql with service must be refused');

  // get_trace: the span count and root of /api/v1/traces/{id}.
  const traceId = found.traces[0].trace_id;
  const trace = await call(client, 'get_trace', { trace_id: traceId });
  const counted = await sql(`SELECT count(*) FROM spans WHERE trace_id_hex = '${traceId}'`);
  assert.equal(trace.span_count, Number(counted.rows[0][0]));
  assert.equal(Object.values(trace.spans_by_service).reduce((a, b) => a + b, 0), trace.span_count);
  assert.equal(trace.critical_path[0].span_id, trace.root.span_id);
  assert.match(trace.start, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  assert.equal(typeof trace.duration_ms, 'number');

  // search_logs: the same records as /api/v1/logs.
  const logs = await call(client, 'search_logs', { ...windowArgs, limit: 20 });
  const restLogs = await rest(`/api/v1/logs?${restWindow}&limit=20`);
  assert.equal(logs.logs.length, restLogs.logs.length);
  assert.ok(logs.logs.length > 0, 'no logs');

  // run_sql: the answer of POST /api/v1/sql.
  const query = 'SELECT service_name, count(*) AS n FROM spans GROUP BY 1 ORDER BY 1';
  const mcpSql = await call(client, 'run_sql', { sql: query });
  assert.deepEqual(mcpSql.rows, (await sql(query)).rows);

  // service_map: the edges of /api/v1/service-map.
  const map = await call(client, 'service_map', windowArgs);
  const restMap = await rest(`/api/v1/service-map?${restWindow}`);
  assert.equal(map.edges.length, restMap.edges.length);

  // service_performance: the operations of /api/v1/services/{name}/operations.
  const perf = await call(client, 'service_performance', { ...windowArgs, service: busiest, limit: 100 });
  const ops = await rest(`/api/v1/services/${encodeURIComponent(busiest)}/operations?${restWindow}`);
  assert.deepEqual(perf.operations.map((o) => o.name).sort(),
    ops.operations.map((o) => o.name).sort());

  // query_metrics: the series of /api/v1/metrics/query.
  const metricNames = await rest(`/api/v1/metrics/names?${restWindow}`);
  assert.ok(metricNames.metrics.length > 0, 'no metrics');
  const metric = metricNames.metrics[0].name;
  const series = await call(client, 'query_metrics', { ...windowArgs, name: metric, step: '1m' });
  const restSeries = await rest(`/api/v1/metrics/query?${restWindow}&name=${encodeURIComponent(metric)}&step=1m`);
  assert.equal(series.series.length, restSeries.series.length);

  // investigate_error: for a service and for a trace.
  const byService = await call(client, 'investigate_error', { ...windowArgs, service: busiest });
  assert.equal(byService.service, busiest);
  const byTrace = await call(client, 'investigate_error', { trace_id: traceId });
  assert.equal(byTrace.trace.trace_id, traceId);

  // Resources and prompts.
  const { resources } = await client.listResources();
  assert.ok(resources.some((r) => r.uri === 'strata://docs/sql'));
  const listed = await client.readResource({ uri: 'strata://services' });
  assert.ok(JSON.parse(listed.contents[0].text).services.length > 0);
  const prompt = await client.getPrompt({ name: 'why_is_service_slow', arguments: { service: busiest } });
  assert.ok(prompt.messages[0].content.text.includes(busiest));

  // A tool error is a result the agent can read, not a protocol error.
  const bad = await client.callTool({ name: 'get_trace', arguments: { trace_id: 'xyz' } });
  assert.equal(bad.isError, true);
  report.tools[label] = tools.length;
  return { overview, traceId };
}

async function checkBudgets(client) {
  // The largest trace of the traffic, with its full span list asked for.
  const largest = await sql('SELECT trace_id_hex, count(*) AS n FROM spans GROUP BY 1 ORDER BY 2 DESC LIMIT 1');
  const [traceId, spans] = largest.rows[0];
  const summary = await call(client, 'get_trace', { trace_id: traceId, include_spans: true, span_limit: 500 });
  assert.equal(summary.span_count, Number(spans));
  if (summary.spans.length < summary.span_count) {
    assert.equal(summary.truncated, true);
    assert.ok(summary.notes.some((n) => n.includes('span_offset=')), JSON.stringify(summary.notes));
    const next = await call(client, 'get_trace', { trace_id: traceId, include_spans: true, span_offset: summary.next_span_offset });
    assert.ok(next.spans.length > 0);
  }
  // A day of logs, as many as one call may ask for.
  const end = new Date(Date.now() + 60_000);
  const day = await call(client, 'search_logs', {
    start: new Date(end.getTime() - 86400_000).toISOString(), end: end.toISOString(), limit: 200,
  });
  assert.ok(day.logs.length > 0);
  report.budgets = { largest_trace_spans: Number(spans), shown_spans: summary.spans.length,
    day_logs_shown: day.logs.length, day_logs_truncated: day.truncated };
}

async function expectRefused(token, label, status) {
  const { client, transport } = httpClient(token);
  await assert.rejects(client.connect(transport), (e) => {
    report.refused[label] = String(e.message ?? e).slice(0, 80);
    return String(e.message ?? e).includes(String(status)) || e.code === status;
  }, label);
}

try {
  const { client, transport } = httpClient(reader);
  await client.connect(transport);
  assert.ok(transport.sessionId, 'no Mcp-Session-Id');
  const http = await checkTools(client, 'http');
  await checkBudgets(client);
  await transport.terminateSession();
  await client.close();

  const stdio = new StdioClientTransport({
    command: binary, args: ['mcp', '--api-address', api, '--token', reader], stderr: 'inherit',
  });
  const viaStdio = new Client({ name: 'strata-e2e-stdio', version: '1.0.0' });
  await viaStdio.connect(stdio);
  const again = await checkTools(viaStdio, 'stdio');
  assert.deepEqual(again.overview.services.map((s) => s.name), http.overview.services.map((s) => s.name));
  await viaStdio.close();

  await expectRefused(undefined, 'no token', 401);
  await expectRefused(ingest, 'ingest token', 403);
  await expectRefused(revoked, 'revoked token', 401);
  console.log(JSON.stringify({ ok: true, ...report }));
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error?.stack ?? error), ...report }));
  process.exit(1);
}
