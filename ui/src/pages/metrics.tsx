// Metrics (its own chunk): names in the window with their type, unit,
// description and attributes, a search over them, and the chosen metric
// charted with an aggregation and a step; histograms also as percentiles
// and as a heatmap of their buckets. Everything chosen is in the URL.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { type Series, TimeChart } from '../components/chart';
import { HeatmapChart } from '../components/heatmap';
import { SaveQuery } from '../components/save_query';
import { get, messageOf, post } from '../lib/api';
import { count, parseRange, rangeParams, toMinutes } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';
import {
  AGGREGATIONS, alignSeries, bucketName, defaultStepNanos, detailsSql, type Heatmap, heatmapCells,
  heatmapSql, histogramPoint, type MetricDetails, type MetricName, type MetricQueryAnswer,
  type MetricType, PERCENTILES, seriesLabel, STEPS, summarize, viewsOf, withUnit,
} from '../lib/metrics';

const PALETTE = ['--accent', '--warn', '--bad', '--ok', '--idle', '--muted'];
const MAX_HEATMAP_COLUMNS = 2000;

interface SqlAnswer {
  rows: unknown[][];
  truncated: boolean;
}

function defaultAgg(type: MetricType): string {
  return type === 'sum' ? 'rate' : 'avg';
}

// Loads `load` whenever `key` changes; the answer is shown only for the
// key it answers.
function useKeyed<T>(key: string | null, load: () => Promise<T>): { value: T | null; error: string | null } {
  const [state, setState] = useState<{ key: string; value: T | null; error: string | null } | null>(null);
  useEffect(() => {
    if (key === null) return;
    let live = true;
    load()
      .then((value) => live && setState({ key, value, error: null }))
      .catch((caught) => live && setState({ key, value: null, error: messageOf(caught) }));
    return () => {
      live = false;
    };
  }, [key]);
  return state && state.key === key ? state : { value: null, error: null };
}

