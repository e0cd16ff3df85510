// What every browser test file starts with: Debian's chromium through
// playwright-core, pages that report console errors and Content-Security-
// Policy refusals into a list the tests check at the end, the first
// admin created through the setup link, and OTLP/HTTP JSON sent with the
// server's ingest token.

import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';

export function launchBrowser() {
  return chromium.launch({
    executablePath: process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-dev-shm-usage'],
  });
}

// A browser context at 1280×800.
export function newContext(browser, options = {}) {
  return browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
}

// A page of browser context `context` whose console errors, uncaught
// errors and CSP refusals go to `problems`.
export async function watchedPage(context, problems) {
  const page = await context.newPage();
  // Say where a Content-Security-Policy refusal came from.
  await page.addInitScript(() =>
    document.addEventListener('securitypolicyviolation', (e) =>
      console.error(`CSP ${e.effectiveDirective} at ${e.sourceFile}:${e.lineNumber}:${e.columnNumber} ${e.sample}`),
    ),
  );
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(String(error)));
  return page;
}

// The first admin, Ada, through the setup link; the page lands on
// /services signed in.
export async function createAdmin(page, server) {
  await page.goto(`${server.api}/setup#token=${server.setupToken}`);
  await page.getByLabel('Email').fill('ada@example.com');
  await page.getByLabel('Name').fill('Ada');
  await page.getByLabel(/^Password/).fill('a long enough password');
  await page.getByRole('button', { name: 'Create admin and sign in' }).click();
  await page.waitForURL(/\/services$/);
}

// POSTs OTLP/JSON `body` to the server's /v1/<signal> (traces, logs,
// metrics) and checks it was accepted.
export async function sendOtlp(server, signal, body) {
  const response = await fetch(`${server.otlpHttp}/v1/${signal}`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.ingestToken}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(response.status, 200, await response.text());
}
