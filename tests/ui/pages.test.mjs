// The service map, metrics and saved-query pages in a real browser
// (Debian's chromium through playwright-core) against a real `strata
// serve` of their own: traffic and metrics sent over OTLP/HTTP JSON by the
// test appear on the map and the metrics page, and saved queries are
// listed, opened, renamed, deleted and kept from other users. Screenshots
// go to $STRATA_UI_SCREENSHOTS as ui.test.mjs's do.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAdmin, launchBrowser, newContext, sendOtlp as sendOtlpTo, watchedPage } from './browser.mjs';
import { reviewPage } from './page_review.mjs';
import { startServer } from './strata_server.mjs';

let server;
let browser;
let page;
const problems = [];  // console errors and CSP refusals, checked at the end

const newPage = (context) => watchedPage(context, problems);

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await newPage(await newContext(browser));
  await createAdmin(page, server);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// Screenshots in both themes and an axe-core check in both (page_review.mjs).
const screenshots = (name) => reviewPage(page, name);

const sendOtlp = (signal, body) => sendOtlpTo(server, signal, body);

const string = (key, value) => ({ key, value: { stringValue: value } });
const hex = (n, width) => n.toString(16).padStart(width, '0');

// `count` traces: frontend's SERVER root calls checkout (a CLIENT span and
// checkout's SERVER child), which queries PostgreSQL (a CLIENT span with
// no child: a virtual database node). The second trace's checkout span
// fails.
function shopTraces(count) {
  const now = BigInt(Date.now()) * 1_000_000n - 3_000_000_000n;
  const at = (ms) => String(now + BigInt(ms) * 1_000_000n);
  const frontend = [];
  const checkout = [];
  for (let i = 0; i < count; i += 1) {
    const traceId = hex(0xfeed0000n + BigInt(i), 32);
    const id = (n) => hex(BigInt(i) * 16n + BigInt(n), 16);
    frontend.push(
      { traceId, spanId: id(1), name: 'GET /', kind: 2, startTimeUnixNano: at(0), endTimeUnixNano: at(100) },
      { traceId, spanId: id(2), parentSpanId: id(1), name: 'POST checkout', kind: 3, startTimeUnixNano: at(5), endTimeUnixNano: at(90) },
    );
    checkout.push(
      {
        traceId, spanId: id(3), parentSpanId: id(2), name: 'POST /checkout', kind: 2,
        startTimeUnixNano: at(10), endTimeUnixNano: at(80), status: i === 1 ? { code: 2 } : {},
      },
      {
        traceId, spanId: id(4), parentSpanId: id(3), name: 'SELECT orders', kind: 3,
        startTimeUnixNano: at(20), endTimeUnixNano: at(30),
        attributes: [string('db.system.name', 'postgresql'), string('db.namespace', 'shop')],
      },
    );
  }
  const resource = (service, spans) => ({
    resource: { attributes: [string('service.name', service)] },
    scopeSpans: [{ spans }],
  });
  return { resourceSpans: [resource('frontend', frontend), resource('checkout', checkout)] };
}

test('the service map starts empty, then draws the calls the test sent', async () => {
  await page.getByRole('link', { name: 'Map', exact: true }).click();
  await page.waitForURL(/\/map$/);
  await page.getByText('No service sent spans in this window').waitFor();
  assert.equal(await page.locator('svg.service-map').count(), 0);

  await sendOtlp('traces', shopTraces(3));
  await page.reload();
  const call = page.locator('svg.service-map g.edge[data-source="frontend"][data-target="checkout"]');
  await call.waitFor();
  assert.match(await call.getAttribute('class'), /\bcall\b/);
  // 3 calls, one failed: 33% errors, unhealthy.
  const label = (from, to) =>
    page.locator(`svg.service-map .edge-label text[data-source="${from}"][data-target="${to}"]`).textContent();
  assert.match(await label('frontend', 'checkout'), /^3 calls · 33% errors · p95 /);
  assert.match(await call.getAttribute('class'), /\bunhealthy\b/);
  const database = page.locator('svg.service-map g.edge[data-source="checkout"][data-target="postgresql shop"]');
  assert.match(await database.getAttribute('class'), /\bdatabase\b/);
  assert.match(await label('checkout', 'postgresql shop'), /^3 calls · p95 /);
  // Only these two edges: no call goes the other way.
  assert.equal(await page.locator('svg.service-map g.edge').count(), 2);
  // Services are links; the database is drawn as a database and is not one.
  const checkout = page.locator('svg.service-map a.node[data-name="checkout"]');
  assert.match(await checkout.getAttribute('aria-label'), /^service checkout: 3 requests, 33% errors, unhealthy$/);
  assert.equal(await page.locator('svg.service-map g.node.database[data-name="postgresql shop"] rect').count(), 1);
  assert.equal(await page.locator('svg.service-map a.node').count(), 2);
  // Layered: callers left of callees.
  const xOf = async (name) => {
    const box = await page.locator(`svg.service-map [data-name="${name}"].node`).boundingBox();
    return box.x + box.width / 2;
  };
  assert.ok(await xOf('frontend') < await xOf('checkout'));
  assert.ok(await xOf('checkout') < await xOf('postgresql shop'));
  const rows = (await page.getByRole('table', { name: 'Calls' }).locator('tbody tr').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' '));
  assert.equal(rows.length, 2);
  assert.ok(rows.some((r) => /^frontend checkout call 3 33%/.test(r)), rows.join('\n'));
  await screenshots('map-layered');
});

