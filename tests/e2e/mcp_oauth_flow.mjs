// The MCP server's OAuth 2.1 flow end to end, as an MCP client and a
// signed-in person's browser would drive it, with fetch (docs/mcp.md,
// "Authorization"): discovery from the 401, dynamic registration, the
// sign-in redirect, consent, the code exchange with PKCE S256, /mcp with
// the access token, refresh rotation; and the refusals: a wrong verifier,
// a reused code (which revokes what it gave), a token for another
// resource, a token outside /mcp, a reused refresh token (which revokes
// the family), an ingest token at /mcp, bad redirect URIs.
//
// Usage: node mcp_oauth_flow.mjs <api host:port> <session cookie value> <ingest token>
// Prints one JSON line {"ok": true, "checks": n} and exits 0, or throws.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';

const [api, cookie, ingest] = process.argv.slice(2);
const base = `http://${api}`;
const mcpUrl = `${base}/mcp`;
const redirectUri = 'http://127.0.0.1:9/callback';
let checks = 0;
const check = (condition, message) => { assert.ok(condition, message); checks++; };

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');
const verifierPair = () => {
  const verifier = b64url(crypto.randomBytes(32));
  return { verifier, challenge: b64url(crypto.createHash('sha256').update(verifier).digest()) };
};
const form = (fields) => new URLSearchParams(fields).toString();
const initialize = {
  jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'oauth-e2e', version: '1' } },
};
async function mcp(token, headers = {}) {
  return fetch(mcpUrl, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream',
      Authorization: `Bearer ${token}`, ...headers },
    body: JSON.stringify(initialize),
  });
}

// 1. Discovery: the 401 names the protected resource's metadata.
const anonymous = await fetch(mcpUrl, { method: 'POST', headers: { 'Content-Type': 'application/json' },
  body: JSON.stringify(initialize) });
check(anonymous.status === 401, `anonymous /mcp: ${anonymous.status}`);
const challenge = anonymous.headers.get('www-authenticate') ?? '';
const metadataUrl = challenge.match(/resource_metadata="([^"]+)"/)?.[1];
check(metadataUrl === `${base}/.well-known/oauth-protected-resource/mcp`, challenge);
const resourceMeta = await (await fetch(metadataUrl)).json();
check(resourceMeta.resource === mcpUrl, JSON.stringify(resourceMeta));
const issuer = resourceMeta.authorization_servers[0];
const serverMeta = await (await fetch(`${issuer}/.well-known/oauth-authorization-server`)).json();
check(serverMeta.issuer === issuer, JSON.stringify(serverMeta));
check(serverMeta.code_challenge_methods_supported.join() === 'S256', 'S256 only');

