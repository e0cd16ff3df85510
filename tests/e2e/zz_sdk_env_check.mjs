// Sends one span through the JS SDK configured only by OTEL_EXPORTER_OTLP_* variables.
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
const proto = process.argv[2];
let Exporter;
if (proto === 'grpc') Exporter = (await import('@opentelemetry/exporter-trace-otlp-grpc')).OTLPTraceExporter;
else if (proto === 'http/json') Exporter = (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter;
else Exporter = (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter;
const exporter = new Exporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const tracer = provider.getTracer('env-check');
const span = tracer.startSpan('env-check-' + proto.replace('/', '-'));
const traceId = span.spanContext().traceId;
span.end();
await provider.forceFlush();
await provider.shutdown();
console.log(traceId);
