import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { SaveQuery } from '../components/save_query';
import { Attributes, Value } from '../components/attributes';
import { type Series, TimeChart } from '../components/chart';
import { get, type LogRecord, type LogVolume, messageOf } from '../lib/api';
import { rangeParams } from '../lib/format';
import { here, navigate, paramValues, withParams } from '../lib/location';
import { oneLine } from '../lib/values';

const FILTERS = ['service', 'severity_min', 'q', 'trace_id'] as const;
const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];
const SEVERITY_COLOURS: Record<string, string> = {
  trace: '--idle', debug: '--idle', info: '--accent', warn: '--warn', error: '--bad', fatal: '--bad',
};

function severityClass(n: number): string {
  return n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)] : 'unspecified';
}

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
  // The form starts from the URL and follows it when the URL changes (a
  // search, back, forward), never while someone types.
  const [form, setForm] = useState<Record<string, string>>(() => paramValues(FILTERS));
  const shownKey = useRef(here.value.params.toString());
  const [page, setPage] = useState<{ key: string; logs: LogRecord[]; next: string | null } | null>(null);
  const [volume, setVolume] = useState<{ key: string; volume: LogVolume } | null>(null);
  const [open, setOpen] = useState<Set<number>>(new Set());
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (shownKey.current !== key) {
      shownKey.current = key;
      setForm(paramValues(FILTERS));
    }
    setOpen(new Set());
    const query = searchQuery(params);
    if (!query) {
      setError(`"${params.get('range')}" is not a time range`);
      return;
    }
    setError(null);
    const fail = (caught: unknown) => setError(messageOf(caught));
    get<{ logs: LogRecord[]; next_cursor: string | null }>(`/api/v1/logs?${query}&limit=100`)
      .then((answer) => setPage({ key, logs: answer.logs, next: answer.next_cursor }))
      .catch(fail);
    get<LogVolume>(`/api/v1/logs/volume?${query}`)
      .then((answer) => setVolume({ key, volume: answer }))
      .catch(fail);
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
      </form>
      {error && (
        <p class="error" role="alert">
          Could not search logs: {error}
        </p>
      )}
      {chart && chart.series.length > 0 && (
        <TimeChart title={`Volume (${chart.total.toLocaleString('en-US')} records)`} times={chart.times} series={chart.series} format={(v) => (Number.isInteger(v) ? String(v) : '')} />
      )}
      {!error && logs === null && <p class="loading">Searching…</p>}
      {logs !== null && logs.length === 0 && <p class="hint">No log record matches in this window.</p>}
      {logs !== null && logs.length > 0 && (
        <table class="data logs" aria-label="Log records">
          <thead>
            <tr>
              <th scope="col">Time</th>
              <th scope="col">Severity</th>
              <th scope="col">Service</th>
              <th scope="col">Body</th>
            </tr>
          </thead>
          <tbody>
            {logs.map((record, i) => {
              const expanded = open.has(i);
              const severity = severityClass(record.severity_number);
              return (
                <>
                  <tr key={`r${i}`} class={`log ${severity}`}>
                    <td class="time">{new Date(Number(BigInt(record.time_unix_nano) / 1_000_000n)).toLocaleString()}</td>
                    <td>
                      <span class={`severity ${severity}`}>{record.severity_text || severity}</span>
                    </td>
                    <td>{record.service_name}</td>
                    <td class="body">
                      <button
                        type="button"
                        class="expand"
                        aria-expanded={expanded}
                        onClick={() => {
                          const next = new Set(open);
                          if (expanded) next.delete(i);
                          else next.add(i);
                          setOpen(next);
                        }}
                      >
                        {oneLine(record.body)}
                      </button>
                    </td>
                  </tr>
                  {expanded && (
                    <tr key={`d${i}`} class="log-detail">
                      <td colSpan={4}>
                        <h3>Body</h3>
                        <Value value={record.body} />
                        {record.trace_id && (
                          <p>
                            <a href={`/traces/${record.trace_id}${record.span_id ? `?span=${record.span_id}` : ''}`}>Open the trace</a>
                          </p>
                        )}
                        <h3>Attributes</h3>
                        <Attributes attributes={record.attributes} label="Log attributes" />
                        <h3>Resource</h3>
                        <Attributes attributes={record.resource_attributes} />
                      </td>
                    </tr>
                  )}
                </>
              );
            })}
          </tbody>
        </table>
      )}
      {page?.next && page.key === key && (
        <button type="button" onClick={() => void more()}>
          Load older records
        </button>
      )}
    </section>
  );
}
