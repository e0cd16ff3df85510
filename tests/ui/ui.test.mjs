// The web UI in a real browser (Debian's chromium through playwright-core)
// against a real `strata serve`: first boot through the printed setup link,
// telemetry sent over OTLP/HTTP with the printed ingest token, the services
// page, sorting, themes, sign-out and a deep link through sign-in.
// Screenshots of each page in both themes go to $STRATA_UI_SCREENSHOTS
// (default build/ui-screenshots) for people to look at.

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { launchBrowser, newContext, sendOtlp, watchedPage } from './browser.mjs';
import { reviewPage } from './page_review.mjs';
import { checkoutLogs, serverSpans, startServer, threeSpanTrace } from './strata_server.mjs';

let server;
let browser;
let page;
const problems = [];  // console errors and CSP refusals, checked at the end

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  page = await watchedPage(await newContext(browser), problems);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

// Screenshots in both themes and an axe-core check in both (page_review.mjs).
const screenshots = (name) => reviewPage(page, name);

const send = (service, count, errors) => sendOtlp(server, 'traces', serverSpans(service, count, errors));

test('first boot: the setup link creates the admin and lands on an empty services page', async () => {
  await page.goto(`${server.api}/signin`);
  await page.getByText('No account exists yet').waitFor();
  await screenshots('signin-before-setup');

  await page.goto(`${server.api}/setup#token=${server.setupToken}`);
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Name').fill('Ada');
  await page.getByLabel(/^Password/).fill('a long enough password');
  await screenshots('setup');
  await page.getByRole('button', { name: 'Create admin and sign in' }).click();
  await page.waitForURL(/\/services$/);
  await page.getByText('No telemetry in this window yet').waitFor();
  assert.match(await page.locator('header .user').innerText(), /Ada \(admin\)/);
  await screenshots('services-empty');
});

test('the services page shows what was sent, with errors and sorting', async () => {
  await send('checkout', 8, 2);
  await send('cart', 5, 0);
  await page.reload();
  const rows = page.locator('table.data tbody tr');
  await rows.first().waitFor();
  assert.equal(await rows.count(), 2);
  const text = async (i) => (await rows.nth(i).innerText()).replace(/\s+/g, ' ');
  // By name first: cart, then checkout (25% errors: 2 of 8).
  assert.match(await text(0), /^healthy cart .* 0% /);
  assert.match(await text(1), /^unhealthy checkout .* 25% /);
  // Sorting by errors, then descending, is kept in the URL.
  await page.getByRole('button', { name: 'Errors' }).click();
  await page.waitForURL(/sort=error_rate/);
  await page.getByRole('button', { name: 'Errors' }).click();
  await page.waitForURL(/sort=-error_rate/);
  assert.match(await text(0), /checkout/);
  // Each service has its request-rate sparkline over the window; all of
  // checkout's 8 spans fell in one step, so its line rises from 0 to a
  // peak and its description says so.
  const spark = rows.nth(0).getByRole('img', { name: /^Requests per second:/ });
  await spark.waitFor();
  assert.match(await spark.getAttribute('aria-label'), /lowest 0\/s, highest [0-9.]+\/(s|min)$/);
  assert.ok((await spark.locator('polyline').getAttribute('points')).split(' ').length >= 25);
  await rows.nth(1).getByRole('img', { name: /^Requests per second:/ }).waitFor();
  await screenshots('services');
});

test('the services page asks for its services once, beside the sign-in check rather than after it', async () => {
  const seen = [];
  const onRequest = (request) => {
    const path = new URL(request.url()).pathname;
    if (path === '/api/v1/services' || path === '/api/v1/auth/me') seen.push(`asked ${path}`);
  };
  const onResponse = (response) => {
    if (new URL(response.url()).pathname === '/api/v1/auth/me') seen.push('answered /api/v1/auth/me');
  };
  page.on('request', onRequest);
  page.on('response', onResponse);
  try {
    await page.reload();
    await page.locator('table.data tbody tr').first().waitFor();
  } finally {
    page.off('request', onRequest);
    page.off('response', onResponse);
  }
  assert.equal(seen.filter((e) => e === 'asked /api/v1/services').length, 1, seen.join(', '));
  assert.ok(seen.indexOf('asked /api/v1/services') < seen.indexOf('answered /api/v1/auth/me'), seen.join(', '));
});

