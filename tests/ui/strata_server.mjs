// A real `strata serve` on loopback for the browser tests: ephemeral ports,
// a fresh data directory, and what its first boot printed (the API and
// OTLP/HTTP addresses, the ingest token, the setup link's token).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export function strataBinary() {
  return resolve(process.env.STRATA_BINARY ?? 'build/release/strata');
}

// `strata serve` of `binary` over `dataDir` on loopback with ephemeral
// ports, once it says it is ready (waiting up to `readyMs`): its API and
// OTLP/HTTP addresses, all it printed, and stop(). ui/bench.mjs uses it
// too.
export async function serveStrata(binary, dataDir, readyMs = 60_000) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME ?? '/tmp' };
  const child = spawn(
    binary,
    [
      'serve', '--data-dir', dataDir,
      '--api-address', '127.0.0.1:0',
      '--otlp-grpc-address', '127.0.0.1:0',
      '--otlp-http-address', '127.0.0.1:0',
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  await new Promise((resolveReady, reject) => {
    const timer = setTimeout(() => reject(new Error(`strata serve did not start:\n${output}`)), readyMs);
    const check = () => {
      if (output.includes('ready; waiting for SIGINT or SIGTERM')) {
        clearTimeout(timer);
        resolveReady();
      }
    };
    child.stdout.on('data', check);
    child.stderr.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`strata serve exited with ${code}:\n${output}`));
    });
  });
  const grab = (pattern) => {
    const match = pattern.exec(output);
    if (!match) throw new Error(`${pattern} not in the server's output:\n${output}`);
    return match[1];
  };
  return {
    api: `http://${grab(/API listening on ([0-9.]+:[0-9]+)/)}`,
    otlpHttp: `http://${grab(/OTLP\/HTTP listening on ([0-9.]+:[0-9]+)/)}`,
    grab,
    pid: child.pid,
    output: () => output,
    async stop() {
      child.removeAllListeners('exit');
      child.kill('SIGTERM');
      await new Promise((done) => child.once('exit', done));
    },
  };
}

// A server on a fresh data directory, with what its first boot printed:
// the ingest token and the setup link's token. stop() removes the
// directory.
export async function startServer() {
  const dataDir = mkdtempSync(join(tmpdir(), 'strata-ui-'));
  const server = await serveStrata(strataBinary(), dataDir);
  return {
    ...server,
    ingestToken: server.grab(/store it now[^\n]*\n\s*(strata_[a-z0-9]+)/),
    setupToken: server.grab(/\/setup#token=([a-z0-9]+)/),
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

// One trace across two services: checkout's SERVER root, its CLIENT call,
// and cart's SERVER span under that call, with typed attributes and an
// event.
export function threeSpanTrace(traceId) {
  const now = BigInt(Date.now()) * 1_000_000n - 2_000_000_000n;
  const span = (spanId, parent, name, kind, offsetMs, durationMs, attributes, extra = {}) => ({
    traceId,
    spanId,
    parentSpanId: parent,
    name,
    kind,
    startTimeUnixNano: String(now + BigInt(offsetMs) * 1_000_000n),
    endTimeUnixNano: String(now + BigInt(offsetMs + durationMs) * 1_000_000n),
    attributes,
    ...extra,
  });
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
        scopeSpans: [
          {
            scope: { name: 'ui-test', version: '1.0' },
            spans: [
              span('00000000000000a1', '', 'POST /checkout', 2, 0, 120, [
                { key: 'http.route', value: { stringValue: '/checkout' } },
              ]),
              span('00000000000000a2', '00000000000000a1', 'GET cart', 3, 10, 60, [
                { key: 'http.request.method', value: { stringValue: 'GET' } },
                { key: 'retry.count', value: { intValue: '2' } },
              ]),
            ],
          },
        ],
      },
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'cart' } }] },
        scopeSpans: [
          {
            spans: [
              span('00000000000000a3', '00000000000000a2', 'GET /cart/items', 2, 15, 40, [
                { key: 'http.route', value: { stringValue: '/cart' } },
                { key: 'cart.items', value: { arrayValue: { values: [{ intValue: '3' }, { stringValue: 'x' }] } } },
              ], { events: [{ name: 'cache miss', timeUnixNano: String(now + 20_000_000n), attributes: [] }] }),
            ],
          },
        ],
      },
    ],
  };
}

// Two log records of checkout: an INFO line and an ERROR with a map body,
// the second tied to `traceId`'s span a1.
export function checkoutLogs(traceId) {
  const now = String(BigInt(Date.now()) * 1_000_000n - 1_000_000_000n);
  return {
    resourceLogs: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'checkout' } }] },
        scopeLogs: [
          {
            logRecords: [
              { timeUnixNano: now, severityNumber: 9, severityText: 'INFO', body: { stringValue: 'cart loaded' } },
              {
                timeUnixNano: now,
                severityNumber: 17,
                severityText: 'ERROR',
                traceId,
                spanId: '00000000000000a1',
                body: {
                  kvlistValue: {
                    values: [
                      { key: 'message', value: { stringValue: 'payment failed' } },
                      { key: 'code', value: { intValue: '402' } },
                    ],
                  },
                },
                attributes: [{ key: 'attempt', value: { intValue: '3' } }],
              },
            ],
          },
        ],
      },
    ],
  };
}

// OTLP/JSON spans for `service`: `count` SERVER spans ending now, the first
// `errors` of them with status ERROR.
export function serverSpans(service, count, errors) {
  const now = BigInt(Date.now()) * 1_000_000n;
  const hex = (n, width) => n.toString(16).padStart(width, '0');
  const spans = [];
  for (let i = 0; i < count; i += 1) {
    spans.push({
      traceId: hex(BigInt(service.length) * 1_000_003n + BigInt(i) + 1n, 32),
      spanId: hex(BigInt(i) + 1n, 16),
      name: `GET /${service}`,
      kind: 2,
      startTimeUnixNano: String(now - 5_000_000_000n - BigInt(i) * 1_000_000n),
      endTimeUnixNano: String(now - 5_000_000_000n - BigInt(i) * 1_000_000n + 20_000_000n),
      status: i < errors ? { code: 2 } : {},
    });
  }
  return {
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
        scopeSpans: [{ spans }],
      },
    ],
  };
}
