// The samples the PromQL oracle test loads into both strata and Prometheus:
// one model of three services' metrics over three hours, written twice —
// as OTLP/JSON export requests for strata, and as OpenMetrics text for
// `promtool tsdb create-blocks-from openmetrics`, with the Prometheus names
// and labels the OpenTelemetry specification gives (spelled out here by
// hand, not computed by strata's code, so the test checks the mapping too).
//
// Every 15 s: a cumulative request counter per route and status (one of them
// resets), two gauges, a cumulative duration histogram per route, and a
// delta counter (in Prometheus as the running total; strata sums deltas
// from the start of each query's window, so only differences of it —
// rate, increase — are compared).

export const STEP_S = 15;
export const POINTS = 720;  // three hours
const BOUNDS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

const SERVICES = [
  { name: 'checkout', ns: 'shop', instance: 'c-1', host: 'h-1' },
  { name: 'cart', ns: 'shop', instance: 'k-1', host: 'h-2' },
  { name: 'billing', ns: '', instance: 'b-1', host: 'h-2' },
];
const ROUTES = ['/a', '/b'];
const STATUSES = [200, 500];

// mulberry32: a small seeded generator, so both sides get the same numbers.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// The model: per service, per series, POINTS values. t0 is in seconds.
export function buildModel(t0) {
  const rand = random(42);
  const times = Array.from({ length: POINTS }, (_, i) => t0 + i * STEP_S);
  const services = SERVICES.map((svc) => {
    const requests = [];
    for (const route of ROUTES) {
      for (const status of STATUSES) {
        let total = 0;
        const values = times.map((_, i) => {
          // checkout's /a 200 restarts (a counter reset) at point 400.
          if (svc.name === 'checkout' && route === '/a' && status === 200 && i === 400) total = 0;
          total += Math.floor(rand() * (status === 200 ? 20 : 3));
          return total;
        });
        requests.push({ route, status, values });
      }
    }
    let memory = 1e8 * (1 + rand());
    const memoryValues = times.map(() => (memory += Math.round((rand() - 0.45) * 1e6)));
    const cpu = ['user', 'system'].map((state) => ({
      state, values: times.map(() => Math.round(rand() * 1000) / 1000),
    }));
    const durations = ROUTES.map((route) => {
      const counts = new Array(BOUNDS.length + 1).fill(0);
      let sum = 0;
      const points = times.map(() => {
        const n = Math.floor(rand() * 10);
        for (let k = 0; k < n; ++k) {
          const seconds = Math.exp(rand() * 8 - 6);  // about 2.5 ms to 7 s
          sum += seconds;
          let b = BOUNDS.findIndex((bound) => seconds <= bound);
          if (b < 0) b = BOUNDS.length;
          counts[b] += 1;
        }
        return { counts: [...counts], sum, count: counts.reduce((x, y) => x + y, 0) };
      });
      return { route, points };
    });
    const jobs = times.map(() => Math.floor(rand() * 5));
    return { ...svc, job: svc.ns ? `${svc.ns}/${svc.name}` : svc.name, requests, memoryValues, cpu,
      durations, jobs };
  });
  return { t0, times, services };
}

const str = (key, value) => ({ key, value: { stringValue: value } });
const int = (key, value) => ({ key, value: { intValue: String(value) } });
const nanos = (seconds) => `${BigInt(seconds) * 1000000000n}`;