// 2. Registration: public clients; redirect URIs https or loopback http.
const register = (body) => fetch(serverMeta.registration_endpoint, {
  method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
for (const bad of [['http://evil.example/cb'], ['ftp://127.0.0.1/cb'], ['https://x.example/#frag'], []]) {
  const refused = await register({ client_name: 'bad', redirect_uris: bad });
  check(refused.status === 400, `redirect_uris ${JSON.stringify(bad)}: ${refused.status}`);
  check((await refused.json()).error === 'invalid_redirect_uri', 'error code');
}
const secretClient = await register({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'client_secret_basic' });
check(secretClient.status === 400, 'confidential clients are refused');
const registered = await register({ client_name: 'e2e agent', redirect_uris: [redirectUri],
  grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'],
  token_endpoint_auth_method: 'none', logo_uri: 'https://ignored.example/logo.png' });
check(registered.status === 201, `register: ${registered.status}`);
const clientId = (await registered.json()).client_id;

// 3. Authorization: sign in first, then consent.
const authorizeUrl = (challengeText, extra = {}) => `${serverMeta.authorization_endpoint}?${form({
  response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: challengeText,
  code_challenge_method: 'S256', state: 'st-42', resource: mcpUrl, scope: 'read', ...extra })}`;
const browserCookie = `strata_session=${cookie}`;
async function getCode(pkce, extra = {}) {
  const page = await fetch(authorizeUrl(pkce.challenge, extra), { headers: { Cookie: browserCookie }, redirect: 'manual' });
  if (page.status === 302) return { redirect: new URL(page.headers.get('location')) };
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.match(html, /e2e agent/);
  const fields = Object.fromEntries([...html.matchAll(/name="([a-z_]+)" value="([^"]*)"/g)]
    .map(([, name, value]) => [name, value.replaceAll('&amp;', '&')]));
  const answer = await fetch(serverMeta.authorization_endpoint, {
    method: 'POST',
    headers: { Cookie: browserCookie, 'X-Strata-Request': '1', Origin: base,
      'Content-Type': 'application/x-www-form-urlencoded' },
    body: form({ ...fields, decision: 'approve' }),
  });
  assert.equal(answer.status, 200, await answer.clone().text());
  const redirect = new URL((await answer.json()).redirect_to);
  return { redirect, code: redirect.searchParams.get('code') };
}
const signedOut = await fetch(authorizeUrl(verifierPair().challenge), { redirect: 'manual' });
check(signedOut.status === 302, `signed out: ${signedOut.status}`);
check(signedOut.headers.get('location').startsWith('/signin?next=%2Foauth%2Fauthorize%3F'),
  signedOut.headers.get('location'));
// An unregistered redirect URI is never redirected to.
const wrongRedirect = await fetch(authorizeUrl(verifierPair().challenge, { redirect_uri: 'http://127.0.0.1:9/other' }),
  { headers: { Cookie: browserCookie }, redirect: 'manual' });
check(wrongRedirect.status === 400, `unregistered redirect_uri: ${wrongRedirect.status}`);
// Without PKCE, or for another resource: an error at the redirect URI.
const plain = await getCode({ challenge: 'x'.repeat(43) }, { code_challenge_method: 'plain' });
check(plain.redirect.searchParams.get('error') === 'invalid_request', plain.redirect.href);
const elsewhere = await getCode(verifierPair(), { resource: 'http://other.example/mcp' });
check(elsewhere.redirect.searchParams.get('error') === 'invalid_target', elsewhere.redirect.href);
check(elsewhere.redirect.searchParams.get('state') === 'st-42', 'state comes back');

const token = (fields) => fetch(serverMeta.token_endpoint, {
  method: 'POST', headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
  body: form({ client_id: clientId, ...fields }) });
const exchange = (code, verifier, extra = {}) => token({ grant_type: 'authorization_code', code,
  redirect_uri: redirectUri, code_verifier: verifier, resource: mcpUrl, ...extra });

// 4. A wrong verifier is refused, and the code is spent.
const first = verifierPair();
const firstCode = await getCode(first);
check(firstCode.redirect.searchParams.get('state') === 'st-42', 'state');
check(firstCode.redirect.searchParams.get('iss') === issuer, 'iss');
const wrong = await exchange(firstCode.code, verifierPair().verifier);
check(wrong.status === 400 && (await wrong.json()).error === 'invalid_grant', 'wrong verifier');
const afterWrong = await exchange(firstCode.code, first.verifier);
check(afterWrong.status === 400, 'a code presented once cannot be used again');

// 5. A reused code revokes the tokens its first use gave.
const second = verifierPair();
const secondCode = await getCode(second);
const secondTokens = await (await exchange(secondCode.code, second.verifier)).json();
check(secondTokens.token_type === 'Bearer' && secondTokens.expires_in === 3600, JSON.stringify(secondTokens));
check((await mcp(secondTokens.access_token)).status === 200, 'the access token works at /mcp');
const reused = await exchange(secondCode.code, second.verifier);
check(reused.status === 400 && (await reused.json()).error === 'invalid_grant', 'reused code');
check((await mcp(secondTokens.access_token)).status === 401, 'the reused code revoked its tokens');

// 6. The good path: /mcp with the access token, nowhere else.
const third = verifierPair();
const thirdCode = await getCode(third);
const thirdTokens = await (await exchange(thirdCode.code, third.verifier, { resource: '' })).json();
const session = await mcp(thirdTokens.access_token);
check(session.status === 200, `initialize: ${session.status}`);
const sessionId = session.headers.get('mcp-session-id');
const tools = await fetch(mcpUrl, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${thirdTokens.access_token}`,
    'Mcp-Session-Id': sessionId },
  body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' }),
});
check((await tools.json()).result.tools.length === 9, 'tools/list with the OAuth token');
const rest = await fetch(`${base}/api/v1/services`, { headers: { Authorization: `Bearer ${thirdTokens.access_token}` } });
check(rest.status === 401, `the access token at /api/v1/services: ${rest.status}`);
// A token for another resource: the same server under another name.
const otherHost = api.replace('127.0.0.1', 'localhost');
const otherResource = await fetch(`http://${otherHost}/mcp`, {
  method: 'POST', headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${thirdTokens.access_token}` },
  body: JSON.stringify(initialize) });
check(otherResource.status === 401, `token for ${mcpUrl} at http://${otherHost}/mcp: ${otherResource.status}`);
check((otherResource.headers.get('www-authenticate') ?? '').includes('error="invalid_token"'), 'invalid_token');
const ingestAtMcp = await mcp(ingest);
check(ingestAtMcp.status === 403, `ingest token at /mcp: ${ingestAtMcp.status}`);

// 7. Refresh rotates; the old refresh token used again revokes the family.
const refresh = (refreshToken) => token({ grant_type: 'refresh_token', refresh_token: refreshToken, resource: mcpUrl });
const rotated = await refresh(thirdTokens.refresh_token);
check(rotated.status === 200, `refresh: ${rotated.status}`);
const fourth = await rotated.json();
check(fourth.refresh_token !== thirdTokens.refresh_token, 'a new refresh token');
// The MCP session follows the grant, not the one access token.
const sameSession = await fetch(mcpUrl, {
  method: 'POST',
  headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${fourth.access_token}`,
    'Mcp-Session-Id': sessionId },
  body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'ping' }),
});
check(sameSession.status === 200, `the refreshed token keeps the MCP session: ${sameSession.status}`);
const replay = await refresh(thirdTokens.refresh_token);
check(replay.status === 400 && (await replay.json()).error === 'invalid_grant', 'a used refresh token');
check((await mcp(fourth.access_token)).status === 401, 'the family is revoked: access');
check((await refresh(fourth.refresh_token)).status === 400, 'the family is revoked: refresh');

console.log(JSON.stringify({ ok: true, checks }));