test('a service page charts RED over time and lists its operations', async () => {
  await page.getByRole('link', { name: 'checkout' }).click();
  await page.waitForURL(/\/services\/checkout\?range=now-1h$/);
  await page.getByRole('heading', { name: 'checkout' }).waitFor();
  // Three charts, each drawn on a canvas.
  await page.locator('figure.chart canvas').nth(2).waitFor();
  assert.equal(await page.locator('figure.chart').count(), 3);
  const operations = page.getByRole('table', { name: 'Operations' });
  const row = (await operations.locator('tbody tr').first().innerText()).replace(/\s+/g, ' ');
  assert.match(row, /^GET \/checkout SERVER .* 25% .* 8$/);
  // Its traces (each of the 8 spans sent is a trace of its own, 2 failed)
  // and a link to its logs.
  const slowest = page.getByRole('table', { name: 'Slowest traces' });
  await slowest.locator('tbody tr').first().waitFor();
  assert.equal(await slowest.locator('tbody tr').count(), 8);
  const failed = page.getByRole('table', { name: 'Failed traces' });
  assert.equal(await failed.locator('tbody tr').count(), 2);
  assert.match((await failed.locator('tbody tr').first().innerText()).replace(/\s+/g, ' '), /checkout: GET \/checkout 20(\.0)? ms 1$/);
  assert.equal(await page.getByRole('link', { name: 'Search its logs' }).getAttribute('href'), '/logs?service=checkout&range=now-1h');
  await screenshots('service');
  await page.goBack();
  await page.waitForURL(/\/services\?/);
});

test('trace search finds a trace, and its waterfall shows, folds and details its spans', async () => {
  const traceId = '7a3c0e5d9b1f2a4c6e8d0b2f4a6c8e0d';
  await sendOtlp(server, 'traces', threeSpanTrace(traceId));
  await page.getByRole('link', { name: 'Traces', exact: true }).click();
  await page.getByLabel('Operation').fill('GET /cart/items');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/operation=GET\+%2Fcart%2Fitems/);
  const results = page.getByRole('table', { name: 'Traces' });
  // The unfiltered list the page opened with may still be showing: wait
  // for the search's own answer, a single trace rooted in checkout.
  await page.waitForFunction(() => {
    const rows = document.querySelectorAll('table[aria-label="Traces"] tbody tr');
    return rows.length === 1 && rows[0].textContent.includes('checkout: POST /checkout');
  });
  assert.equal(await results.locator('tbody tr').count(), 1);
  // The scatter has the trace as its one point, a link to it.
  const points = page.getByRole('group', { name: 'Traces by start and duration' }).getByRole('link');
  assert.equal(await points.count(), 1);
  assert.match(await points.first().getAttribute('aria-label'), /^checkout: POST \/checkout, 120(\.0)? ms, started /);
  assert.equal(await points.first().getAttribute('href'), `/traces/${traceId}`);
  // Drawn at the width it is shown at: the point is round, not stretched.
  const dot = await points.first().locator('circle').boundingBox();
  assert.ok(Math.abs(dot.width - dot.height) < 0.5, `a ${dot.width} x ${dot.height} point`);
  await screenshots('traces');
  await results.getByRole('link').click();
  await page.waitForURL(new RegExp(`/traces/${traceId}$`));
  const rows = page.getByRole('treegrid', { name: 'Spans' }).getByRole('row');
  await rows.nth(2).waitFor();
  const names = async () => (await rows.allInnerTexts()).map((t) => t.replace(/\s+/g, ' '));
  assert.deepEqual((await names()).map((t) => t.replace(/ [0-9.]+ ms$/, '')), [
    '▾checkout POST /checkout',
    '▾checkout GET cart',
    'cart GET /cart/items',
  ].map((t) => t));
  // Folding the root hides its descendants; unfolding brings them back.
  await rows.first().getByRole('button', { name: 'Collapse' }).click();
  assert.equal(await rows.count(), 1);
  await rows.first().getByRole('button', { name: 'Expand' }).click();
  assert.equal(await rows.count(), 3);
  // A span's details, with typed attributes, its event and its resource.
  await rows.nth(2).click();
  await page.waitForURL(/span=00000000000000a3$/);
  const panel = page.getByRole('complementary', { name: 'Span details' });
  await panel.getByText('cache miss').waitFor();
  const attributes = (await panel.getByRole('table', { name: 'Span attributes' }).innerText()).replace(/\s+/g, ' ');
  assert.match(attributes, /http\.route "\/cart"/);
  assert.match(attributes, /cart\.items \[3, "x"\]/);
  assert.match(await panel.getByRole('table', { name: 'Resource attributes' }).innerText(), /cart/);
  await screenshots('trace');
  // The span is in the URL: reloading shows it again.
  await page.reload();
  await panel.getByText('cache miss').waitFor();
});