test('the force layout is kept in the URL and draws the same graph', async () => {
  const layered = await page.locator('svg.service-map a.node[data-name="checkout"] > g').getAttribute('transform');
  await page.getByRole('group', { name: 'Layout' }).getByRole('button', { name: 'Force' }).click();
  await page.waitForURL(/\/map\?layout=force$/);
  await page.locator('svg.service-map.force').waitFor();
  assert.equal(await page.getByRole('button', { name: 'Force' }).getAttribute('aria-pressed'), 'true');
  assert.equal(await page.locator('svg.service-map g.edge').count(), 2);
  assert.equal(await page.locator('svg.service-map .node').count(), 3);
  const forced = await page.locator('svg.service-map a.node[data-name="checkout"] > g').getAttribute('transform');
  assert.notEqual(forced, layered);
  await screenshots('map-force');
  // The layout survives a reload: it is in the URL.
  await page.reload();
  await page.locator('svg.service-map.force').waitFor();
});

test('a service node opens its service page, by keyboard too', async () => {
  await page.locator('svg.service-map a.node[data-name="checkout"]').click();
  await page.waitForURL(/\/services\/checkout\?range=now-1h$/);
  await page.getByRole('heading', { name: 'checkout' }).waitFor();
  await page.goBack();
  await page.waitForURL(/\/map\?layout=force$/);
  await page.locator('svg.service-map a.node[data-name="frontend"]').focus();
  await page.keyboard.press('Enter');
  await page.waitForURL(/\/services\/frontend\?range=now-1h$/);
  await page.getByRole('heading', { name: 'frontend' }).waitFor();
});

// A gauge with two values two minutes apart (more than the default step,
// a sixtieth of the window, so one per step), and a delta histogram with
// two points of bucket counts.
function meterMetrics() {
  const now = BigInt(Date.now()) * 1_000_000n;
  const ago = (s) => String(now - BigInt(s) * 1_000_000_000n);
  return {
    resourceMetrics: [{
      resource: { attributes: [string('service.name', 'meter')] },
      scopeMetrics: [{
        metrics: [
          {
            name: 'ui.queue.depth',
            description: 'Items waiting in the queue',
            unit: '{items}',
            gauge: {
              dataPoints: [
                { timeUnixNano: ago(150), asInt: '3', attributes: [string('queue', 'orders')] },
                { timeUnixNano: ago(30), asInt: '7', attributes: [string('queue', 'orders')] },
              ],
            },
          },
          {
            name: 'ui.request.duration',
            description: 'How long requests took',
            unit: 'ms',
            histogram: {
              aggregationTemporality: 1,
              dataPoints: [
                { startTimeUnixNano: ago(100), timeUnixNano: ago(90), count: '3', sum: 60, explicitBounds: [10, 50, 100], bucketCounts: ['1', '2', '0', '0'], attributes: [string('route', '/pay')] },
                { startTimeUnixNano: ago(40), timeUnixNano: ago(30), count: '5', sum: 400, explicitBounds: [10, 50, 100], bucketCounts: ['0', '1', '3', '1'], attributes: [string('route', '/pay')] },
              ],
            },
          },
        ],
      }],
    }],
  };
}

