// Sends traces, logs and metrics to strata through the real OpenTelemetry JS
// SDK and its OTLP exporters, then prints what it sent as one JSON line, for
// tests/e2e/otel_sdk_test.cc to look for in the stored Parquet.
//
// usage: node otel_send.mjs <grpc|http/protobuf|http/json> <host:port> <token> <run-id> [gzip]
//
// With STRATA_E2E_CA set to a PEM file, every exporter speaks TLS (https://,
// gRPC's SSL credentials) and trusts only that CA.
//
// Spans, log records and data points are produced by the SDK itself (tracer,
// logger and meter providers); each exporter's own export() is called with
// them, so a refused export is seen as a failed ExportResult, which makes the
// script exit 1 with the exporter's error.

import { readFileSync } from 'node:fs';
import { credentials, Metadata } from '@grpc/grpc-js';
import { SeverityNumber } from '@opentelemetry/api-logs';
import { SpanStatusCode, context, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-base';
import {
  LoggerProvider, InMemoryLogRecordExporter, SimpleLogRecordProcessor,
} from '@opentelemetry/sdk-logs';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import * as traceGrpc from '@opentelemetry/exporter-trace-otlp-grpc';
import * as traceProto from '@opentelemetry/exporter-trace-otlp-proto';
import * as traceJson from '@opentelemetry/exporter-trace-otlp-http';
import * as logsGrpc from '@opentelemetry/exporter-logs-otlp-grpc';
import * as logsProto from '@opentelemetry/exporter-logs-otlp-proto';
import * as logsJson from '@opentelemetry/exporter-logs-otlp-http';
import * as metricsGrpc from '@opentelemetry/exporter-metrics-otlp-grpc';
import * as metricsProto from '@opentelemetry/exporter-metrics-otlp-proto';
import * as metricsJson from '@opentelemetry/exporter-metrics-otlp-http';

const [protocol, target, token, runId, compressionArg] = process.argv.slice(2);
if (!protocol || !target || !token || !runId) {
  console.error('usage: node otel_send.mjs <grpc|http/protobuf|http/json> <host:port> <token> <run-id> [gzip]');
  process.exit(2);
}
const compression = compressionArg === 'gzip' ? 'gzip' : 'none';

const caPath = process.env.STRATA_E2E_CA;
const ca = caPath ? readFileSync(caPath) : null;
const scheme = ca ? 'https' : 'http';

function exporterConfig(path) {
  if (protocol === 'grpc') {
    const metadata = new Metadata();
    metadata.set('authorization', `Bearer ${token}`);
    return {
      url: `${scheme}://${target}`,
      metadata,
      compression,
      credentials: ca ? credentials.createSsl(ca) : credentials.createInsecure(),
    };
  }
  return {
    url: `${scheme}://${target}${path}`,
    headers: { Authorization: `Bearer ${token}` },
    compression,
    ...(ca ? { httpAgentOptions: { ca, keepAlive: true } } : {}),
  };
}

const modules = {
  grpc: [traceGrpc, logsGrpc, metricsGrpc],
  'http/protobuf': [traceProto, logsProto, metricsProto],
  'http/json': [traceJson, logsJson, metricsJson],
}[protocol];
if (!modules) {
  console.error(`unknown protocol ${protocol}`);
  process.exit(2);
}
const traceExporter = new modules[0].OTLPTraceExporter(exporterConfig('/v1/traces'));
const logExporter = new modules[1].OTLPLogExporter(exporterConfig('/v1/logs'));
const metricExporter = new modules[2].OTLPMetricExporter(exporterConfig('/v1/metrics'));

function exportWith(exporter, items) {
  return new Promise((resolve, reject) => {
    exporter.export(items, (result) => {
      if (result.code === 0) resolve();
      else reject(result.error ?? new Error(`export failed with code ${result.code}`));
    });
  });
}

const resource = resourceFromAttributes({
  'service.name': `e2e-${protocol}`,
  'service.version': '1.2.3',
  'strata.run_id': runId,
});

// Traces: a root span with two children, one an error, with events and
// attributes of several types. No context manager is registered (none is
// needed to export), so the children are given their parent's context
// explicitly, as an application without one does.
const spanMemory = new InMemorySpanExporter();
const tracerProvider = new BasicTracerProvider({
  resource, spanProcessors: [new SimpleSpanProcessor(spanMemory)],
});
const tracer = tracerProvider.getTracer('strata-e2e', '0.1.0');
const traceIds = [];
for (let t = 0; t < 3; ++t) {
  tracer.startActiveSpan(`GET /orders/${t}`, (root) => {
    root.setAttribute('http.request.method', 'GET');
    root.setAttribute('http.route', '/orders/:id');
    root.setAttribute('http.response.status_code', 200);
    root.setAttribute('strata.run_id', runId);
    traceIds.push(root.spanContext().traceId);
    const parent = trace.setSpan(context.active(), root);
    tracer.startActiveSpan('SELECT orders', {}, parent, (db) => {
      db.setAttribute('db.system', 'postgresql');
      db.setAttribute('rows', 12);
      db.setAttribute('ratio', 0.25);
      db.setAttribute('cached', false);
      db.addEvent('query.start', { 'statement.length': 42 });
      db.end();
    });
    tracer.startActiveSpan('charge card', {}, parent, (rpc) => {
      rpc.setStatus({ code: SpanStatusCode.ERROR, message: 'card declined' });
      rpc.setAttribute('tags', ['payments', 'retry']);
      rpc.end();
    });
    root.end();
  });
}
const spans = spanMemory.getFinishedSpans();

// Logs: records that carry the trace context of a span and a run marker.
const logMemory = new InMemoryLogRecordExporter();
const loggerProvider = new LoggerProvider({
  resource, processors: [new SimpleLogRecordProcessor(logMemory)],
});
const logger = loggerProvider.getLogger('strata-e2e');
const logBodies = [];
for (let i = 0; i < 5; ++i) {
  const body = `run ${runId} log ${i}`;
  logBodies.push(body);
  logger.emit({
    severityNumber: i === 4 ? SeverityNumber.ERROR : SeverityNumber.INFO,
    severityText: i === 4 ? 'ERROR' : 'INFO',
    body,
    attributes: { 'strata.run_id': runId, attempt: i },
  });
}
const logRecords = logMemory.getFinishedLogRecords();

// Metrics: a counter, a histogram and a gauge, read by a pull reader so the
// exporter gets exactly one collection.
class CollectingReader extends MetricReader {
  async onForceFlush() {}
  async onShutdown() {}
}
const reader = new CollectingReader();
const meterProvider = new MeterProvider({ resource, readers: [reader] });
const meter = meterProvider.getMeter('strata-e2e');
const counterName = `e2e.requests.${runId}`;
const histogramName = `e2e.latency.${runId}`;
const gaugeName = `e2e.queue.${runId}`;
const counter = meter.createCounter(counterName, { unit: '1' });
const histogram = meter.createHistogram(histogramName, { unit: 'ms' });
const gauge = meter.createGauge(gaugeName);
counter.add(3, { route: '/orders' });
counter.add(4, { route: '/cart' });
for (const v of [1, 5, 12, 80]) histogram.record(v, { route: '/orders' });
gauge.record(17, { queue: 'default' });
const { resourceMetrics, errors } = await reader.collect();
if (errors.length > 0) throw errors[0];

try {
  await exportWith(traceExporter, spans);
  await exportWith(logExporter, logRecords);
  await exportWith(metricExporter, resourceMetrics);
} catch (e) {
  console.error(`export failed: ${e?.message ?? e} (code ${e?.code ?? 'none'})`);
  process.exit(1);
}
await traceExporter.shutdown();
await logExporter.shutdown();
await metricExporter.shutdown();

console.log(JSON.stringify({
  protocol,
  traceIds,
  spans: spans.map((s) => ({ traceId: s.spanContext().traceId, spanId: s.spanContext().spanId, name: s.name })),
  logBodies,
  metricNames: [counterName, histogramName, gaugeName],
}));
