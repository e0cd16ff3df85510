import { useEffect, useRef, useState } from 'preact/hooks';
import { SaveQuery } from '../components/save_query';
import { get, type TraceSummary, messageOf } from '../lib/api';
import { count, duration, parseRange, rangeParams } from '../lib/format';
import { AttributeFilters, attributeFilters } from '../components/attribute_filters';
import { TraceScatter } from '../components/trace_scatter';
import { here, navigate, paramValues, withParams } from '../lib/location';
import { showNanos } from '../lib/shown_time';

const FILTERS = ['service', 'operation', 'min_duration', 'max_duration', 'status'] as const;

// Trace search: filters in the URL, newest traces first.
export function TracesPage() {
  const params = here.value.params;
  const range = params.get('range') ?? 'now-1h';
  // The answer and the search it answers: an older answer is never shown
  // for a newer search.
  const [answer, setAnswer] = useState<{ key: string; traces: TraceSummary[]; at: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The form starts from the URL and follows it when the URL changes (a
  // search, back, forward), never while someone types.
  const [form, setForm] = useState<Record<string, string>>(() => paramValues(FILTERS));
  const shownKey = useRef(here.value.params.toString());

  useEffect(() => {
    if (shownKey.current !== params.toString()) {
      shownKey.current = params.toString();
      setForm(paramValues(FILTERS));
    }
    const asked = Date.now();
    const query = rangeParams(range, asked);
    if (!query) {
      setError(`"${range}" is not a time range`);
      return;
    }
    for (const key of FILTERS) {
      const value = params.get(key);
      if (value) query.set(key, value);
    }
    for (const [key, value] of attributeFilters(params)) query.set(`attr.${key}`, value);
    query.set('limit', '100');
    setError(null);
    const key = here.value.params.toString();
    // An answer that arrives after the URL has changed again is dropped:
    // it must not replace the newer search's answer.
    let stale = false;
    get<{ traces: TraceSummary[] }>(`/api/v1/traces?${query}`)
      .then((found) => !stale && setAnswer({ key, traces: found.traces, at: asked }))
      .catch((caught) => !stale && setError(messageOf(caught)));
    return () => {
      stale = true;
    };
  }, [here.value]);
  const traces = answer !== null && answer.key === params.toString() ? answer.traces : null;
  const searched = traces !== null ? parseRange(range, answer!.at) : null;

  function search(event: Event) {
    event.preventDefault();
    const changes: Record<string, string | null> = {};
    for (const key of FILTERS) changes[key] = form[key] ? form[key] : null;
    navigate(withParams(changes));
  }
  const field = (key: string, label: string, placeholder = '') => (
    <label>
      <span>{label}</span>
      <input
        name={key}
        value={form[key] ?? ''}
        placeholder={placeholder}
        onInput={(e) => setForm({ ...form, [key]: (e.target as HTMLInputElement).value })}
      />
    </label>
  );

  return (
    <section>
      <div class="page-title">
        <h1>Traces</h1>
        <SaveQuery kind="traces" />
      </div>
      <form class="inline" onSubmit={search} role="search">
        {field('service', 'Service')}
        {field('operation', 'Operation')}
        {field('min_duration', 'Min duration', '250ms')}
        {field('max_duration', 'Max duration', '5s')}
        <label>
          <span>Status</span>
          <select
            name="status"
            value={form.status ?? ''}
            onChange={(e) => setForm({ ...form, status: (e.target as HTMLSelectElement).value })}
          >
            <option value="">any</option>
            <option value="error">error</option>
            <option value="ok">ok</option>
            <option value="unset">unset</option>
          </select>
        </label>
        <button type="submit">Search</button>
      </form>
      <AttributeFilters range={range} service={params.get('service') ?? ''} />
      {error && (
        <p class="error" role="alert">
          Could not search: {error}
        </p>
      )}
      {!error && traces === null && <p class="loading">Searching…</p>}
      {traces !== null && traces.length === 0 && <p class="hint">No trace matches in this window.</p>}
      {traces !== null && traces.length > 0 && searched !== null && (
        <TraceScatter traces={traces} startMs={searched.startMs} endMs={searched.endMs} />
      )}
      {traces !== null && traces.length > 0 && (
        <table class="data" aria-label="Traces">
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Root</th>
              <th scope="col" class="num">Duration</th>
              <th scope="col" class="num">Spans</th>
              <th scope="col" class="num">Errors</th>
              <th scope="col">Services</th>
            </tr>
          </thead>
          <tbody>
            {traces.map((trace) => (
              <tr key={trace.trace_id}>
                <td>{showNanos(trace.start_time_unix_nano)}</td>
                <th scope="row">
                  <a href={`/traces/${trace.trace_id}`}>
                    {trace.root_service}: {trace.root_name}
                  </a>
                </th>
                <td class="num">{duration(trace.duration_nano)}</td>
                <td class="num">{count(trace.span_count)}</td>
                <td class={`num${trace.error_count > 0 ? ' error' : ''}`}>{count(trace.error_count)}</td>
                <td>{trace.service_spans.map((s) => `${s.service || '(none)'} ${s.spans}`).join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
