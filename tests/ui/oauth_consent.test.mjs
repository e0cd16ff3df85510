// The OAuth consent page for /mcp (docs/mcp.md, "OAuth 2.1") in a real
// browser: an agent registers, a signed-out person is sent to sign in and
// back, the page (its own strict CSP with a nonce) names the client and
// the account, Allow sends the browser to the agent's redirect URI with a
// code that the PKCE exchange turns into a token /mcp accepts, and Deny
// sends it back with access_denied. A second agent's grant then shows
// under Settings, Connected agents, and revoking it there (after a confirmation) makes
// /mcp refuse the agent's access token and the token endpoint its refresh
// token. The redirect URI is never reached: the browser context answers
// it.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { after, before, test } from 'node:test';
import { createAdmin, launchBrowser, newContext, watchedPage } from './browser.mjs';
import { reviewPage } from './page_review.mjs';
import { startServer } from './strata_server.mjs';

let server;
let browser;
let context;
let page;
const problems = [];
const redirectUri = 'http://127.0.0.1:9/callback';

before(async () => {
  server = await startServer();
  browser = await launchBrowser();
  context = await newContext(browser);
  await context.route(`${redirectUri}**`, (route) =>
    route.fulfill({ status: 200, contentType: 'text/plain', body: 'the agent got its answer' }));
  page = await watchedPage(context, problems);
});

after(async () => {
  await browser?.close();
  await server?.stop();
});

const base64url = (bytes) => Buffer.from(bytes).toString('base64url');

async function register(name) {
  const answer = await fetch(`${server.api}/oauth/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ client_name: name, redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  assert.equal(answer.status, 201, await answer.clone().text());
  return (await answer.json()).client_id;
}

function authorizeUrl(clientId, challenge, state) {
  const query = new URLSearchParams({
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge,
    code_challenge_method: 'S256', state, resource: `${server.api}/mcp`, scope: 'read',
  });
  return `${server.api}/oauth/authorize?${query}`;
}

// POSTs an MCP initialize to /mcp with bearer `token`.
function initializeMcp(token) {
  return fetch(`${server.api}/mcp`, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`, 'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({
      jsonrpc: '2.0', id: 1, method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser-test', version: '1' } },
    }),
  });
}

// A new agent `name` that the signed-in page allows: its client id and
// tokens.
async function allowAgent(name, state) {
  const clientId = await register(name);
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  await page.goto(authorizeUrl(clientId, challenge, state));
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL((url) => url.href.startsWith(redirectUri));
  const code = new URL(page.url()).searchParams.get('code');
  assert.ok(code, page.url());
  const tokens = await fetch(`${server.api}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId,
      code_verifier: verifier, resource: `${server.api}/mcp`,
    }),
  });
  assert.equal(tokens.status, 200, await tokens.clone().text());
  const { access_token: accessToken, refresh_token: refreshToken } = await tokens.json();
  return { clientId, accessToken, refreshToken };
}

test('sign in, allow, exchange the code with PKCE, and call /mcp with the token', async () => {
  const clientId = await register('Browser test agent');
  const verifier = base64url(randomBytes(32));
  const challenge = base64url(createHash('sha256').update(verifier).digest());
  // Signed out: the sign-in page first. The test signs in by creating the
  // first admin, then opens the same link again.
  await page.goto(authorizeUrl(clientId, challenge, 'st-1'));
  await page.waitForURL(/\/signin\?next=%2Foauth%2Fauthorize/);
  await createAdmin(page, server);
  await page.goto(authorizeUrl(clientId, challenge, 'st-1'));
  await page.getByRole('heading', { name: 'Allow access to strata?' }).waitFor();
  const text = await page.locator('body').innerText();
  assert.match(text, /Browser test agent/);
  assert.match(text, /ada@example\.com/);
  assert.match(text, /127\.0\.0\.1:9\/callback/);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL((url) => url.href.startsWith(redirectUri));
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('state'), 'st-1');
  const code = landed.searchParams.get('code');
  assert.ok(code, page.url());

  const exchange = (codeVerifier) => fetch(`${server.api}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId,
      code_verifier: codeVerifier, resource: `${server.api}/mcp`,
    }),
  });
  const tokens = await exchange(verifier);
  assert.equal(tokens.status, 200, await tokens.clone().text());
  const { access_token: accessToken } = await tokens.json();
  const initialize = await initializeMcp(accessToken);
  assert.equal(initialize.status, 200, await initialize.clone().text());
  assert.match(await initialize.text(), /"serverInfo"/);
  // The code was single-use.
  assert.equal((await exchange(verifier)).status, 400);
});

test('deny sends the browser back with access_denied and no code', async () => {
  const clientId = await register('Denied agent');
  const challenge = base64url(createHash('sha256').update(base64url(randomBytes(32))).digest());
  await page.goto(authorizeUrl(clientId, challenge, 'st-2'));
  await page.getByRole('heading', { name: 'Allow access to strata?' }).waitFor();
  await page.getByRole('button', { name: 'Deny' }).click();
  await page.waitForURL((url) => url.href.startsWith(redirectUri));
  const landed = new URL(page.url());
  assert.equal(landed.searchParams.get('error'), 'access_denied');
  assert.equal(landed.searchParams.get('state'), 'st-2');
  assert.equal(landed.searchParams.get('code'), null);
});

test('an allowed agent is listed under Connected agents, and revoking it refuses its tokens', async () => {
  // The first test's grant was revoked when its code was presented again.
  const allowed = await allowAgent('Browser test agent', 'st-3');
  assert.equal((await initializeMcp(allowed.accessToken)).status, 200);
  await page.goto(`${server.api}/settings`);
  await page.getByRole('link', { name: 'Connected agents' }).click();
  await page.waitForURL(/\/settings\/agents$/);
  const table = page.getByRole('table', { name: 'Connected agents' });
  await table.waitFor();
  // The denied agent got no grant, and the revoked one is gone.
  const rows = table.locator('tbody tr');
  assert.equal(await rows.count(), 1);
  const row = await rows.first().innerText();
  assert.match(row, /Browser test agent/);
  assert.ok(row.includes(`${server.api}/mcp`), row);
  await reviewPage(page, 'settings-agents');

  // Dismissing the confirmation keeps the grant.
  page.once('dialog', (dialog) => dialog.dismiss());
  await page.getByRole('button', { name: 'Revoke Browser test agent' }).click();
  assert.equal((await initializeMcp(allowed.accessToken)).status, 200);

  let question = '';
  page.once('dialog', (dialog) => {
    question = dialog.message();
    void dialog.accept();
  });
  await page.getByRole('button', { name: 'Revoke Browser test agent' }).click();
  await page.getByText('No agent has access.').waitFor();
  assert.match(question, /Browser test agent/);
  assert.equal(await table.count(), 0);

  const refused = await initializeMcp(allowed.accessToken);
  assert.equal(refused.status, 401, await refused.clone().text());
  const refresh = await fetch(`${server.api}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'refresh_token', refresh_token: allowed.refreshToken, client_id: allowed.clientId,
      resource: `${server.api}/mcp`,
    }),
  });
  assert.equal(refresh.status, 400, await refresh.clone().text());
  assert.match(await refresh.text(), /invalid_grant/);
});

// The signed-out visit's session check answers 401, as every page's does.
test('no console errors and no CSP refusals on the way', () => {
  assert.deepEqual(problems.filter((text) => !/status of 401/.test(text)), []);
});
