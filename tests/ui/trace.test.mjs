// The trace page in a real browser (Debian's chromium through
// playwright-core) against a real `strata serve` of its own: the canvas
// waterfall and minimap, the critical path, span search, the flame graph
// and self time of a trace whose answers the test knows, and a trace of
// 100,000 spans opened, scrolled to its end and its last span selected.
// Screenshots go to $STRATA_UI_SCREENSHOTS as ui.test.mjs's do.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { createAdmin, launchBrowser, newContext, sendOtlp, watchedPage } from './browser.mjs';
import { reviewPage } from './page_review.mjs';
import { startServer } from './strata_server.mjs';

let server;
let browser;
let page;
const problems = [];  // console errors and CSP refusals, checked at the end

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await watchedPage(await newContext(browser), problems);
  await createAdmin(page, server);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const sendSpans = (body) => sendOtlp(server, 'traces', body);

const hex = (n, width) => n.toString(16).padStart(width, '0');

// OTLP/JSON resourceSpans, one per service, of `spans`: [id, parent id,
// service, name, start ms after `base` (ns), duration ms, extra].
const fiveSecondsAgo = () => BigInt(Date.now()) * 1_000_000n - 5_000_000_000n;
function resourceSpans(traceId, spans, base = fiveSecondsAgo()) {
  const now = base;
  const byService = new Map();
  for (const [id, parent, service, name, startMs, durationMs, extra = {}] of spans) {
    const start = now + BigInt(Math.round(startMs * 1e6));
    if (!byService.has(service)) byService.set(service, []);
    byService.get(service).push({
      traceId,
      spanId: id,
      parentSpanId: parent,
      name,
      kind: 2,
      startTimeUnixNano: String(start),
      endTimeUnixNano: String(start + BigInt(Math.round(durationMs * 1e6))),
      ...extra,
    });
  }
  return {
    resourceSpans: [...byService].map(([service, list]) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [{ spans: list }],
    })),
  };
}

// frontend's root (0-100 ms) waits on checkout's reserve (5-45), cache's
// lookup (10-60) and checkout's charge (50-95), which calls payments'
// audit (52-54, failed) and then authorize (55-90). Critical path: root,
// charge, authorize, audit (done before authorize started), reserve;
// not lookup (it overlaps charge and ends after charge starts). Self time: lookup 50, reserve 40, authorize 35, root 10
// (100 - the union 5..95), charge 8 (45 - 2 - 35), audit 2.
const SHOP = '4d1c2b3a495867768594a3b2c1d0e0f1';
const id = (n) => hex(0xa0 + n, 16);
const shopSpans = [
  [id(0), '', 'frontend', 'GET /shop', 0, 100],
  [id(1), id(0), 'checkout', 'reserve', 5, 40, { attributes: [{ key: 'order.id', value: { stringValue: 'Order-7731' } }] }],
  [id(2), id(0), 'cache', 'lookup', 10, 50],
  [id(3), id(0), 'checkout', 'charge', 50, 45],
  [id(4), id(3), 'payments', 'audit', 52, 2, { status: { code: 2 } }],
  [id(5), id(3), 'payments', 'authorize', 55, 35],
];