test('trace search filters by attributes, suggested from the window\'s spans', async () => {
  await page.goto(`${server.api}/traces`);
  // The keys the spans carry are offered, and a key's frequent values.
  await page.waitForFunction(() => [...document.querySelectorAll('#attribute-keys option')].some((o) => o.value === 'http.route'));
  await page.getByLabel('Attribute', { exact: true }).fill('http.route');
  await page.waitForFunction(() => [...document.querySelectorAll('#attribute-values option')].some((o) => o.value === '/cart'));
  await page.getByLabel('Value').fill('/cart');
  await page.getByRole('button', { name: 'Add filter' }).click();
  await page.waitForURL((url) => url.searchParams.get('attr.http.route') === '/cart');
  await page.waitForFunction(() => {
    const rows = document.querySelectorAll('table[aria-label="Traces"] tbody tr');
    return rows.length === 1 && rows[0].textContent.includes('checkout: POST /checkout');
  });
  const chips = page.getByRole('list', { name: 'Attribute filters' });
  assert.equal(await chips.innerText(), 'http.route=/cart\n×');
  await screenshots('traces-filtered');
  // A value no span has: no trace; removing the filter brings them back.
  await page.getByLabel('Attribute', { exact: true }).fill('retry.count');
  await page.getByLabel('Value').fill('99');
  await page.getByLabel('Value').press('Enter');
  await page.getByText('No trace matches in this window.').waitFor();
  await chips.getByRole('button', { name: 'Remove retry.count=99' }).click();
  await chips.getByRole('button', { name: 'Remove http.route=/cart' }).click();
  await page.waitForURL((url) => ![...url.searchParams.keys()].some((k) => k.startsWith('attr.')));
  await page.locator('table[aria-label="Traces"] tbody tr').nth(1).waitFor();
});

test('log search finds a structured body, shows its volume and leads to its trace', async () => {
  const traceId = '7a3c0e5d9b1f2a4c6e8d0b2f4a6c8e0d';
  await sendOtlp(server, 'logs', checkoutLogs(traceId));
  await page.getByRole('link', { name: 'Logs', exact: true }).click();
  const records = page.getByRole('table', { name: 'Log records' });
  await records.locator('tbody tr.log').nth(1).waitFor();
  assert.equal(await records.locator('tbody tr.log').count(), 2);
  await page.locator('figure.chart canvas').waitFor();
  await page.getByLabel('Text').fill('PAYMENT');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.waitForURL(/q=PAYMENT/);
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Log records"] tbody tr.log').length === 1);
  const row = records.locator('tbody tr.log').first();
  assert.match(await row.innerText(), /ERROR/);
  await row.getByRole('button').click();
  const detail = records.locator('tr.log-detail');
  assert.match(await row.innerText(), /message="payment failed" code=402/);
  assert.match((await detail.innerText()).replace(/\s+/g, ' '), /message "payment failed" code 402/);
  assert.match(await detail.getByRole('table', { name: 'Log attributes' }).innerText(), /attempt\s+3/);
  await screenshots('logs');
  await detail.getByRole('link', { name: 'Open the trace' }).click();
  await page.waitForURL(new RegExp(`/traces/${traceId}\\?span=00000000000000a1$`));
  await page.getByRole('complementary', { name: 'Span details' }).waitFor();
});

// OTLP/JSON log records of service "tailer" with bodies `${prefix} i`.
function tailLogs(prefix, count) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const logRecords = Array.from({ length: count }, (_, i) => ({
    timeUnixNano: String(now + BigInt(i)),
    severityNumber: 9,
    body: { stringValue: `${prefix} ${i}` },
  }));
  return {
    resourceLogs: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'tailer' } }] },
      scopeLogs: [{ logRecords }],
    }],
  };
}

const sendLogs = (body) => sendOtlp(server, 'logs', body);

// The bodies in the log table, top to bottom.
const shownBodies = () =>
  page.locator('table[aria-label="Log records"] tbody tr.log td.body').allInnerTexts();