// OTLP/JSON export requests, one per `chunk` points of time.
export function otlpRequests(model, chunk = 120) {
  const out = [];
  for (let from = 0; from < POINTS; from += chunk) {
    const range = [...Array(Math.min(chunk, POINTS - from)).keys()].map((k) => from + k);
    const resourceMetrics = model.services.map((svc) => {
      const resource = [str('service.name', svc.name), str('service.instance.id', svc.instance),
        str('host.name', svc.host)];
      if (svc.ns) resource.push(str('service.namespace', svc.ns));
      const start = nanos(model.t0 - 60);
      const point = (i, extra) => ({ startTimeUnixNano: start, timeUnixNano: nanos(model.times[i]),
        ...extra });
      const metrics = [
        { name: 'http.server.requests', unit: '{request}', sum: {
          aggregationTemporality: 2, isMonotonic: true,
          dataPoints: svc.requests.flatMap((s) => range.map((i) => point(i, {
            asInt: String(s.values[i]),
            attributes: [str('http.route', s.route), int('http.response.status_code', s.status)],
          }))) } },
        { name: 'process.memory.usage', unit: 'By', gauge: {
          dataPoints: range.map((i) => point(i, { asDouble: svc.memoryValues[i] })) } },
        { name: 'system.cpu.utilization', unit: '1', gauge: {
          dataPoints: svc.cpu.flatMap((c) => range.map((i) => point(i, {
            asDouble: c.values[i], attributes: [str('cpu.state', c.state)] }))) } },
        { name: 'http.server.request.duration', unit: 's', histogram: {
          aggregationTemporality: 2,
          dataPoints: svc.durations.flatMap((d) => range.map((i) => point(i, {
            count: String(d.points[i].count), sum: d.points[i].sum,
            bucketCounts: d.points[i].counts.map(String), explicitBounds: BOUNDS,
            attributes: [str('http.route', d.route)] }))) } },
        { name: 'jobs.processed', unit: '{job}', sum: {
          aggregationTemporality: 1, isMonotonic: true,
          dataPoints: range.map((i) => ({ startTimeUnixNano: nanos(model.times[i] - STEP_S),
            timeUnixNano: nanos(model.times[i]), asInt: String(svc.jobs[i]) })) } },
      ];
      return { resource: { attributes: resource }, scopeMetrics: [{ scope: { name: 'oracle' }, metrics }] };
    });
    out.push({ resourceMetrics });
  }
  return out;
}

function labelText(labels) {
  return `{${Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([k, v]) => `${k}="${v}"`).join(',')}}`;
}

// The same samples as OpenMetrics text, with the specification's names.
export function openMetrics(model) {
  const lines = [];
  const series = (name, labels, values) => {
    const text = labelText(labels);
    values.forEach((v, i) => lines.push(`${name}${text} ${v} ${model.times[i]}`));
  };
  const base = (svc) => ({ job: svc.job, instance: svc.instance });
  lines.push('# TYPE http_server_requests counter');
  for (const svc of model.services) {
    for (const s of svc.requests) {
      series('http_server_requests_total',
        { ...base(svc), http_route: s.route, http_response_status_code: String(s.status) }, s.values);
    }
  }
  lines.push('# TYPE process_memory_usage_bytes gauge');
  for (const svc of model.services) series('process_memory_usage_bytes', base(svc), svc.memoryValues);
  lines.push('# TYPE system_cpu_utilization_ratio gauge');
  for (const svc of model.services) {
    for (const c of svc.cpu) series('system_cpu_utilization_ratio', { ...base(svc), cpu_state: c.state }, c.values);
  }
  lines.push('# TYPE http_server_request_duration_seconds histogram');
  for (const svc of model.services) {
    for (const d of svc.durations) {
      const labels = { ...base(svc), http_route: d.route };
      const les = [...BOUNDS.map(String), '+Inf'];
      les.forEach((le, b) => series('http_server_request_duration_seconds_bucket', { ...labels, le },
        d.points.map((p) => p.counts.slice(0, b + 1).reduce((x, y) => x + y, 0))));
      series('http_server_request_duration_seconds_sum', labels, d.points.map((p) => p.sum));
      series('http_server_request_duration_seconds_count', labels, d.points.map((p) => p.count));
    }
  }
  lines.push('# TYPE jobs_processed counter');
  for (const svc of model.services) {
    let total = 0;
    series('jobs_processed_total', base(svc), svc.jobs.map((n) => (total += n)));
  }
  lines.push('# TYPE target_info gauge');
  for (const svc of model.services) {
    series('target_info', { ...base(svc), host_name: svc.host }, model.times.map(() => 1));
  }
  lines.push('# EOF');
  return `${lines.join('\n')}\n`;
}
