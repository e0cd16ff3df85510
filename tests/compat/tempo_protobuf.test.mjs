// The Tempo API against a real `strata serve`, as Grafana's Tempo data
// source calls it: a trace sent over OTLP/HTTP comes back from
// /tempo/api/v2/traces/{id} and /tempo/api/traces/{id} as Tempo's protobuf,
// decoded here by Debian's protoc against tempo_trace.proto and OTLP's own
// trace.proto (fetched by scripts/setup.sh into .deps/protos), with the id
// trimmed of its leading zeros as Tempo prints ids; and a TraceQL search
// finds it.
//
// STRATA_BINARY: the server (default build/release/strata).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { startServer, threeSpanTrace } from '../ui/strata_server.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const traceId = '00000000000000000000000000abc123';
let server;
let cookie;

before(async () => {
  server = await startServer();
  const setup = await fetch(`${server.api}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
    body: JSON.stringify({
      token: server.setupToken, email: 'admin@example.com', name: 'Admin',
      password: 'correct horse battery staple',
    }),
  });
  assert.equal(setup.status, 201, await setup.text());
  cookie = setup.headers.get('set-cookie').split(';')[0];
  const sent = await fetch(`${server.otlpHttp}/v1/traces`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.ingestToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(threeSpanTrace(traceId)),
  });
  assert.equal(sent.status, 200, await sent.text());
});

after(async () => {
  await server?.stop();
});

const get = (pathAndQuery, headers = {}) =>
  fetch(`${server.api}/tempo${pathAndQuery}`, { headers: { Cookie: cookie, ...headers } });

function decode(message, bytes) {
  const run = spawnSync('protoc', [
    `--decode=strata.tempo_test.${message}`,
    `-I${here}`, `-I${path.join(root, '.deps/protos')}`,
    path.join(here, 'tempo_trace.proto'),
  ], { input: bytes, timeout: 60_000 });
  assert.equal(run.status, 0, `protoc failed: ${run.stderr}`);
  return run.stdout.toString();
}

test('trace by id as TraceByIDResponse (v2) and Trace (v1), ids trimmed as Tempo prints them', async () => {
  for (const [route, message] of [['/api/v2/traces/abc123', 'TraceByIDResponse'],
                                  ['/api/traces/abc123', 'Trace']]) {
    const answer = await get(route, { Accept: 'application/protobuf' });
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('content-type'), 'application/protobuf');
    const text = decode(message, Buffer.from(await answer.arrayBuffer()));
    for (const name of ['POST /checkout', 'GET cart', 'GET /cart/items']) {
      assert.ok(text.includes(`name: "${name}"`), `${route}: ${name} missing from\n${text}`);
    }
    assert.equal((text.match(/^\s+span_id:/gm) ?? []).length, 3, text);
    assert.ok(text.includes('string_value: "checkout"') && text.includes('string_value: "cart"'));
    assert.equal(text.startsWith('trace {'), message === 'TraceByIDResponse', text.slice(0, 40));
  }
});

test('TraceQL search finds the trace, in Tempo\'s JSON', async () => {
  const q = encodeURIComponent('{ resource.service.name = "cart" && span.http.route = "/cart" }');
  const answer = await get(`/api/search?q=${q}&limit=5`);
  assert.equal(answer.status, 200);
  const body = await answer.json();
  assert.deepEqual(body.traces.map((t) => t.traceID), [traceId]);
  assert.equal(body.traces[0].rootServiceName, 'checkout');
  assert.equal(body.traces[0].rootTraceName, 'POST /checkout');
  assert.equal(body.traces[0].spanSets[0].matched, 1);
  assert.equal(body.traces[0].spanSets[0].spans[0].name, 'GET /cart/items');
});

test('Save & test: echo needs a credential', async () => {
  assert.equal((await get('/api/echo')).status, 200);
  assert.equal((await fetch(`${server.api}/tempo/api/echo`)).status, 401);
});