test('live tail shows new records once, newest first; pause holds them and resume shows them', async () => {
  await page.goto(`${server.api}/logs?service=tailer`);
  await page.getByRole('button', { name: 'Live tail' }).click();
  await page.waitForURL(/tail=1/);
  assert.equal(await page.getByRole('button', { name: 'Live tail' }).getAttribute('aria-pressed'), 'true');
  await page.getByRole('status').getByText('Live: new records appear on top').waitFor();
  await sendLogs(tailLogs('first', 3));
  await sendLogs(tailLogs('second', 2));
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Log records"] tbody tr.log').length === 5);
  assert.deepEqual(await shownBodies(), ['second 1', 'second 0', 'first 2', 'first 1', 'first 0']);
  await screenshots('logs-tail');

  await page.getByRole('button', { name: 'Pause' }).click();
  await sendLogs(tailLogs('held', 4));
  await page.getByRole('status').getByText('Paused: 4 new records waiting').waitFor();
  assert.equal((await shownBodies()).length, 5);
  await page.getByRole('button', { name: 'Resume' }).click();
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Log records"] tbody tr.log').length === 9);
  assert.deepEqual((await shownBodies()).slice(0, 5), ['held 3', 'held 2', 'held 1', 'held 0', 'second 1']);
  // Records of another service are not in this tail.
  await sendLogs(checkoutLogs('7a3c0e5d9b1f2a4c6e8d0b2f4a6c8e0d'));
  await sendLogs(tailLogs('last', 1));
  await page.waitForFunction(() => document.querySelectorAll('table[aria-label="Log records"] tbody tr.log').length === 10);
  assert.equal((await shownBodies())[0], 'last 0');
  // Off again: the search is back.
  await page.getByRole('button', { name: 'Live tail' }).click();
  await page.waitForURL((url) => !url.search.includes('tail=1'));
});