const treegrid = () => page.getByRole('treegrid', { name: 'Spans' });
const rowNames = async () =>
  (await treegrid().getByRole('row').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').replace(/ [0-9.]+ ms$/, ''));

// Whether the canvas has a painted pixel at (x, y) CSS pixels.
function paintedAt(selector, x, y) {
  return page.evaluate(
    ([s, px, py]) => {
      const canvas = document.querySelector(s);
      const ratio = canvas.width / canvas.getBoundingClientRect().width;
      const data = canvas.getContext('2d').getImageData(Math.round(px * ratio), Math.round(py * ratio), 1, 1).data;
      return data[3] > 0;
    },
    [selector, x, y],
  );
}

test('the waterfall draws its bars on a canvas beside the tree, with a minimap', async () => {
  await sendSpans(resourceSpans(SHOP, shopSpans));
  await page.goto(`${server.api}/traces/${SHOP}`);
  await treegrid().getByRole('row').nth(5).waitFor();
  assert.deepEqual(await rowNames(), [
    '▾frontend GET /shop',
    'checkout reserve',
    'cache lookup',
    '▾checkout charge',
    'payments audit',
    'payments authorize',
  ]);
  // charge (row 3) runs 50-95 of 100 ms: its bar covers 73% of the bars'
  // width and not 30%; lookup (row 2, 10-60 ms) the other way round.
  // (Neither is where a tick line is drawn: every 20 ms at this width.)
  const width = await page.locator('canvas.waterfall-bars').evaluate((c) => c.getBoundingClientRect().width);
  assert.ok(width > 200, `bars canvas ${width} px wide`);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.73, 3 * 24 + 12), true);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.3, 3 * 24 + 12), false);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.3, 2 * 24 + 12), true);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.73, 2 * 24 + 12), false);
  // The minimap has every span: the root's line crosses its whole width.
  const map = await page.locator('canvas.trace-minimap').boundingBox();
  assert.equal(await paintedAt('canvas.trace-minimap', map.width * 0.5, 2), true);
  // Folding charge hides its two spans and their bars, and is kept in
  // the URL across a reload; unfolding brings them back.
  await treegrid().getByRole('row').nth(3).getByRole('button', { name: 'Collapse' }).click();
  await page.waitForURL(new RegExp(`fold=${id(3)}`));
  await page.reload();
  await treegrid().getByRole('row').nth(3).waitFor();
  assert.equal(await treegrid().getByRole('row').count(), 4);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.73, 3 * 24 + 12), true);
  assert.equal(await paintedAt('canvas.waterfall-bars', width * 0.73, 5 * 24 + 12), false);
  await treegrid().getByRole('row').nth(3).getByRole('button', { name: 'Expand' }).click();
  await page.waitForURL((url) => !url.search.includes('fold'));
  await treegrid().getByRole('row').nth(5).waitFor();
  await reviewPage(page, 'trace-waterfall');
});

