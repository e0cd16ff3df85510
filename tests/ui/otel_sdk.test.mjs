// The story a new user lives, in a real browser: telemetry sent by the
// official OpenTelemetry JS SDK (the pinned packages of tests/e2e, through
// tests/e2e/otel_send.mjs: a tracer, a logger and a meter provider and
// their OTLP/gRPC exporters, with the ingest token first boot printed)
// shows on the services page, its trace opens with typed attributes and
// the failed span's message, its logs are listed, and its metrics are
// named on the metrics page.

import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { createAdmin, launchBrowser, newContext, watchedPage } from './browser.mjs';
import { reviewPage } from './page_review.mjs';
import { startServer } from './strata_server.mjs';

const sender = join(dirname(fileURLToPath(import.meta.url)), '..', 'e2e', 'otel_send.mjs');
const service = 'e2e-grpc';

let server;
let browser;
let page;
let sent;  // what otel_send.mjs says it sent
const problems = [];

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await watchedPage(await newContext(browser), problems);
  await createAdmin(page, server);
  const grpc = server.grab(/OTLP\/gRPC listening on ([0-9.]+:[0-9]+)/);
  const runId = `ui${process.pid}`;
  const { stdout } = await promisify(execFile)(
    process.execPath, [sender, 'grpc', grpc, server.ingestToken, runId], { timeout: 60_000 });
  sent = JSON.parse(stdout.trim().split('\n').pop());
  assert.equal(sent.traceIds.length, 3);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

test('the services page lists the service the SDK sent spans for', async () => {
  await page.goto(`${server.api}/services?range=now-1h`);
  const row = page.locator('table.data tbody tr', { hasText: service });
  await row.waitFor();
  assert.equal(await page.locator('table.data tbody tr').count(), 1);
  assert.match(await row.getByRole('link', { name: service }).getAttribute('href'), /^\/services\/e2e-grpc/);
});

test('a trace the SDK sent opens with its three spans, typed attributes and the error', async () => {
  await page.goto(`${server.api}/traces/${sent.traceIds[0]}`);
  const rows = page.getByRole('treegrid', { name: 'Spans' }).getByRole('row');
  await rows.nth(2).waitFor();
  const names = (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').replace(/ [0-9.]+ [a-zµ]+$/, ''));
  assert.deepEqual(names, [`▾${service} GET /orders/0`, `${service} SELECT orders`, `${service} charge card`]);

  const panel = page.getByRole('complementary', { name: 'Span details' });
  await rows.nth(1).click();
  await panel.getByText('query.start').waitFor();
  await panel.getByRole('table', { name: 'Span attributes' }).filter({ hasText: 'db.system' }).waitFor();
  const attributes = (await panel.getByRole('table', { name: 'Span attributes' }).innerText()).replace(/\s+/g, ' ');
  // As the SDK typed them: a string, an int, a double and a bool.
  assert.match(attributes, /db\.system "postgresql"/);
  assert.match(attributes, /rows 12/);
  assert.match(attributes, /ratio 0\.25/);
  assert.match(attributes, /cached false/);
  const resource = await panel.getByRole('table', { name: 'Resource attributes' }).innerText();
  assert.match(resource, /service\.version\s+"?1\.2\.3/);

  await rows.nth(2).click();
  await panel.getByText('card declined').waitFor();
  // The attributes come with the span's details, fetched on selection.
  await panel.getByRole('table', { name: 'Span attributes' }).filter({ hasText: 'tags' }).waitFor();
  assert.match(
    (await panel.getByRole('table', { name: 'Span attributes' }).innerText()).replace(/\s+/g, ' '),
    /tags \["payments", "retry"\]/);
  await reviewPage(page, 'otel-sdk-trace');
});

test('the logs the SDK sent are listed, the error among them', async () => {
  await page.goto(`${server.api}/logs?service=${service}&range=now-1h`);
  const records = page.getByRole('table', { name: 'Log records' });
  await records.locator('tbody tr.log').nth(4).waitFor();
  const bodies = await records.locator('tbody tr.log td.body').allInnerTexts();
  assert.deepEqual([...bodies].sort(), [...sent.logBodies].sort());
  const error = records.locator('tbody tr.log', { hasText: sent.logBodies[4] });
  assert.match(await error.innerText(), /ERROR/);
});

test('the metrics the SDK sent are named on the metrics page', async () => {
  await page.goto(`${server.api}/metrics-explorer?range=now-1h`);
  const list = page.getByRole('navigation', { name: 'Metric names' });
  for (const name of sent.metricNames) {
    await list.getByRole('link', { name: new RegExp(name.replaceAll('.', '\\.')) }).waitFor();
  }
  assert.match(
    await list.getByRole('link', { name: new RegExp(sent.metricNames[1].replaceAll('.', '\\.')) }).innerText(),
    /histogram · ms/);
});

test('no page broke a Content-Security-Policy rule or threw', () => {
  // The setup page asks who is signed in before anyone is (a 401 the
  // browser logs as a resource error); nothing else may be there.
  assert.deepEqual(problems.filter((text) => !/status of 401/.test(text)), []);
});