test('the log table keeps only the rows in view in the page', async () => {
  await sendLogs(tailLogs('many', 600));
  await page.goto(`${server.api}/logs?service=tailer&q=many`);
  const table = page.locator('table[aria-label="Log records"]');
  await table.locator('tbody tr.log').first().waitFor();
  await page.getByRole('button', { name: 'Load older records' }).click();
  await page.waitForFunction(() => document.querySelector('table[aria-label="Log records"]')?.getAttribute('aria-rowcount') === '201');
  const inPage = await table.locator('tbody tr.log').count();
  assert.ok(inPage < 80, `${inPage} rows in the page`);
  // A short scroll (within a render step) changes nothing in the page: the
  // rows in view were already there, so the frame only scrolls.
  const changes = await page.locator('[data-log-table]').evaluate((element) => new Promise((done) => {
    element.scrollTop = 0;
    const frames = (n, then) => (n === 0 ? then() : requestAnimationFrame(() => frames(n - 1, then)));
    frames(2, () => {
      let seen = 0;
      const observer = new MutationObserver((records) => (seen += records.length));
      observer.observe(element, { subtree: true, childList: true, attributes: true, characterData: true });
      element.scrollTop = 100;
      frames(3, () => {
        const records = observer.takeRecords();
        observer.disconnect();
        done(seen + records.length);
      });
    });
  }));
  assert.equal(changes, 0, 'a 100 px scroll changed the log table\'s DOM');
  // Scrolled 100 px a frame to the end, the rows in the page always cover
  // the view, in order (the newest record first, so each body's number one
  // less than the row's above), each in its place in the whole list.
  const walk = await page.locator('[data-log-table]').evaluate((element) => new Promise((done) => {
    const problems = [];
    let frames = 0;
    element.scrollTop = 0;
    const frame = () => {
      const rows = [...element.querySelectorAll('tbody tr.log')];
      frames += 1;
      const head = element.querySelector('thead').getBoundingClientRect().height;
      const body = element.querySelector('tbody').getBoundingClientRect().top;
      rows.forEach((row, n) => {
        const index = Number(row.getAttribute('aria-rowindex'));
        // Each record's row is where the whole list would put it.
        const at = row.getBoundingClientRect().top - body;
        if (Math.abs(at - (index - 2) * 33) > 1) problems.push(`row ${index} at ${at}`);
        if (n === 0) return;
        const above = rows[n - 1];
        const number = (tr) => Number(/many (\d+)/.exec(tr.querySelector('td.body').textContent)?.[1]);
        if (index !== Number(above.getAttribute('aria-rowindex')) + 1) problems.push(`row ${index} after ${above.getAttribute('aria-rowindex')}`);
        if (number(row) !== number(above) - 1) problems.push(`row ${index}: ${row.textContent}`);
      });
      const inView = [Math.floor(element.scrollTop / 33) + 2, Math.ceil((element.scrollTop + element.clientHeight - head) / 33) + 1];
      const shown = [Number(rows[0].getAttribute('aria-rowindex')), Number(rows[rows.length - 1].getAttribute('aria-rowindex'))];
      if (shown[0] > inView[0] || shown[1] < Math.min(201, inView[1])) problems.push(`rows ${shown} for ${inView}`);
      if (element.scrollTop + element.clientHeight >= element.scrollHeight || problems.length > 5) {
        return done({ frames, problems });
      }
      element.scrollTop += 100;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }));
  assert.deepEqual(walk.problems, []);
  assert.ok(walk.frames > 50, `${walk.frames} frames`);
  // Scrolled to the end, the last record is there, with its row index.
  await page.locator('[data-log-table]').evaluate((element) => (element.scrollTop = element.scrollHeight));
  const last = table.locator('tbody tr.log[aria-rowindex="201"]');
  await last.waitFor();
  assert.match(await last.innerText(), /many \d+/);
  assert.ok((await table.locator('tbody tr.log').count()) < 80);
});

test('keyboard shortcuts move between pages, focus the search, and ? lists them in a dialog', async () => {
  await page.goto(`${server.api}/services`);
  await page.locator('header').waitFor();
  await page.keyboard.press('g');
  await page.keyboard.press('l');
  await page.waitForURL(/\/logs$/);
  await page.keyboard.press('/');
  assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'q');
  // Typing in the field is typing, not shortcuts.
  await page.keyboard.type('gs');
  assert.match(page.url(), /\/logs$/);
  assert.equal(await page.getByLabel('Text').inputValue(), 'gs');
  await page.locator('main h1').click();
  await page.keyboard.press('g');
  await page.keyboard.press('t');
  await page.waitForURL(/\/traces$/);
  await page.keyboard.press('?');
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await dialog.waitFor();
  assert.match(await dialog.innerText(), /g\s*s\s+Go to Services/);
  // Keys do nothing behind the dialog, and Esc closes it.
  await page.keyboard.press('g');
  await page.keyboard.press('s');
  assert.match(page.url(), /\/traces$/);
  await screenshots('shortcuts');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden' });
  // The header's ? button opens it too.
  await page.getByRole('button', { name: 'Keyboard shortcuts' }).click();
  await dialog.waitFor();
  await dialog.getByRole('button', { name: 'Close' }).click();
  await dialog.waitFor({ state: 'hidden' });
});

