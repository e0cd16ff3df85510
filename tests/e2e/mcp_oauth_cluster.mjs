// MCP's OAuth across two servers sharing one PostgreSQL control store
// (--catalog; docs/format/postgres-control.md, "OAuth"), with fetch: a
// client registered on the second server is approved on the first, its
// code exchanged on the second and its access token used at the first's
// /mcp (the token is bound to the /mcp URL of the consent); the first
// rotates the refresh token; the grant is listed on the second; the code
// presented again on the first revokes the grant on both.
//
// Usage: node mcp_oauth_cluster.mjs <first api host:port> <second api host:port> <session cookie value>
// Prints one JSON line {"ok": true, "checks": n} and exits 0, or throws.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';

const [apiOne, apiTwo, cookie] = process.argv.slice(2);
const one = `http://${apiOne}`;
const two = `http://${apiTwo}`;
const redirectUri = 'http://127.0.0.1:9/callback';
const browserCookie = `strata_session=${cookie}`;
let checks = 0;
const check = (condition, message) => { assert.ok(condition, message); checks++; };
const b64url = (bytes) => Buffer.from(bytes).toString('base64url');
const verifier = b64url(crypto.randomBytes(32));
const challenge = b64url(crypto.createHash('sha256').update(verifier).digest());
const form = (fields) => new URLSearchParams(fields).toString();
const mcp = (base, accessToken) => fetch(`${base}/mcp`, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
    Authorization: `Bearer ${accessToken}` },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'cluster-e2e', version: '1' } } }),
});
const token = (base, fields) => fetch(`${base}/oauth/token`, {
  method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' }, body: form(fields) });

// Registration on the second server.
const registered = await fetch(`${two}/oauth/register`, {
  method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify({ client_name: 'cluster agent', redirect_uris: [redirectUri] }) });
check(registered.status === 201, `register on two: ${registered.status}`);
const clientId = (await registered.json()).client_id;

// Consent on the first, with the session the servers share.
const authorize = `${one}/oauth/authorize?${form({
  response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challenge,
  code_challenge_method: 'S256', state: 'st-7', resource: `${one}/mcp` })}`;
const page = await fetch(authorize, { headers: { Cookie: browserCookie }, redirect: 'manual' });
check(page.status === 200, `consent page on one for a client registered on two: ${page.status}`);
const html = await page.text();
check(/cluster agent/.test(html), 'the consent page names the client');
const fields = Object.fromEntries([...html.matchAll(/name="([a-z_]+)" value="([^"]*)"/g)]
  .map(([, name, value]) => [name, value.replaceAll('&amp;', '&')]));
const answer = await fetch(`${one}/oauth/authorize`, {
  method: 'POST',
  headers: { Cookie: browserCookie, 'X-Strata-Request': '1', Origin: one,
    'Content-Type': 'application/x-www-form-urlencoded' },
  body: form({ ...fields, decision: 'approve' }),
});
check(answer.status === 200, `approve on one: ${answer.status} ${await answer.clone().text()}`);
const code = new URL((await answer.json()).redirect_to).searchParams.get('code');
check(typeof code === 'string' && code.length > 0, 'a code');

// The exchange on the second.
const exchanged = await token(two, { grant_type: 'authorization_code', client_id: clientId, code,
  redirect_uri: redirectUri, code_verifier: verifier });
check(exchanged.status === 200, `exchange on two: ${exchanged.status} ${await exchanged.clone().text()}`);
const tokens = await exchanged.json();
check((await mcp(one, tokens.access_token)).status === 200, 'the access token works at one\'s /mcp');

// Rotation on the first; the grant listed on the second.
const rotated = await token(one, { grant_type: 'refresh_token', client_id: clientId,
  refresh_token: tokens.refresh_token });
check(rotated.status === 200, `refresh on one: ${rotated.status}`);
const fresh = await rotated.json();
check((await mcp(one, fresh.access_token)).status === 200, 'the rotated access token works');
const grants = await (await fetch(`${two}/api/v1/auth/me/oauth-grants`,
  { headers: { Cookie: browserCookie } })).json();
check(JSON.stringify(grants).includes('cluster agent'), `grants on two: ${JSON.stringify(grants)}`);

// The code again, on the first: refused, and the grant is revoked.
const reused = await token(one, { grant_type: 'authorization_code', client_id: clientId, code,
  redirect_uri: redirectUri, code_verifier: verifier });
check(reused.status === 400 && (await reused.json()).error === 'invalid_grant', 'reused code on one');
check((await mcp(one, fresh.access_token)).status === 401, 'the grant is revoked');
check((await token(two, { grant_type: 'refresh_token', client_id: clientId,
  refresh_token: fresh.refresh_token })).status === 400, 'its refresh token is refused on two');

console.log(JSON.stringify({ ok: true, checks }));
