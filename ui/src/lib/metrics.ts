// The metrics page's pure logic: the API's answers, series aligned for a
// chart, steps, and the heatmap of a histogram's buckets over time (from
// its raw points, read with SQL: the REST API answers quantiles, not
// buckets).

import type { Window } from './format';

export type MetricType = 'gauge' | 'sum' | 'histogram' | 'exponential_histogram' | 'summary';

export interface MetricName {
  name: string;
  type: MetricType;
  unit: string;
  points: number;
}

// What SQL adds to a name: its description and attribute keys.
export interface MetricDetails {
  description: string;
  attributes: string[];
}

export type MetricValue = number | 'NaN' | 'Infinity' | '-Infinity';

export interface MetricSeries {
  labels: { key: string; value: string }[];
  points: [string, MetricValue][];
}

export interface MetricQueryAnswer {
  name: string;
  agg: string;
  start_time_unix_nano: string;
  end_time_unix_nano: string;
  step_nano: string;
  series: MetricSeries[];
}

export const AGGREGATIONS = ['sum', 'avg', 'min', 'max', 'rate', 'p50', 'p90', 'p95', 'p99'] as const;
export const PERCENTILES = ['p50', 'p95', 'p99'] as const;

// The steps offered besides the API's default (window / 60).
export const STEPS: Record<string, number> = {
  '10s': 10e9, '30s': 30e9, '1m': 60e9, '5m': 300e9, '15m': 900e9, '1h': 3600e9,
};

// The API's default step (DefaultStep in src/api/metric_query.cc): the
// window over 60, rounded to whole seconds, at least one second. In ns.
export function defaultStepNanos(window: Window): number {
  const seconds = Math.round((window.endMs - window.startMs) / 60 / 1e3);
  return Math.max(1, seconds) * 1e9;
}

// Which views a metric type has: histograms also as percentiles and a
// heatmap (explicit buckets only: the API's quantiles and the heatmap need
// bucket bounds).
export function viewsOf(type: MetricType): ('series' | 'percentiles' | 'heatmap')[] {
  return type === 'histogram' ? ['series', 'percentiles', 'heatmap'] : ['series'];
}

export function seriesLabel(labels: MetricSeries['labels']): string {
  return labels.length === 0 ? '(no attributes)' : labels.map((l) => `${l.key}=${l.value}`).join(' ');
}

// A point's value for a chart: non-finite values are gaps.
export function finite(value: MetricValue): number | null {
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

// Series with their own bucket times as one x axis (unix seconds) with a
// value or null per series at each time, as uPlot wants them.
export function alignSeries(series: { label: string; points: [string, MetricValue][] }[]): {
  times: number[];
  values: (number | null)[][];
} {
  const all = new Set<string>();
  for (const s of series) for (const [time] of s.points) all.add(time);
  const ordered = [...all].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0));
  const index = new Map(ordered.map((time, i) => [time, i]));
  const values = series.map((s) => {
    const row: (number | null)[] = new Array(ordered.length).fill(null);
    for (const [time, value] of s.points) row[index.get(time)!] = finite(value);
    return row;
  });
  return { times: ordered.map((t) => Number(BigInt(t) / 1_000_000n) / 1e3), values };
}

// min, max, last and the point count of a series.
export function summarize(points: [string, MetricValue][]): {
  points: number; min: number | null; max: number | null; last: number | null;
} {
  let min: number | null = null;
  let max: number | null = null;
  let last: number | null = null;
  for (const [, raw] of points) {
    const value = finite(raw);
    if (value === null) continue;
    min = min === null ? value : Math.min(min, value);
    max = max === null ? value : Math.max(max, value);
    last = value;
  }
  return { points: points.length, min, max, last };
}

// A value with its unit ("{items}" style annotations are shown bare).
export function withUnit(value: number | null, unit: string): string {
  if (value === null) return '–';
  const shown = Math.abs(value) >= 1000 || Number.isInteger(value) ? value.toLocaleString('en-US') : value.toPrecision(4);
  const bare = unit.replace(/^\{(.*)\}$/, '$1');
  return bare && bare !== '1' ? `${shown} ${bare}` : shown;
}

const quote = (text: string) => `'${text.replace(/'/g, "''")}'`;
const nanos = (ms: number) => (BigInt(Math.round(ms)) * 1_000_000n).toString();

// Every metric's description and point attribute keys in the window.
export function detailsSql(window: Window): string {
  return `SELECT metric_name, any_value(metric_description) AS description,
  CAST(to_json(list_sort(list_distinct(flatten(list(DISTINCT attr_keys))))) AS VARCHAR) AS attributes
FROM metrics
WHERE time_unix_nano >= ${nanos(window.startMs)} AND time_unix_nano < ${nanos(window.endMs)}
GROUP BY metric_name`;
}