test('times show in the local zone with its offset or in UTC; a custom range is read in that zone', async () => {
  // A record at a known minute, 20 minutes ago.
  const ms = Math.floor((Date.now() - 20 * 60_000) / 60_000) * 60_000 + 7_042;
  await sendOtlp(server, 'logs', {
    resourceLogs: [{
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'zoned' } }] },
      scopeLogs: [{ logRecords: [{ timeUnixNano: `${ms}000000`, severityNumber: 9, body: { stringValue: 'zoned record' } }] }],
    }],
  });
  // Written as the page should: the same moment at +05:45, and at UTC.
  const at = (offsetMinutes) => new Date(ms + offsetMinutes * 60_000).toISOString().replace('T', ' ').replace('Z', '');
  const kathmandu = await newContext(browser, {
    timezoneId: 'Asia/Kathmandu',
    storageState: await page.context().storageState(),
  });
  const zoned = await watchedPage(kathmandu, problems);
  await zoned.goto(`${server.api}/logs?service=zoned`);
  const zone = zoned.getByRole('group', { name: 'Time zone' });
  await zone.getByRole('button', { name: 'Local (UTC+05:45)' }).waitFor();
  const time = zoned.locator('table[aria-label="Log records"] tbody tr.log td.time').first();
  await time.waitFor();
  assert.equal(await time.innerText(), at(345));
  await zone.getByRole('button', { name: 'UTC', exact: true }).click();
  await zoned.waitForURL(/tz=utc/);
  await zoned.waitForFunction((want) => document.querySelector('td.time')?.textContent === want, at(0));
  assert.equal(await zone.getByRole('button', { name: 'UTC', exact: true }).getAttribute('aria-pressed'), 'true');
  // The zone and range go along to the next page.
  await zoned.getByRole('link', { name: 'Traces', exact: true }).click();
  await zoned.waitForURL(/\/traces\?tz=utc$/);
  await zoned.goBack();
  // A custom range, typed in UTC, then in local time.
  await zoned.getByLabel('Time range').selectOption('custom');
  const form = zoned.getByRole('form', { name: 'Custom time range' });
  await form.getByLabel(/^From/).fill('2026-12-01T10:00');
  await form.getByLabel(/^To/).fill('2026-12-01T11:30');
  await form.getByRole('button', { name: 'Apply' }).click();
  await zoned.waitForURL((url) => url.searchParams.get('range') === '2026-12-01T10:00:00.000Z/2026-12-01T11:30:00.000Z');
  await zoned.getByText('No log record matches in this window.').waitFor();
  await zone.getByRole('button', { name: 'Local (UTC+05:45)' }).click();
  await zoned.getByLabel('Time range').selectOption('custom');
  await form.getByLabel(/^From/).fill('2026-12-01T10:00');
  await form.getByLabel(/^To/).fill('2026-12-01T09:00');
  await form.getByRole('button', { name: 'Apply' }).click();
  await form.getByRole('alert').getByText('"From" must be before "To".').waitFor();
  await form.getByLabel(/^To/).fill('2026-12-01T11:30');
  await form.getByRole('button', { name: 'Apply' }).click();
  await zoned.waitForURL((url) => url.searchParams.get('range') === '2026-12-01T04:15:00.000Z/2026-12-01T05:45:00.000Z');
  await reviewPage(zoned, 'time-range');
  await kathmandu.close();
});

test('the SQL console loads its editor on demand, runs a query and downloads CSV', async () => {
  const scripts = [];
  page.on('request', (request) => {
    if (request.url().endsWith('.js')) scripts.push(request.url());
  });
  await page.getByRole('link', { name: 'SQL', exact: true }).click();
  await page.locator('.cm-editor').waitFor();
  assert.ok(scripts.some((url) => /\/assets\/sql_editor-[A-Z0-9]+\.js$/.test(url)), scripts.join());
  // The helpers the page lists are the ones the server expands: each runs.
  await page.getByText('Helpers: an attribute by key').click();
  const helpers = await page.getByRole('list', { name: 'SQL helpers' }).locator('code').allInnerTexts();
  assert.equal(helpers.length, 21);
  const refused = await page.evaluate(async (names) => {
    const out = [];
    for (const name of names) {
      const call = name.replace('(key)', "('service.name')");
      const answer = await fetch('/api/v1/sql', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
        body: JSON.stringify({ sql: `SELECT ${call} FROM spans LIMIT 1` }),
      });
      if (answer.status !== 200) out.push(`${call}: ${answer.status} ${await answer.text()}`);
    }
    return out;
  }, helpers);
  assert.deepEqual(refused, []);
  await page.getByRole('button', { name: 'Run' }).click();
  const result = page.getByRole('table', { name: 'Query result' });
  await result.locator('tbody tr').first().waitFor();
  const text = await result.innerText();
  assert.match(text, /service_name\s+spans\s+avg_ms/);
  assert.match(text, /checkout\s+10\b/);  // 8 + the 2 checkout spans of the trace
  assert.match(await page.getByRole('status').innerText(), /rows in \d+ ms/);
  assert.match(page.url(), /\/sql\?q=SELECT/);
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('button', { name: 'Download CSV' }).click(),
  ]);
  const csv = await (await download.createReadStream()).toArray();
  assert.match(Buffer.concat(csv).toString(), /^service_name,spans,avg_ms\r\n/);
  // A refused statement says why. Its 400 is expected in the console, and so
  // are the style-src-attr refusals Chromium reports, with no source, for
  // the inline styles its own editing code tries to put on the editable
  // element as keys are typed (CodeMirror reads the text either way).
  const before = problems.length;
  await page.locator('.cm-content').click();
  // The editor offers the helpers as completions.
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' has_reso');
  await page.locator('.cm-tooltip-autocomplete').getByText('has_resource_attr', { exact: true }).waitFor();
  await page.keyboard.press('Escape');
  await page.keyboard.press('Control+A');
  await page.keyboard.type('DROP VIEW spans');
  await page.keyboard.press('Control+Enter');
  await page.getByRole('alert').getByText('not read-only').waitFor();
  problems.splice(before, problems.length - before,
    ...problems.slice(before).filter(
      (text) => !/status of 400/.test(text) && !/^CSP style-src-attr at :0:0/.test(text) &&
        !/^Applying inline style violates/.test(text)));
  await screenshots('sql');
});