test('metrics sent by the test are listed with their description and charted with their values', async () => {
  await sendOtlp('metrics', meterMetrics());
  await page.getByRole('link', { name: 'Metrics', exact: true }).click();
  // The service page before had a range in its URL: the header's link keeps it.
  await page.waitForURL(/\/metrics-explorer\?range=now-1h$/);
  const list = page.getByRole('navigation', { name: 'Metric names' });
  await list.getByText('Items waiting in the queue').waitFor();
  assert.equal(await list.getByRole('link').count(), 2);
  assert.match(await list.getByRole('link', { name: /ui\.request\.duration/ }).innerText(), /histogram · ms/);
  // The search filters by name or description, and is in the URL.
  await page.getByLabel('Search metrics').fill('queue');
  await page.waitForURL(/q=queue/);
  assert.equal(await list.getByRole('link').count(), 1);
  await list.getByRole('link', { name: /ui\.queue\.depth/ }).click();
  await page.waitForURL(/metric=ui\.queue\.depth/);
  const facts = page.locator('dl.metric-facts');
  await facts.getByText('queue', { exact: true }).waitFor();
  assert.match((await facts.innerText()).replace(/\s+/g, ' '), /Type gauge Unit \{items\} Points 2 Attributes queue/);
  // avg per step: the two values, one per step.
  await page.locator('figure.chart canvas').waitFor();
  const series = page.getByRole('table', { name: 'Series' });
  const row = (await series.locator('tbody tr').first().innerText()).replace(/\s+/g, ' ');
  assert.equal(row, 'service.name=meter queue=orders 2 3 items 7 items 7 items');
  await screenshots('metrics');
  // Another aggregation is another URL.
  await page.getByLabel('Aggregation').selectOption('max');
  await page.waitForURL(/agg=max/);
  await series.locator('tbody tr').first().waitFor();
});

test('a histogram shows as percentiles and as a heatmap of the counts sent', async () => {
  await page.getByLabel('Search metrics').fill('');
  const list = page.getByRole('navigation', { name: 'Metric names' });
  await list.getByRole('link', { name: /ui\.request\.duration/ }).click();
  await page.waitForURL(/metric=ui\.request\.duration/);
  // Percentiles first: p50, p95 and p99 of the one series.
  const series = page.getByRole('table', { name: 'Series' });
  await series.locator('tbody tr').nth(2).waitFor();
  const labels = (await series.locator('tbody th').allInnerTexts()).map((t) => t.trim());
  assert.deepEqual(labels, ['p50 service.name=meter route=/pay', 'p95 service.name=meter route=/pay',
    'p99 service.name=meter route=/pay']);
  await page.getByRole('button', { name: 'Heatmap' }).click();
  await page.waitForURL(/view=heatmap/);
  const canvas = page.locator('figure.heatmap canvas');
  await canvas.waitFor();
  assert.match(await canvas.getAttribute('aria-label'), /^Heatmap of ui\.request\.duration: 8 observations in \d+ steps/);
  const buckets = (await page.getByRole('table', { name: 'Buckets' }).locator('tbody tr').allInnerTexts())
    .map((t) => t.replace(/\s+/g, ' ').trim());
  assert.deepEqual(buckets, ['≤ 10 1', '≤ 50 3', '≤ 100 3', '> 100 1']);
  // The canvas has cells drawn on it.
  const painted = await canvas.evaluate((c) => {
    const data = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) n += 1;
    return n;
  });
  assert.ok(painted > 100, `${painted} painted pixels`);
  await screenshots('metrics-heatmap');
});

async function save(name, { shared = false } = {}) {
  await page.getByRole('button', { name: 'Save', exact: true }).click();
  const form = page.getByRole('form', { name: 'Save query' });
  await form.getByLabel('Name').fill(name);
  if (shared) await form.getByLabel('Shared with everyone').check();
  await form.getByRole('button', { name: 'Save query' }).click();
  await page.getByRole('status').getByText(`Saved “${name}”.`).waitFor();
}

