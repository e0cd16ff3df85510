// Sends traces to one strata server through the real OpenTelemetry JS SDK
// (tracer provider and its OTLP/HTTP protobuf exporter) for a while, and
// records every request the server acknowledged in the format of
// `strata loadgen --record` (docs/format/loadgen-record.md), so a test
// that SIGKILLs servers can check afterwards that every acknowledged span
// was stored (tests/e2e/cluster_crash_test.cc).
//
// usage: node otel_record_send.mjs <host:port> <token> <record-file> <seconds> <max-requests>
//            <spans-per-request> <concurrency>
//
// Each request is one trace made by the SDK: a root span and its children.
// The record holds the request body as the SDK's own protobuf serializer
// writes it, the bytes the exporter sends. An export is recorded only when
// the exporter reports success, which for OTLP/HTTP means an HTTP 200 (the
// exporter retries 429, 502, 503 and 504 itself). Failures (a killed
// server) are counted, not recorded; the script ends when the time is up
// or `max-requests` exports were tried, and exits 0 unless its arguments or
// the record file are wrong. Each entry goes to the file in one write(2), so
// a SIGKILLed sender leaves at most a truncated last entry.

import { closeSync, openSync, writeSync } from 'node:fs';
import { context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';

const [target, token, recordPath, secondsArg, maxArg, spansArg, concurrencyArg] =
  process.argv.slice(2);
const seconds = Number(secondsArg);
const maxRequests = Number(maxArg);
const spansPerRequest = Number(spansArg);
const concurrency = Number(concurrencyArg);
if (!target || !token || !recordPath || !(seconds > 0) || !(maxRequests > 0) ||
    !(spansPerRequest > 0) || !(concurrency > 0)) {
  console.error('usage: node otel_record_send.mjs <host:port> <token> <record-file> <seconds> '
    + '<max-requests> <spans-per-request> <concurrency>');
  process.exit(2);
}

const record = openSync(recordPath, 'w');
const exporter = new OTLPTraceExporter({
  url: `http://${target}/v1/traces`,
  headers: { Authorization: `Bearer ${token}` },
  timeoutMillis: 10000,
});
const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: resourceFromAttributes({ 'service.name': 'e2e-cluster-sdk' }),
  spanProcessors: [new SimpleSpanProcessor(memory)],
});
const tracer = provider.getTracer('strata-e2e-cluster', '0.1.0');

// One trace of `spansPerRequest` spans, made synchronously, so no other
// worker's spans end up in the memory exporter between reset and read.
function makeTrace(n) {
  memory.reset();
  tracer.startActiveSpan(`request ${n}`, (root) => {
    root.setAttribute('request.number', n);
    const parent = trace.setSpan(context.active(), root);
    for (let i = 1; i < spansPerRequest; ++i) {
      const child = tracer.startSpan(`step ${i}`, {}, parent);
      child.setAttribute('step', i);
      child.end();
    }
    root.end();
  });
  return memory.getFinishedSpans().slice();
}

function exportSpans(spans) {
  return new Promise((resolve) => {
    exporter.export(spans, (result) => resolve(result.code === 0));
  });
}

const deadline = Date.now() + seconds * 1000;
let tried = 0;
let acknowledged = 0;
let failed = 0;
async function worker() {
  while (Date.now() < deadline && tried < maxRequests) {
    const spans = makeTrace(tried++);
    const body = ProtobufTraceSerializer.serializeRequest(spans);
    if (await exportSpans(spans)) {
      const header = Buffer.from(`traces ${spans.length} ${body.length}\n`);
      writeSync(record, Buffer.concat([header, Buffer.from(body), Buffer.from('\n')]));
      ++acknowledged;
    } else {
      ++failed;
    }
  }
}
await Promise.all(Array.from({ length: concurrency }, worker));
closeSync(record);
await exporter.shutdown();
console.log(JSON.stringify({ tried, acknowledged, failed }));