test('the trace page asks for its trace once, beside the sign-in check rather than after it', async () => {
  const seen = [];
  const onRequest = (request) => {
    const path = new URL(request.url()).pathname;
    if (path === `/api/v1/traces/${SHOP}` || path === '/api/v1/auth/me') seen.push(`asked ${path}`);
  };
  const onResponse = (response) => {
    if (new URL(response.url()).pathname === '/api/v1/auth/me') seen.push('answered /api/v1/auth/me');
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  try {
    await page.goto(`${server.api}/traces/${SHOP.toUpperCase()}`);
    await treegrid().getByRole('row').nth(5).waitFor();
  } finally {
    page.off('request', onRequest);
    page.off('response', onResponse);
  }
  const asked = `asked /api/v1/traces/${SHOP}`;
  assert.equal(seen.filter((e) => e === asked).length, 1, seen.join(', '));
  assert.ok(seen.indexOf(asked) < seen.indexOf('answered /api/v1/auth/me'), seen.join(', '));
});

test('the critical path toggle marks the spans the trace waited on', async () => {
  const toggle = page.getByRole('checkbox', { name: 'Critical path' });
  await toggle.check();
  await page.waitForURL(/critical=1/);
  const onPath = await treegrid()
    .getByRole('row')
    .evaluateAll((rows) =>
      rows
        .filter((row) => row.querySelector('[aria-label*="critical path"]'))
        .map((row) => row.querySelector('.span-name').textContent.replace(/^[▾▸]/, '')),
    );
  assert.deepEqual(onPath, [
    'frontend GET /shop',
    'checkout reserve',
    'checkout charge',
    'payments audit',
    'payments authorize',
  ]);
  await reviewPage(page, 'trace-critical-path');
  // Kept across a reload, and off again.
  await page.reload();
  assert.equal(await toggle.isChecked(), true);
  await toggle.uncheck();
  await page.waitForURL((url) => !url.search.includes('critical'));
});

test('span search counts matches, steps through them and can show only them', async () => {
  const box = page.getByLabel('Find spans');
  await box.fill('PAY');
  await page.waitForURL(/find=PAY/);
  const status = page.locator('.match-count');
  assert.equal(await status.innerText(), '0 of 2');
  // Enter goes to the next match in tree order (audit, then authorize),
  // Shift+Enter back; each is selected and its details shown.
  await box.press('Enter');
  await page.waitForURL(new RegExp(`span=${id(4)}`));
  assert.equal(await status.innerText(), '1 of 2');
  await box.press('Enter');
  await page.waitForURL(new RegExp(`span=${id(5)}`));
  assert.equal(await status.innerText(), '2 of 2');
  await page.getByRole('complementary', { name: 'Span details' }).getByRole('heading', { name: 'authorize' }).waitFor();
  await box.press('Enter');  // wraps around
  await page.waitForURL(new RegExp(`span=${id(4)}`));
  await box.press('Shift+Enter');
  await page.waitForURL(new RegExp(`span=${id(5)}`));
  await page.getByRole('button', { name: 'Previous' }).click();
  await page.waitForURL(new RegExp(`span=${id(4)}`));
  // Matches only: the two payments spans and their ancestors.
  await page.getByLabel('Matches only').check();
  await page.waitForURL(/matches=1/);
  assert.deepEqual(await rowNames(), ['▾frontend GET /shop', '▾checkout charge', 'payments audit', 'payments authorize']);
  await reviewPage(page, 'trace-search');
  // All of it is in the URL.
  await page.reload();
  await treegrid().getByRole('row').nth(3).waitFor();
  assert.equal(await treegrid().getByRole('row').count(), 4);
  assert.equal(await page.getByLabel('Find spans').inputValue(), 'PAY');
  assert.equal(await status.innerText(), '1 of 2');
  await page.getByLabel('Matches only').uncheck();
  await treegrid().getByRole('row').nth(5).waitFor();
  // Stepping to a match inside a folded span unfolds it.
  await treegrid().getByRole('row').nth(3).getByRole('button', { name: 'Collapse' }).click();
  await page.waitForURL(/fold=/);
  assert.equal(await treegrid().getByRole('row').count(), 4);
  await page.getByRole('button', { name: 'Next' }).click();
  await page.waitForURL((url) => !url.search.includes('fold') && url.search.includes(`span=${id(5)}`));
  assert.equal(await treegrid().getByRole('row').count(), 6);
  // A span id matches too.
  await box.fill(id(2));
  assert.equal(await status.innerText(), '0 of 1');
  // So does an attribute value, which the server finds (the compact form
  // has no attributes): reserve's order.id, whatever the case.
  await box.fill('order-77');
  await page.waitForFunction(() => document.querySelector('.match-count').textContent === '0 of 1');
  await box.press('Enter');
  await page.waitForURL(new RegExp(`span=${id(1)}`));
  await box.fill('');
  assert.equal(await status.innerText(), '');
});

test('the flame graph draws the trace by depth and selects a span by click', async () => {
  await page.getByRole('navigation', { name: 'Trace views' }).getByRole('link', { name: 'Flame graph' }).click();
  await page.waitForURL(/view=flame/);
  const canvas = page.locator('canvas.flame-canvas');
  await canvas.waitFor();
  const box = await canvas.boundingBox();
  // Three levels of 20 px: charge is at depth 1 from 50% to 95%.
  await canvas.click({ position: { x: box.width * 0.7, y: 30 } });
  await page.waitForURL(new RegExp(`span=${id(3)}`));
  const panel = page.getByRole('complementary', { name: 'Span details' });
  await panel.getByRole('heading', { name: 'charge' }).waitFor();
  // authorize at depth 2, 55-90%.
  await canvas.click({ position: { x: box.width * 0.6, y: 50 } });
  await page.waitForURL(new RegExp(`span=${id(5)}`));
  await panel.getByRole('heading', { name: 'authorize' }).waitFor();
  // Nothing at depth 2 before 52%: the selection stays.
  await canvas.click({ position: { x: box.width * 0.3, y: 50 } });
  assert.match(page.url(), new RegExp(`span=${id(5)}`));
  assert.equal(await paintedAt('canvas.flame-canvas', box.width * 0.3, 50), false);
  assert.equal(await paintedAt('canvas.flame-canvas', box.width * 0.3, 10), true);
  await reviewPage(page, 'trace-flame');
  await page.reload();
  await panel.getByRole('heading', { name: 'authorize' }).waitFor();
  await page.locator('canvas.flame-canvas').waitFor();
  // The keyboard, from authorize: up to charge, left to lookup (no
  // children: down stays), Home to reserve, up to the root, down to its
  // earliest child, End to charge, down to its earliest child.
  await page.locator('div.flame').focus();
  for (const [key, n] of [['ArrowUp', 3], ['ArrowLeft', 2], ['ArrowDown', 2], ['Home', 1],
    ['ArrowUp', 0], ['ArrowDown', 1], ['End', 3], ['ArrowDown', 4]]) {
    await page.keyboard.press(key);
    await page.waitForURL(new RegExp(`span=${id(n)}`));
  }
  await panel.getByRole('heading', { name: 'audit' }).waitFor();
});

test('self time per operation: duration less the children, most first', async () => {
  await page.getByRole('navigation', { name: 'Trace views' }).getByRole('link', { name: 'Self time' }).click();
  await page.waitForURL(/view=stats/);
  const table = page.getByRole('table', { name: 'Self time by operation' });
  await table.locator('tbody tr').first().waitFor();
  const rows = (await table.locator('tbody tr').allInnerTexts()).map((t) => t.split('\t').slice(0, 5).join(' '));
  assert.deepEqual(rows, [
    'cache lookup 1 50.0 ms 50.0 ms',
    'checkout reserve 1 40.0 ms 40.0 ms',
    'payments authorize 1 35.0 ms 35.0 ms',
    'frontend GET /shop 1 100 ms 10.0 ms',
    'checkout charge 1 45.0 ms 8.00 ms',
    'payments audit 1 2.00 ms 2.00 ms',
  ]);
  await reviewPage(page, 'trace-self-time');
});

// A trace of 100,000 spans: a root, 1,000 children and 99 grandchildren
// under each but the last (98), the last grandchild with an attribute of
// its own.
const BIG = '0b1e2d3c4b5a69788796a5b4c3d2e1f0';
const BIG_COUNT = 100_000;
const BATCHES = 4;  // requests of 25,000 spans (~6 MB of JSON each; the limit is 16 MiB)
const lastSpanId = hex(BIG_COUNT, 16);

function bigTraceSpans() {
  const spans = [[hex(1, 16), '', 'gateway', 'GET /report', 0, 1_500]];
  let next = 2;
  for (let i = 0; i < 1_000; i += 1) {
    const parent = hex(next, 16);
    spans.push([parent, hex(1, 16), 'reports', `part ${i % 10}`, 1 + i, 5]);
    next += 1;
    for (let j = 0; j < 99 && next <= BIG_COUNT; j += 1) {
      const extra = next === BIG_COUNT ? { attributes: [{ key: 'report.last', value: { boolValue: true } }] } : {};
      spans.push([hex(next, 16), parent, 'store', `read ${j % 7}`, 1 + i + j * 0.04, 0.03, extra]);
      next += 1;
    }
  }
  return spans;
}

test('a trace of 100,000 spans opens, scrolls to its end and selects its last span', async (t) => {
  const spans = bigTraceSpans();
  assert.equal(spans.length, BIG_COUNT);
  const size = BIG_COUNT / BATCHES;
  const base = fiveSecondsAgo();
  for (let b = 0; b < BATCHES; b += 1) {
    await sendSpans(resourceSpans(BIG, spans.slice(b * size, (b + 1) * size), base));
  }
  const opened = Date.now();
  await page.goto(`${server.api}/traces/${BIG}`);
  await page.getByText('100,000 spans').waitFor({ timeout: 60_000 });
  await treegrid().getByRole('row').first().waitFor();
  const openMs = Date.now() - opened;
  assert.equal(await treegrid().getAttribute('aria-rowcount'), String(BIG_COUNT));
  // Only the rows in view are in the page.
  assert.ok((await treegrid().getByRole('row').count()) < 200);
  // Scrolled 180 px a frame for 60 frames (as ui/bench.mjs scrolls), the
  // rows in the page always cover the view, in order, each placed and
  // named as the tree says (row 1 the root; then each part and its 99
  // reads).
  const walk = await treegrid().evaluate((element) => new Promise((done) => {
    const expected = (index) => {
      if (index === 1) return { level: 1, name: 'gateway GET /report' };
      const k = index - 2;
      const m = k % 100;
      return m === 0 ? { level: 2, name: `reports part ${Math.floor(k / 100) % 10}` } : { level: 3, name: `store read ${(m - 1) % 7}` };
    };
    const problems = [];
    element.scrollTop = 0;
    const frame = (left) => {
      const rows = [...element.querySelectorAll('[role=row]')];
      rows.forEach((row, n) => {
        const index = Number(row.getAttribute('aria-rowindex'));
        const want = expected(index);
        const name = row.querySelector('.span-name').textContent.replace(/^[▾▸]/, '');
        if (n > 0 && index !== Number(rows[n - 1].getAttribute('aria-rowindex')) + 1) problems.push(`row ${index} after ${rows[n - 1].getAttribute('aria-rowindex')}`);
        const at = row.getBoundingClientRect().top - element.firstElementChild.getBoundingClientRect().top;
        if (Math.abs(at - (index - 1) * 24) > 0.5) problems.push(`row ${index} at ${at}`);
        if (name !== want.name || Number(row.getAttribute('aria-level')) !== want.level) problems.push(`row ${index}: ${name}`);
      });
      const firstIndex = Number(rows[0].getAttribute('aria-rowindex'));
      const lastIndex = Number(rows[rows.length - 1].getAttribute('aria-rowindex'));
      const inView = [Math.floor(element.scrollTop / 24) + 1, Math.ceil((element.scrollTop + element.clientHeight) / 24)];
      if (firstIndex > inView[0] || lastIndex < inView[1]) problems.push(`rows ${firstIndex}-${lastIndex} for ${inView}`);
      if (left === 0 || problems.length > 5) return done({ problems, top: element.scrollTop });
      element.scrollTop += 180;
      requestAnimationFrame(() => frame(left - 1));
    };
    requestAnimationFrame(() => frame(60));
  }));
  assert.deepEqual(walk.problems, []);
  assert.equal(walk.top, 60 * 180);
  // The minimap scrolls the waterfall: pressed at its middle, the view
  // moves to the middle rows.
  const map = await page.locator('canvas.trace-minimap').boundingBox();
  await page.mouse.click(map.x + map.width / 2, map.y + map.height / 2);
  const middle = await treegrid().evaluate((e) => e.scrollTop / e.scrollHeight);
  assert.ok(Math.abs(middle - 0.5) < 0.02, `minimap click scrolled to ${middle}`);
  // To the bottom: the last row is the last grandchild.
  const scrolled = Date.now();
  await treegrid().evaluate((e) => {
    e.scrollTop = e.scrollHeight;
  });
  const last = treegrid().locator(`[role=row][aria-rowindex="${BIG_COUNT}"]`);
  await last.waitFor();
  const scrollMs = Date.now() - scrolled;
  assert.match(await last.innerText(), /store\s+read 6/);
  // Its bar is drawn (at least 2 px wide): it starts at 1,003.88 of 1,500
  // ms, and nothing is drawn a fifth of the way in (no tick there either).
  const barBox = await page.locator('canvas.waterfall-bars').boundingBox();
  const y = (await last.boundingBox()).y - barBox.y + 12;
  assert.equal(await paintedAt('canvas.waterfall-bars', barBox.width * (1003.88 / 1500) + 1, y), true);
  assert.equal(await paintedAt('canvas.waterfall-bars', barBox.width * 0.21, y), false);
  await last.click();
  await page.waitForURL(new RegExp(`span=${lastSpanId}`));
  // Keys move the selection: Home goes to the root at the top, End back
  // to the last span, Up to the one above it.
  await treegrid().focus();
  await page.keyboard.press('Home');
  await page.waitForURL(new RegExp(`span=${hex(1, 16)}`));
  await treegrid().locator('[role=row][aria-rowindex="1"][aria-selected=true]').waitFor();
  await page.keyboard.press('End');
  await page.waitForURL(new RegExp(`span=${lastSpanId}`));
  await page.keyboard.press('ArrowUp');
  await page.waitForURL(new RegExp(`span=${hex(BIG_COUNT - 1, 16)}`));
  await page.keyboard.press('ArrowDown');
  await page.waitForURL(new RegExp(`span=${lastSpanId}`));
  const panel = page.getByRole('complementary', { name: 'Span details' });
  await panel.getByRole('table', { name: 'Span attributes' }).getByText('report.last').waitFor();
  t.diagnostic(`100,000 spans: open ${openMs} ms, scroll to the end ${scrollMs} ms`);
  await reviewPage(page, 'trace-100k');
});

test('the trace page never broke a Content-Security-Policy rule or threw', async () => {
  // The session check before the setup link signs in answers 401.
  assert.deepEqual(problems.filter((text) => !/status of 401/.test(text)), []);
});