test('a trace search and a SQL query are saved, listed and opened again', async () => {
  await page.getByRole('link', { name: 'Traces', exact: true }).click();
  await page.getByLabel('Service').fill('checkout');
  await page.getByLabel('Status').selectOption('error');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/service=checkout&status=error/);
  await page.getByRole('table', { name: 'Traces' }).locator('tbody tr').first().waitFor();
  await save('failed checkouts');

  await page.goto(`${server.api}/sql?q=${encodeURIComponent('SELECT count(*) AS n FROM spans')}&range=now-6h`);
  await page.locator('.cm-editor').waitFor();
  await save('span count', { shared: true });

  await page.getByRole('link', { name: 'Saved', exact: true }).click();
  const table = page.getByRole('table', { name: 'Saved queries' });
  await table.locator('tbody tr').nth(1).waitFor();
  const rows = (await table.locator('tbody tr').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  assert.deepEqual(rows, [
    'failed checkouts Traces now-1h you private Open Rename Delete',
    'span count SQL now-6h you shared Open Rename Delete',
  ]);
  await screenshots('saved');

  await table.getByRole('link', { name: 'Open failed checkouts' }).click();
  await page.waitForURL(/\/traces\?service=checkout&status=error&range=now-1h$/);
  assert.equal(await page.getByLabel('Service').inputValue(), 'checkout');
  assert.equal(await page.getByLabel('Status').inputValue(), 'error');
  const found = page.getByRole('table', { name: 'Traces' });
  await found.locator('tbody tr').first().waitFor();
  assert.equal(await found.locator('tbody tr').count(), 1);  // the one failed checkout

  await page.goBack();
  await table.getByRole('link', { name: 'Open span count' }).click();
  await page.waitForURL(/\/sql\?q=SELECT\+count/);
  await page.locator('.cm-content').getByText('SELECT count(*) AS n FROM spans').waitFor();
  assert.equal(await page.getByLabel('Time range').inputValue(), 'now-6h');
});

test('saved queries are renamed and deleted; a viewer sees shared ones, not private ones', async () => {
  await page.getByRole('link', { name: 'Saved', exact: true }).click();
  const table = page.getByRole('table', { name: 'Saved queries' });
  await table.getByRole('button', { name: 'Rename failed checkouts' }).click();
  await table.getByLabel('New name').fill('checkout errors');
  await table.getByRole('button', { name: 'Save name' }).click();
  await table.getByRole('row', { name: /checkout errors/ }).waitFor();

  const created = await page.evaluate(async () => {
    const response = await fetch('/api/v1/users', {
      method: 'POST',
      headers: { 'X-Strata-Request': '1', 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'vic@example.com', name: 'Vic', role: 'viewer' }),
    });
    return response.json();
  });
  const vicContext = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const vic = await newPage(vicContext);
  await vic.goto(created.password_link.url);
  await vic.getByLabel(/New password/).fill('vic has a long password');
  await vic.getByRole('button', { name: 'Set password and sign in' }).click();
  await vic.waitForURL(/\/services$/);
  await vic.getByRole('link', { name: 'Saved', exact: true }).click();
  const vicTable = vic.getByRole('table', { name: 'Saved queries' });
  await vicTable.locator('tbody tr').first().waitFor();
  const rows = (await vicTable.locator('tbody tr').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim());
  assert.deepEqual(rows, ['span count SQL now-6h ada@example.com shared Open']);
  // A viewer saves privately only: no sharing offered.
  await vic.getByRole('link', { name: 'Traces', exact: true }).click();
  await vic.getByRole('button', { name: 'Save', exact: true }).click();
  await vic.getByRole('form', { name: 'Save query' }).waitFor();
  assert.equal(await vic.getByLabel('Shared with everyone').count(), 0);
  await vicContext.close();

  page.once('dialog', (dialog) => dialog.accept());
  await table.getByRole('button', { name: 'Delete checkout errors' }).click();
  await table.getByRole('row', { name: /checkout errors/ }).waitFor({ state: 'detached' });
  assert.equal(await table.locator('tbody tr').count(), 1);
});

test('the map and metrics pages come as chunks of their own', async () => {
  const scripts = [];
  const fresh = await newPage(page.context());
  fresh.on('request', (request) => {
    if (request.url().endsWith('.js')) scripts.push(new URL(request.url()).pathname);
  });
  await fresh.goto(`${server.api}/services`);
  await fresh.locator('table.data tbody tr').first().waitFor();
  assert.ok(!scripts.some((p) => /\/(map|metrics)-/.test(p)), scripts.join());
  await fresh.getByRole('link', { name: 'Map', exact: true }).click();
  await fresh.locator('svg.service-map').waitFor();
  await fresh.getByRole('link', { name: 'Metrics', exact: true }).click();
  await fresh.getByRole('navigation', { name: 'Metric names' }).waitFor();
  assert.ok(scripts.some((p) => /^\/assets\/map-[A-Z0-9]+\.js$/.test(p)), scripts.join());
  assert.ok(scripts.some((p) => /^\/assets\/metrics-[A-Z0-9]+\.js$/.test(p)), scripts.join());
  await fresh.close();
});

test('no page broke a Content-Security-Policy rule or threw', async () => {
  // The viewer's first page asks who is signed in before they are: its 401
  // is logged as a resource error; nothing else may be.
  assert.deepEqual(problems.filter((text) => !/status of 401/.test(text)), []);
});
