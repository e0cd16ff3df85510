// The server-initiated stream of strata's MCP server (GET /mcp, docs/mcp.md):
// the official SDK client gets log notifications on the GET stream it
// opens by itself and resumes it with Last-Event-ID (resumeStream); raw
// requests then check the ids, the exact replay after a Last-Event-ID,
// one stream per session (a second replaces the first), refusals (404, 401, 400) and that DELETE
// ends the open stream.
//
// Usage: node mcp_streams.mjs API_ADDRESS READ_TOKEN OTHER_READ_TOKEN
// Prints one JSON line of what it checked; exits 1 on the first failure.
import assert from 'node:assert/strict';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

const [api, reader, other] = process.argv.slice(2);
const url = `http://${api}/mcp`;
const report = {};
const auth = (token) => ({ Authorization: `Bearer ${token}` });

// Resolves when `predicate` holds, polling; fails after 10 s.
async function until(predicate, label) {
  const deadline = Date.now() + 10_000;
  while (!predicate()) {
    assert.ok(Date.now() < deadline, `timed out: ${label}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function post(session, body, token = reader) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...auth(token), 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', 'Mcp-Session-Id': session },
    body: JSON.stringify({ jsonrpc: '2.0', ...body }),
  });
  const text = await response.text();
  assert.equal(response.status, body.id === undefined ? 202 : 200, text);
  return text;
}

const callTool = (session, id, name) =>
  post(session, { id, method: 'tools/call', params: { name, arguments: {} } });

// A raw GET stream: its events as they arrive ({id, data}), and whether it ended.
async function openStream(session, lastEventId, token = reader) {
  const controller = new AbortController();
  const headers = { ...auth(token), Accept: 'text/event-stream', 'Mcp-Session-Id': session };
  if (lastEventId !== undefined) headers['Last-Event-ID'] = lastEventId;
  const response = await fetch(url, { headers, signal: controller.signal });
  const stream = { status: response.status, events: [], ended: false, abort: () => controller.abort() };
  if (response.status !== 200) {
    await response.body?.cancel();
    return stream;
  }
  assert.match(response.headers.get('content-type'), /^text\/event-stream/);
  (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of response.body) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = {};
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) event.id = line.slice(4);
            if (line.startsWith('data: ')) event.data = line.slice(6);
          }
          if (event.id !== undefined) stream.events.push(event);
        }
      }
    } catch {
      // aborted by the test
    }
    stream.ended = true;
  })();
  return stream;
}

const messages = (stream) => stream.events.filter((e) => e.data).map((e) => JSON.parse(e.data));

try {
  // 1. The SDK client: its own GET stream carries the log notifications.
  const client = new Client({ name: 'strata-e2e-streams', version: '1.0.0' });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: auth(reader) } });
  const logs = [];
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
  await client.connect(transport);
  await client.setLoggingLevel('info');
  await client.callTool({ name: 'services_overview', arguments: {} });
  await until(() => logs.length === 1, 'the SDK client gets a log notification');
  assert.equal(logs[0].level, 'info');
  assert.equal(logs[0].logger, 'strata.tools');
  assert.equal(logs[0].data.tool, 'services_overview');
  report.sdk_notification = logs[0];
  const session = transport.sessionId;
  // The SDK's transport resumes from an id: a second transport of the
  // same session, after the first let go of its stream.
  await client.close();
  await callTool(session, 50, 'service_map');
  const resumed = [];
  const ids = [];
  const second = new StreamableHTTPClientTransport(new URL(url), { sessionId: session, requestInit: { headers: auth(reader) } });
  second.onmessage = (m) => resumed.push(m);
  await second.start();
  await second.resumeStream('1', { onresumptiontoken: (id) => ids.push(id) });
  await until(() => resumed.length === 2, 'the SDK transport is replayed both messages after id 1');
  assert.deepEqual(resumed.map((m) => m.params.data.tool), ['services_overview', 'service_map']);
  assert.ok(ids.every((id) => Number(id) > 1), JSON.stringify(ids));
  report.sdk_resumed = { ids, tools: resumed.map((m) => m.params.data.tool) };
  await second.close();

  // 2. Raw: ids increase, and a reconnect is replayed exactly what it missed.
  const stream = await openStream(session);
  assert.equal(stream.status, 200);
  await until(() => stream.events.length >= 1, 'a priming event');
  assert.equal(stream.events[0].data ?? '', '');
  for (let i = 0; i < 3; ++i) await callTool(session, 100 + i, 'services_overview');
  await until(() => messages(stream).length === 3, 'three notifications');
  const seen = stream.events.map((e) => Number(e.id));
  for (let i = 1; i < seen.length; ++i) assert.ok(seen[i] > seen[i - 1], `ids increase: ${seen}`);
  stream.abort();
  await until(() => stream.ended, 'the aborted stream ends');
  const lastSeen = stream.events[stream.events.length - 1].id;
  const firstKept = stream.events[2].id; // the second notification's id
  for (let i = 0; i < 2; ++i) await callTool(session, 200 + i, 'service_map');
  const again = await openStream(session, firstKept);
  assert.equal(again.status, 200);
  await until(() => messages(again).length === 3, 'replayed: the last seen one and the two missed');
  const replayedIds = again.events.map((e) => e.id);
  assert.equal(replayedIds[0], lastSeen);
  assert.deepEqual(messages(again).map((m) => m.params.data.tool), ['services_overview', 'service_map', 'service_map']);
  for (let i = 1; i < replayedIds.length; ++i) assert.ok(Number(replayedIds[i]) > Number(replayedIds[i - 1]));
  report.replay = { after: firstKept, ids: replayedIds };

  // 3. Refusals.
  assert.equal((await openStream('0'.repeat(32))).status, 404);
  assert.equal((await openStream(session, undefined, other)).status, 404);
  const anonymous = await fetch(url, { headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': session } });
  assert.equal(anonymous.status, 401);
  assert.equal((await openStream(session, '999999')).status, 400); // never sent
  assert.equal(again.ended, false);
  report.refused = { unknown_session: 404, other_credential: 404, no_token: 401 };

  // 4. A second GET of the session replaces its open stream.
  const replacing = await openStream(session, replayedIds[replayedIds.length - 1]);
  assert.equal(replacing.status, 200);
  await until(() => again.ended, 'the replaced stream ends');
  report.second_stream = 'replaces the first';

  // 5. DELETE ends the open stream.
  const deleted = await fetch(url, { method: 'DELETE', headers: { ...auth(reader), 'Mcp-Session-Id': session } });
  assert.equal(deleted.status, 200);
  await until(() => replacing.ended, 'DELETE ends the stream');
  assert.equal((await openStream(session)).status, 404);
  report.delete_ends_stream = true;
  console.log(JSON.stringify({ ok: true, ...report }));
  process.exit(0);
} catch (error) {
  console.log(JSON.stringify({ ok: false, error: String(error?.stack ?? error), ...report }));
  process.exit(1);
}
