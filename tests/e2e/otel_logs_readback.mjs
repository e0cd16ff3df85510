// Sends structured log records (map and array bodies, typed and nested
// attributes, unicode) to strata through the real OpenTelemetry JS SDK and
// one of its OTLP log exporters, then reads them back with
// GET /api/v1/logs and compares each record's body and attributes with
// what the SDK's own OTLP/JSON serializer makes of the same records.
// Prints one JSON line {"protocol", "sent", "matched"}; exits 1 with the
// differences when any record does not come back exactly.
//
// usage: node otel_logs_readback.mjs <grpc|http/protobuf|http/json>
//          <otlp host:port> <api host:port> <ingest token> <read token> <run-id>

import { credentials, Metadata } from '@grpc/grpc-js';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  LoggerProvider, InMemoryLogRecordExporter, SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { JsonLogsSerializer } from '@opentelemetry/otlp-transformer';
import * as logsGrpc from '@opentelemetry/exporter-logs-otlp-grpc';
import * as logsProto from '@opentelemetry/exporter-logs-otlp-proto';
import * as logsJson from '@opentelemetry/exporter-logs-otlp-http';

const [protocol, otlpTarget, apiTarget, ingestToken, readToken, runId] = process.argv.slice(2);
if (!protocol || !otlpTarget || !apiTarget || !ingestToken || !readToken || !runId) {
  console.error('usage: node otel_logs_readback.mjs <grpc|http/protobuf|http/json> '
    + '<otlp host:port> <api host:port> <ingest token> <read token> <run-id>');
  process.exit(2);
}

const exporterModule = {
  grpc: logsGrpc, 'http/protobuf': logsProto, 'http/json': logsJson,
}[protocol];
if (!exporterModule) {
  console.error(`unknown protocol ${protocol}`);
  process.exit(2);
}
let config;
if (protocol === 'grpc') {
  const metadata = new Metadata();
  metadata.set('authorization', `Bearer ${ingestToken}`);
  config = { url: `http://${otlpTarget}`, metadata, credentials: credentials.createInsecure() };
} else {
  config = {
    url: `http://${otlpTarget}/v1/logs`,
    headers: { Authorization: `Bearer ${ingestToken}` },
  };
}
const exporter = new exporterModule.OTLPLogExporter(config);

const resource = resourceFromAttributes({
  'service.name': `e2e-logs-${protocol}`,
  'strata.run_id': runId,
  'host.cpu.count': 2,
});
const memory = new InMemoryLogRecordExporter();
const provider = new LoggerProvider({
  resource, processors: [new SimpleLogRecordProcessor(memory)],
});
const logger = provider.getLogger('strata-e2e-logs', '0.2.0', {
  attributes: { 'scope.tier': 'gold', 'scope.shard': 4 },
});

// The SDK's OTLP/JSON serializer writes a Uint8Array as an object of its
// indices rather than base64, so bytes values go only through the binary
// transports.
const binary = protocol !== 'http/json';
const records = [
  {
    severityNumber: SeverityNumber.ERROR,
    severityText: 'ERROR',
    body: {
      message: `payment failed ${runId}`,
      code: 402,
      amount: 12.5,
      retryable: false,
      tags: ['card', 'declined', 7],
      customer: { id: 7, name: 'Zoë Ångström 東京', flags: [true, false] },
      ...(binary ? { raw: new Uint8Array([0, 1, 127, 128, 255]) } : {}),
    },
    attributes: {
      'strata.run_id': runId,
      attempt: 3,
      ratio: 0.125,
      retry: true,
      'http.route': '/pay/:id',
      tags: ['a', 'b'],
      counts: [1, 2, 3],
      details: { region: 'eu-west-1', zone: 2 },
      ...(binary ? { digest: new Uint8Array([222, 173, 190, 239]) } : {}),
    },
  },
  {
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: ['list', 'body', 42, { nested: `deep ${runId}` }],
    attributes: { 'strata.run_id': runId, 'user.name': 'Ünïcödé ✓ 😀' },
  },
  {
    severityNumber: SeverityNumber.WARN,
    body: `plain string ${runId} with \"quotes\" and \\ backslash\ttab`,
    attributes: { 'strata.run_id': runId, big: 9007199254740991, negative: -42 },
  },
];
for (const record of records) logger.emit(record);
const finished = memory.getFinishedLogRecords();
if (finished.length !== records.length) {
  console.error(`the SDK finished ${finished.length} of ${records.length} records`);
  process.exit(1);
}

