// A token made through the API works on the very next request, and a
// revoked one is refused on the very next request: the API refreshes the
// authenticator itself rather than leaving the change to its once-a-second
// refresh (the compatible APIs' clients — Grafana, promtool — are set up
// with a token made a moment before).
//
// STRATA_BINARY: the server (default build/release/strata).

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { startServer } from '../ui/strata_server.mjs';

let server;
let cookie;

before(async () => {
  server = await startServer();
  const setup = await fetch(`${server.api}/api/v1/auth/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
    body: JSON.stringify({ token: server.setupToken, email: 'admin@example.com', name: 'Admin',
      password: 'correct horse battery staple' }),
  });
  assert.equal(setup.status, 201, await setup.text());
  cookie = setup.headers.get('set-cookie').split(';')[0];
});

after(async () => {
  await server?.stop();
});

const admin = (method, path, body) => fetch(`${server.api}${path}`, {
  method,
  headers: { Cookie: cookie, 'Content-Type': 'application/json', 'X-Strata-Request': '1' },
  body: body && JSON.stringify(body),
});

test('created tokens work at once and revoked ones stop at once', async () => {
  for (let i = 0; i < 10; ++i) {
    const made = await admin('POST', '/api/v1/tokens', { name: `t${i}`, scope: 'read' });
    const text = await made.text();
    assert.equal(made.status, 201, text);
    const { id, token } = JSON.parse(text);
    const use = () => fetch(`${server.api}/prometheus/api/v1/status/buildinfo`,
      { headers: { Authorization: `Bearer ${token}` } });
    assert.equal((await use()).status, 200, `token ${i} refused right after it was made`);
    const revoked = await admin('DELETE', `/api/v1/tokens/${id}`);
    assert.equal(revoked.status, 200, await revoked.text());
    assert.equal((await use()).status, 401, `token ${i} accepted right after it was revoked`);
  }
});