test('the theme switch overrides the OS and is remembered', async () => {
  await page.getByLabel('Theme').selectOption('dark');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(background, 'rgb(13, 17, 23)');
  await page.reload();
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), 'dark');
  await page.getByLabel('Theme').selectOption('system');
  assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);
});

test('an admin creates a token that works at once and revokes it', async () => {
  await page.getByRole('link', { name: 'Settings' }).click();
  await page.getByRole('link', { name: 'Tokens' }).click();
  await page.waitForURL(/\/settings\/tokens$/);
  await page.getByLabel('Name').fill('grafana');
  await page.getByLabel('Scope').selectOption('read');
  await page.getByRole('button', { name: 'Create token' }).click();
  const token = (await page.getByLabel('New token').innerText()).trim();
  assert.match(token, /^strata_[0-9a-z]{52}$/);
  const services = () =>
    fetch(`${server.api}/api/v1/services`, { headers: { Authorization: `Bearer ${token}` } });
  // A running server honours a new token within its refresh interval (1 s).
  const deadline = Date.now() + 10_000;
  let status = 0;
  while (Date.now() < deadline && (status = (await services()).status) !== 200) {
    await new Promise((done) => setTimeout(done, 100));
  }
  assert.equal(status, 200);
  const row = page.getByRole('table', { name: 'Tokens' }).getByRole('row', { name: /grafana/ });
  await screenshots('settings-tokens');
  page.once('dialog', (dialog) => dialog.accept());
  await row.getByRole('button', { name: 'Revoke' }).click();
  await row.getByRole('button', { name: 'Revoke' }).waitFor({ state: 'detached' });
  while (Date.now() < deadline + 10_000 && (status = (await services()).status) !== 401) {
    await new Promise((done) => setTimeout(done, 100));
  }
  assert.equal(status, 401);
});

test('an admin adds a viewer, whose password link signs them in with less to see', async () => {
  await page.getByRole('link', { name: 'Users' }).click();
  await page.getByLabel('Email').fill('bob@example.com');
  await page.getByLabel('Name').fill('Bob');
  await page.getByRole('button', { name: 'Add user' }).click();
  const link = (await page.getByLabel('Password link').innerText()).trim();
  assert.ok(link.startsWith(`${server.api}/password#token=`), link);
  await screenshots('settings-users');

  const bob = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const bobPage = await bob.newPage();
  await bobPage.goto(link);
  await bobPage.getByLabel(/New password/).fill('bob has a long password');
  await bobPage.getByRole('button', { name: 'Set password and sign in' }).click();
  await bobPage.waitForURL(/\/services$/);
  assert.match(await bobPage.locator('header .user').innerText(), /Bob \(viewer\)/);
  await bobPage.goto(`${server.api}/settings/tokens`);
  await bobPage.getByText('Only admins manage tokens and users.').waitFor();
  assert.equal(await bobPage.getByRole('link', { name: 'Tokens' }).count(), 0);
  await bob.close();
  // The admin sees Bob as active now.
  await page.reload();
  const bobRow = page.getByRole('table', { name: 'Users' }).getByRole('row', { name: /bob@example.com/ });
  assert.match(await bobRow.innerText(), /active/);
});

test('signing out, and a deep link comes back after signing in', async () => {
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/signin/);
  await page.goto(`${server.api}/services?range=now-6h&sort=-rate`);
  await page.waitForURL(/\/signin\?next=/);
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Password').fill('not the password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('alert').getByText('wrong email or password').waitFor();
  await page.getByLabel('Password').fill('a long enough password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/services\?range=now-6h&sort=-rate$/);
  await page.locator('table.data tbody tr').first().waitFor();
  assert.equal(await page.getByLabel('Time range').inputValue(), 'now-6h');
});

test('the page never broke a Content-Security-Policy rule or threw', async () => {
  // The failed sign-in above logs its 401 as a resource error; nothing else may.
  const unexpected = problems.filter((text) => !/status of 401/.test(text));
  assert.deepEqual(unexpected, []);
});