await new Promise((resolve) => {
  exporter.export(finished, (result) => {
    if (result.code === 0) {
      resolve();
      return;
    }
    console.error(`export failed: ${result.error?.message ?? result.code}`);
    process.exit(1);
  });
});
await exporter.shutdown();

// What the SDK's OTLP/JSON encoding of these records is, in the forms
// OTLP/JSON allows one spelling of: 64-bit ints as decimal strings, bytes
// as base64.
function canonical(value) {
  if (Array.isArray(value)) return value.map(canonical);
  if (value === null || typeof value !== 'object') return value;
  const out = {};
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'intValue') {
      out[key] = String(inner);
    } else if (key === 'bytesValue' && typeof inner === 'object') {
      const bytes = Uint8Array.from(Object.keys(inner).sort((a, b) => a - b).map((k) => inner[k]));
      out[key] = Buffer.from(bytes).toString('base64');
    } else {
      out[key] = canonical(inner);
    }
  }
  return out;
}
const request = JSON.parse(new TextDecoder().decode(JsonLogsSerializer.serializeRequest(finished)));
const expected = [];
for (const resourceLogs of request.resourceLogs) {
  for (const scopeLogs of resourceLogs.scopeLogs) {
    for (const record of scopeLogs.logRecords) {
      expected.push(canonical({
        time_unix_nano: String(record.timeUnixNano),
        severity_number: record.severityNumber ?? 0,
        severity_text: record.severityText ?? '',
        body: record.body ?? {},
        attributes: record.attributes ?? [],
        scope_attributes: scopeLogs.scope?.attributes ?? [],
        resource_attributes: resourceLogs.resource?.attributes ?? [],
      }));
    }
  }
}

// The records GET /api/v1/logs answers for `filters` (all of them: far
// fewer than one page).
async function readLogs(filters) {
  const query = new URLSearchParams({
    ...filters,
    start: '0',
    end: String(BigInt(Date.now() + 3600_000) * 1_000_000n),
    limit: '100',
  });
  const response = await fetch(`http://${apiTarget}/api/v1/logs?${query}`, {
    headers: { Authorization: `Bearer ${readToken}` },
  });
  const text = await response.text();
  if (response.status !== 200) {
    console.error(`GET /api/v1/logs?${query} answered ${response.status}: ${text}`);
    process.exit(1);
  }
  return JSON.parse(text).logs;
}

const problems = [];
// q= finds strings inside kvlist and array bodies, ignoring case, and
// only there.
const searches = [
  [`PAYMENT failed ${runId}`, 'ERROR'],
  [`Deep ${runId}`, 'INFO'],
  [`plain STRING ${runId}`, ''],
];
for (const [q, severity] of searches) {
  const found = (await readLogs({ 'attr.strata.run_id': runId, q })).map((l) => l.severity_text);
  if (JSON.stringify(found) !== JSON.stringify([severity])) {
    problems.push(`q=${q} found ${JSON.stringify(found)}, not [${JSON.stringify(severity)}]`);
  }
}

const got = (await readLogs({ 'attr.strata.run_id': runId })).map((log) => canonical({
  time_unix_nano: log.time_unix_nano,
  severity_number: log.severity_number,
  severity_text: log.severity_text,
  body: log.body,
  attributes: log.attributes,
  scope_attributes: log.scope_attributes,
  resource_attributes: log.resource_attributes,
}));

// Records come back newest first; match each sent record by content.
const unmatched = got.map((g) => JSON.stringify(g));
for (const want of expected) {
  const key = JSON.stringify(want);
  const at = unmatched.indexOf(key);
  if (at >= 0) {
    unmatched.splice(at, 1);
  } else {
    problems.push(`sent but not read back: ${key}`);
  }
}
for (const extra of unmatched) problems.push(`read back but not sent: ${extra}`);
if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(JSON.stringify({ protocol, sent: expected.length, matched: got.length }));
