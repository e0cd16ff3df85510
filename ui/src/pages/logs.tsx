import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { SaveQuery } from '../components/save_query';
import { LogTable } from '../components/log_table';
import { LogTail } from '../components/log_tail';
import { type Series, TimeChart } from '../components/chart';
import { get, type LogRecord, type LogVolume, messageOf } from '../lib/api';
import { rangeParams } from '../lib/format';
import { here, navigate, paramValues, withParams } from '../lib/location';
import { showNanos } from '../lib/shown_time';

const FILTERS = ['service', 'severity_min', 'q', 'trace_id'] as const;
const formatTime = (nanos: string) => showNanos(nanos);
const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const SEVERITY_COLOURS: Record<string, string> = {
  trace: '--idle', debug: '--idle', info: '--accent', warn: '--warn', error: '--bad', fatal: '--bad',
};

// The API query of the filters in the URL; null when the range is not one.
function searchQuery(params: URLSearchParams): URLSearchParams | null {
  const query = rangeParams(params.get('range') ?? 'now-1h', Date.now());
  if (!query) return null;
  for (const key of FILTERS) {
    const value = params.get(key);
    if (value) query.set(key, value);
  }
  return query;
}


export function LogsPage() {
  const params = here.value.params;
  const key = params.toString();
  const tailing = params.get('tail') === '1';
  // The filters alone (no range): what a live tail is asked for.
  const tailFilters = new URLSearchParams();
  for (const name of FILTERS) {
    const value = params.get(name);
    if (value) tailFilters.set(name, value);
  }
  // The form starts from the URL and follows it when the URL changes (a
  // search, back, forward), never while someone types.
  const [form, setForm] = useState<Record<string, string>>(() => paramValues(FILTERS));
  const shownKey = useRef(here.value.params.toString());
  const [page, setPage] = useState<{ key: string; logs: LogRecord[]; next: string | null } | null>(null);
  const [volume, setVolume] = useState<{ key: string; volume: LogVolume } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (shownKey.current !== key) {
      shownKey.current = key;
      setForm(paramValues(FILTERS));
    }
    if (tailing) return;
    const query = searchQuery(params);
    if (!query) {
      setError(`"${params.get('range')}" is not a time range`);
      return;
    }
    setError(null);
    // Answers that arrive after the URL has changed again are dropped.
    let stale = false;
    const fail = (caught: unknown) => !stale && setError(messageOf(caught));
    get<{ logs: LogRecord[]; next_cursor: string | null }>(`/api/v1/logs?${query}&limit=100`)
      .then((answer) => !stale && setPage({ key, logs: answer.logs, next: answer.next_cursor }))
      .catch(fail);
    get<LogVolume>(`/api/v1/logs/volume?${query}`)
      .then((answer) => !stale && setVolume({ key, volume: answer }))
      .catch(fail);
    return () => {
      stale = true;
    };
  }, [key]);

  async function more() {
    if (!page?.next) return;
    const query = searchQuery(params);
    if (!query) return;
    query.set('cursor', page.next);
    try {
      const answer = await get<{ logs: LogRecord[]; next_cursor: string | null }>(`/api/v1/logs?${query}&limit=100`);
      setPage({ key, logs: [...page.logs, ...answer.logs], next: answer.next_cursor });
    } catch (caught) {
      setError(messageOf(caught));
    }
  }

  const chart = useMemo(() => {
    if (!volume || volume.key !== key) return null;
    const v = volume.volume;
    const step = BigInt(v.step_nano);
    const start = BigInt(v.start_time_unix_nano);
    const count = Number((BigInt(v.end_time_unix_nano) - start + step - 1n) / step);
    const times = Array.from({ length: count }, (_, i) => Number((start + BigInt(i) * step) / 1_000_000_000n));
    const index = new Map(times.map((t, i) => [t, i]));
    const series: Series[] = SEVERITIES.map((severity) => ({
      label: severity,
      values: new Array<number | null>(count).fill(0),
      colour: SEVERITY_COLOURS[severity],
    }));
    for (const bucket of v.buckets) {
      const i = index.get(Number(BigInt(bucket.start_time_unix_nano) / 1_000_000_000n));
      if (i === undefined) continue;
      SEVERITIES.forEach((severity, s) => {
        series[s].values[i] = bucket.counts[severity] ?? 0;
      });
    }
    return { times, series: series.filter((s) => s.values.some((x) => x)), total: v.total };
  }, [volume, key]);

  function search(event: Event) {
    event.preventDefault();
    const changes: Record<string, string | null> = {};
    for (const name of FILTERS) changes[name] = form[name] ? form[name] : null;
    navigate(withParams(changes));
  }
  const logs = page !== null && page.key === key ? page.logs : null;

  return (
    <section>
      <div class="page-title">
        <h1>Logs</h1>
        <SaveQuery kind="logs" />
      </div>
      <form class="inline" onSubmit={search} role="search">
        <label>
          <span>Text</span>
          <input name="q" value={form.q ?? ''} onInput={(e) => setForm({ ...form, q: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          <span>Service</span>
          <input name="service" value={form.service ?? ''} onInput={(e) => setForm({ ...form, service: (e.target as HTMLInputElement).value })} />
        </label>
        <label>
          <span>Severity at least</span>
          <select value={form.severity_min ?? ''} onChange={(e) => setForm({ ...form, severity_min: (e.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {SEVERITIES.map((s) => (
              <option value={s}>{s}</option>
            ))}
          </select>
        </label>
        <label>
          <span>Trace id</span>
          <input name="trace_id" value={form.trace_id ?? ''} onInput={(e) => setForm({ ...form, trace_id: (e.target as HTMLInputElement).value })} />
        </label>
        <button type="submit">Search</button>
        <button
          type="button"
          aria-pressed={tailing}
          onClick={() => navigate(withParams({ tail: tailing ? null : '1' }))}
        >
          Live tail
        </button>
      </form>
      {error && (
        <p class="error" role="alert">
          Could not search logs: {error}
        </p>
      )}
      {!tailing && chart && chart.series.length > 0 && (
        <TimeChart title={`Volume (${chart.total.toLocaleString('en-US')} records)`} times={chart.times} series={chart.series} format={(v) => (Number.isInteger(v) ? String(v) : '')} />
      )}
      {tailing && <LogTail filters={tailFilters.toString()} formatTime={formatTime} />}
      {!tailing && !error && logs === null && <p class="loading">Searching…</p>}
      {!tailing && logs !== null && logs.length === 0 && <p class="hint">No log record matches in this window.</p>}
      {!tailing && logs !== null && logs.length > 0 && <LogTable records={logs} formatTime={formatTime} />}
      {!tailing && page?.next && page.key === key && (
        <button type="button" onClick={() => void more()}>
          Load older records
        </button>
      )}
    </section>
  );
}