// A histogram's points for the heatmap: the time bucket each falls in
// (k, from the window's start in steps), its stream (service, point and
// resource attributes), temporality, bounds and bucket counts, by stream
// and time.
export function heatmapSql(name: string, window: Window, stepNanos: number): string {
  const start = nanos(window.startMs);
  return `SELECT CAST((time_unix_nano - ${start}) // ${BigInt(Math.round(stepNanos))} AS BIGINT) AS k,
  md5(coalesce(service_name, '') || chr(30) || CAST(attributes AS VARCHAR) || chr(30) ||
      CAST(resource_attributes AS VARCHAR)) AS stream,
  aggregation_temporality AS temporality,
  array_to_string(explicit_bounds, ',') AS bounds, array_to_string(bucket_counts, ',') AS counts
FROM metrics
WHERE metric_name = ${quote(name)} AND metric_type_name = 'HISTOGRAM'
  AND time_unix_nano >= ${start} AND time_unix_nano < ${nanos(window.endMs)}
ORDER BY stream, time_unix_nano`;
}

export interface HistogramPoint {
  k: number;  // time bucket
  stream: string;
  temporality: number;  // 1 delta, 2 cumulative
  bounds: number[];
  counts: number[];
}

export interface Heatmap {
  bounds: number[];  // the histogram's upper bounds; one more bucket above the last
  cells: number[][];  // [time bucket][histogram bucket] -> observations
  max: number;
  total: number;
}

const numbers = (text: string | null) => (text ? text.split(',').map(Number) : []);

export function histogramPoint(row: unknown[]): HistogramPoint {
  return {
    k: Number(row[0]),
    stream: String(row[1]),
    temporality: Number(row[2]),
    bounds: numbers(row[3] as string | null),
    counts: numbers(row[4] as string | null),
  };
}

// Observations per time bucket and histogram bucket, as the API's
// quantiles count them (src/api/metric_query.cc): a cumulative stream's
// point adds its difference from the stream's previous point (its whole
// counts after a reset, i.e. any decrease, or when the bucket count
// changed), and the stream's first point in the window adds nothing; a
// delta point adds its counts. A time bucket keeps the bounds of the first
// point it gets; points with other bounds are left out. `points` are by
// stream, then time.
export function heatmapCells(points: HistogramPoint[], buckets: number): Heatmap {
  const cells: number[][] = Array.from({ length: buckets }, () => []);
  const boundsOf: (number[] | null)[] = new Array(buckets).fill(null);
  let previous: HistogramPoint | null = null;
  for (const point of points) {
    const sameStream = previous !== null && previous.stream === point.stream;
    let delta = point.counts;
    let use = true;
    if (point.temporality === 2) {
      use = sameStream;
      if (use && previous!.counts.length === point.counts.length) {
        const diff = point.counts.map((c, i) => c - previous!.counts[i]);
        if (!diff.some((d) => d < 0)) delta = diff;
      }
    }
    previous = point;
    if (!use || point.k < 0 || point.k >= buckets) continue;
    const known = boundsOf[point.k];
    if (known === null) {
      boundsOf[point.k] = point.bounds;
      cells[point.k] = [...delta];
    } else if (sameBounds(known, point.bounds) && cells[point.k].length === delta.length) {
      delta.forEach((d, i) => (cells[point.k][i] += d));
    }
  }
  // The map's rows: the bounds most time buckets have; others are left out.
  const votes = new Map<string, number>();
  for (const b of boundsOf) if (b) votes.set(b.join(','), (votes.get(b.join(',')) ?? 0) + 1);
  const chosen = [...votes.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  const bounds = chosen === undefined ? [] : numbers(chosen);
  let max = 0;
  let total = 0;
  const rows = cells.map((row, k) => {
    if (boundsOf[k] === null || !sameBounds(boundsOf[k]!, bounds)) return new Array(bounds.length + 1).fill(0);
    for (const n of row) {
      max = Math.max(max, n);
      total += n;
    }
    return row;
  });
  return { bounds, cells: rows, max, total };
}

function sameBounds(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

// A histogram bucket's name: "≤ 10", and "> 100" for the overflow bucket.
export function bucketName(bounds: number[], index: number): string {
  return index < bounds.length ? `≤ ${bounds[index]}` : `> ${bounds[bounds.length - 1] ?? 0}`;
}