export function MetricsPage() {
  const params = here.value.params;
  const range = params.get('range') ?? 'now-1h';
  const search = params.get('q') ?? '';
  const chosen = params.get('metric');

  const names = useKeyed(range, async () => {
    const query = rangeParams(range, Date.now());
    if (!query) throw new Error(`"${range}" is not a time range`);
    return (await get<{ metrics: MetricName[] }>(`/api/v1/metrics/names?${query}`)).metrics;
  });
  // Descriptions and attribute keys come from SQL; without them the list
  // still shows.
  const details = useKeyed(range, async () => {
    const window = parseRange(range, Date.now());
    if (!window) return new Map<string, MetricDetails>();
    const answer = await post<SqlAnswer>('/api/v1/sql', { sql: detailsSql(toMinutes(window)) });
    return new Map<string, MetricDetails>(
      answer.rows.map((row) => [
        String(row[0]),
        { description: String(row[1] ?? ''), attributes: JSON.parse(String(row[2] ?? '[]')) as string[] },
      ]),
    );
  });

  const shown = useMemo(() => {
    const needle = search.trim().toLowerCase();
    return (names.value ?? []).filter(
      (m) =>
        !needle ||
        m.name.toLowerCase().includes(needle) ||
        (details.value?.get(m.name)?.description ?? '').toLowerCase().includes(needle),
    );
  }, [names.value, details.value, search]);
  const metric = names.value?.find((m) => m.name === chosen) ?? null;

  return (
    <section>
      <div class="page-title">
        <h1>Metrics</h1>
        <SaveQuery kind="metrics" />
      </div>
      {names.error && (
        <p class="error" role="alert">
          Could not list metrics: {names.error}
        </p>
      )}
      {!names.error && names.value === null && <p class="loading">Loading metrics…</p>}
      {names.value !== null && names.value.length === 0 && (
        <p class="hint">
          No metric points in this window. Send metrics over OTLP (Settings, "connect your telemetry")
          or widen the time range above.
        </p>
      )}
      {names.value !== null && names.value.length > 0 && (
        <div class="metrics-layout">
          <nav class="metric-list" aria-label="Metric names">
            <input
              type="search"
              aria-label="Search metrics"
              placeholder="Search names and descriptions"
              value={search}
              onInput={(e) => navigate(withParams({ q: (e.target as HTMLInputElement).value || null }), true)}
            />
            <p class="hint">
              {shown.length} of {names.value.length} metrics
            </p>
            <ul>
              {shown.map((m) => (
                <li key={m.name}>
                  <a
                    href={withParams({ metric: m.name, agg: null, view: null })}
                    aria-current={m.name === chosen ? 'true' : undefined}
                  >
                    <span class="metric-name">{m.name}</span>
                    <span class="metric-meta">
                      {m.type}
                      {m.unit ? ` · ${m.unit}` : ''}
                    </span>
                    {details.value?.get(m.name)?.description && (
                      <span class="metric-description">{details.value.get(m.name)!.description}</span>
                    )}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
          <div class="metric-detail">
            {metric ? (
              <MetricView metric={metric} details={details.value?.get(metric.name) ?? null} range={range} />
            ) : (
              <p class="hint">Choose a metric to chart it.</p>
            )}
          </div>
        </div>
      )}
    </section>
  );
}

function MetricView(props: { metric: MetricName; details: MetricDetails | null; range: string }) {
  const { metric, details, range } = props;
  const params = here.value.params;
  const views = viewsOf(metric.type);
  const view = views.find((v) => v === params.get('view')) ?? views[views.length > 1 ? 1 : 0];
  const agg = params.get('agg') ?? defaultAgg(metric.type);
  const step = params.get('step') ?? '';
  const key = `${metric.name}|${range}|${view}|${agg}|${step}`;

  const series = useKeyed(view === 'heatmap' ? null : key, async () => {
    const query = rangeParams(range, Date.now());
    if (!query) throw new Error(`"${range}" is not a time range`);
    query.set('name', metric.name);
    if (step) query.set('step', step);
    const aggs = view === 'percentiles' ? [...PERCENTILES] : [agg];
    const answers = await Promise.all(
      aggs.map((a) => {
        const one = new URLSearchParams(query);
        one.set('agg', a);
        return get<MetricQueryAnswer>(`/api/v1/metrics/query?${one}`);
      }),
    );
    return answers.flatMap((answer) =>
      answer.series.map((s) => ({
        label: view === 'percentiles' ? `${answer.agg} ${seriesLabel(s.labels)}` : seriesLabel(s.labels),
        points: s.points,
      })),
    );
  });

  const heatmap = useKeyed(view === 'heatmap' ? key : null, async () => {
    const parsed = parseRange(range, Date.now());
    if (!parsed) throw new Error(`"${range}" is not a time range`);
    const window = toMinutes(parsed);
    const stepNanos = STEPS[step] ?? defaultStepNanos(window);
    const columns = Math.ceil(((window.endMs - window.startMs) * 1e6) / stepNanos);
    if (columns > MAX_HEATMAP_COLUMNS) throw new Error(`${columns} steps are too many for a heatmap; choose a longer step`);
    const answer = await post<SqlAnswer>('/api/v1/sql?limit=10000', { sql: heatmapSql(metric.name, window, stepNanos) });
    const map = heatmapCells(answer.rows.map(histogramPoint), columns);
    const times = Array.from({ length: columns }, (_, k) => (window.startMs + (k * stepNanos) / 1e6) / 1e3);
    return { map, times, truncated: answer.truncated, stepNanos };
  });

  const chart = useMemo(() => {
    if (!series.value) return null;
    const aligned = alignSeries(series.value.slice(0, PALETTE.length));
    const lines: Series[] = series.value.slice(0, PALETTE.length).map((s, i) => ({
      label: s.label,
      values: aligned.values[i],
      colour: PALETTE[i],
    }));
    return { times: aligned.times, lines };
  }, [series.value]);

  const unit = view === 'series' && agg === 'rate' ? `${metric.unit ? `${metric.unit}` : ''}/s` : metric.unit;
  const format = (v: number) => withUnit(v, unit);
  const error = series.error ?? heatmap.error;
  return (
    <>
      <h2>{metric.name}</h2>
      {details?.description && <p>{details.description}</p>}
      <dl class="metric-facts">
        <dt>Type</dt>
        <dd>{metric.type}</dd>
        <dt>Unit</dt>
        <dd>{metric.unit || '–'}</dd>
        <dt>Points</dt>
        <dd>{count(metric.points)}</dd>
        <dt>Attributes</dt>
        <dd>{details ? details.attributes.join(', ') || 'none' : '…'}</dd>
      </dl>
      <div class="metric-controls">
        {views.length > 1 && (
          <div role="group" aria-label="View" class="segmented">
            {views.map((v) => (
              <button type="button" aria-pressed={v === view} onClick={() => navigate(withParams({ view: v }))}>
                {v === 'series' ? 'Series' : v === 'percentiles' ? 'Percentiles' : 'Heatmap'}
              </button>
            ))}
          </div>
        )}
        {view === 'series' && (
          <label>
            <span>Aggregation</span>
            <select value={agg} onChange={(e) => navigate(withParams({ agg: (e.target as HTMLSelectElement).value }))}>
              {AGGREGATIONS.filter((a) => metric.type === 'histogram' || !a.startsWith('p')).map((a) => (
                <option value={a}>{a}</option>
              ))}
            </select>
          </label>
        )}
        <label>
          <span>Step</span>
          <select value={step} onChange={(e) => navigate(withParams({ step: (e.target as HTMLSelectElement).value || null }))}>
            <option value="">auto</option>
            {Object.keys(STEPS).map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
      </div>
      {error && (
        <p class="error" role="alert">
          Could not chart {metric.name}: {error}
        </p>
      )}
      {!error && view !== 'heatmap' && !series.value && <p class="loading">Loading…</p>}
      {!error && view === 'heatmap' && !heatmap.value && <p class="loading">Loading…</p>}
      {chart && series.value && (
        <>
          {series.value.length === 0 ? (
            <p class="hint">No points for this aggregation in the window.</p>
          ) : (
            <TimeChart
              title={`${metric.name} (${view === 'percentiles' ? 'percentiles' : agg})`}
              times={chart.times}
              series={chart.lines}
              format={format}
            />
          )}
          {series.value.length > PALETTE.length && (
            <p class="note">The chart shows the first {PALETTE.length} of {series.value.length} series.</p>
          )}
          <SeriesTable series={series.value} unit={unit} />
        </>
      )}
      {heatmap.value && <HeatmapView metric={metric} {...heatmap.value} />}
    </>
  );
}

function SeriesTable(props: { series: { label: string; points: MetricQueryAnswer['series'][0]['points'] }[]; unit: string }) {
  return (
    <table class="data" aria-label="Series">
      <thead>
        <tr>
          <th scope="col">Series</th>
          <th scope="col" class="num">Points</th>
          <th scope="col" class="num">Min</th>
          <th scope="col" class="num">Max</th>
          <th scope="col" class="num">Last</th>
        </tr>
      </thead>
      <tbody>
        {props.series.map((s) => {
          const summary = summarize(s.points);
          return (
            <tr key={s.label}>
              <th scope="row">{s.label}</th>
              <td class="num">{summary.points}</td>
              <td class="num">{withUnit(summary.min, props.unit)}</td>
              <td class="num">{withUnit(summary.max, props.unit)}</td>
              <td class="num">{withUnit(summary.last, props.unit)}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}

function HeatmapView(props: { metric: MetricName; map: Heatmap; times: number[]; truncated: boolean; stepNanos: number }) {
  const { map } = props;
  if (map.total === 0) {
    return (
      <p class="hint">
        No bucket counts in this window (a cumulative histogram needs two points of a stream to show an
        increase).
      </p>
    );
  }
  const totals = map.bounds.map((_, b) => b).concat(map.bounds.length)
    .map((b) => map.cells.reduce((sum, row) => sum + (row[b] ?? 0), 0));
  const label = `Heatmap of ${props.metric.name}: ${count(map.total)} observations in ${props.times.length} steps of ${
    props.stepNanos / 1e9} s`;
  return (
    <>
      <HeatmapChart title={`${props.metric.name} buckets over time`} heatmap={map} times={props.times} label={label} />
      {props.truncated && <p class="note">Only the first 10,000 points of the window are drawn.</p>}
      <table class="data" aria-label="Buckets">
        <thead>
          <tr>
            <th scope="col">Bucket{props.metric.unit ? ` (${props.metric.unit})` : ''}</th>
            <th scope="col" class="num">Observations</th>
          </tr>
        </thead>
        <tbody>
          {totals.map((n, b) => (
            <tr key={b}>
              <th scope="row">{bucketName(map.bounds, b)}</th>
              <td class="num">{count(n)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
