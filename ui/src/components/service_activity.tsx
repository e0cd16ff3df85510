// A service's traces and logs on its page: the slowest of its newest
// traces, its newest failed traces and its newest log records, each with a
// link to the full search.

import { useEffect, useState } from 'preact/hooks';
import { get, type LogRecord, messageOf, type TraceSummary } from '../lib/api';
import { count, duration, rangeParams } from '../lib/format';
import { showNanos } from '../lib/shown_time';
import { oneLine } from '../lib/values';

// The newest traces the slowest are chosen from, and how many are shown.
const NEWEST = 100;
const SHOWN = 10;

interface Activity {
  slowest: TraceSummary[];
  failed: TraceSummary[];
  logs: LogRecord[];
}

function TraceList(props: { label: string; traces: TraceSummary[]; empty: string }) {
  if (props.traces.length === 0) return <p class="hint">{props.empty}</p>;
  return (
    <table class="data" aria-label={props.label}>
      <thead>
        <tr>
          <th scope="col">Started</th>
          <th scope="col">Root</th>
          <th scope="col" class="num">Duration</th>
          <th scope="col" class="num">Errors</th>
        </tr>
      </thead>
      <tbody>
        {props.traces.map((t) => (
          <tr key={t.trace_id}>
            <td>{showNanos(t.start_time_unix_nano)}</td>
            <th scope="row">
              <a href={`/traces/${t.trace_id}`}>
                {t.root_service}: {t.root_name}
              </a>
            </th>
            <td class="num">{duration(t.duration_nano)}</td>
            <td class={`num${t.error_count > 0 ? ' error' : ''}`}>{count(t.error_count)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

export function ServiceActivity(props: { name: string; namespace: string | null; range: string }) {
  const [activity, setActivity] = useState<Activity | null>(null);
  const [error, setError] = useState<string | null>(null);
  const search = new URLSearchParams({ service: props.name, range: props.range });

  useEffect(() => {
    const window = rangeParams(props.range, Date.now());
    if (!window) return;
    window.set('service', props.name);
    const traces = new URLSearchParams(window);
    traces.set('limit', String(NEWEST));
    const failed = new URLSearchParams(window);
    failed.set('status', 'error');
    failed.set('limit', String(SHOWN));
    const logs = new URLSearchParams(window);
    logs.set('limit', String(SHOWN));
    setActivity(null);
    setError(null);
    let stale = false;
    Promise.all([
      get<{ traces: TraceSummary[] }>(`/api/v1/traces?${traces}`),
      get<{ traces: TraceSummary[] }>(`/api/v1/traces?${failed}`),
      get<{ logs: LogRecord[] }>(`/api/v1/logs?${logs}`),
    ])
      .then(([newest, errors, records]) => {
        if (stale) return;
        const slowest = [...newest.traces]
          .sort((a, b) => (BigInt(b.duration_nano) > BigInt(a.duration_nano) ? 1 : BigInt(b.duration_nano) < BigInt(a.duration_nano) ? -1 : 0))
          .slice(0, SHOWN);
        setActivity({ slowest, failed: errors.traces, logs: records.logs });
      })
      .catch((caught) => !stale && setError(messageOf(caught)));
    return () => {
      stale = true;
    };
  }, [props.name, props.namespace, props.range]);

  if (error) {
    return (
      <p class="error" role="alert">
        Could not load this service's traces and logs: {error}
      </p>
    );
  }
  if (!activity) return <p class="loading">Loading traces and logs…</p>;
  return (
    <div class="service-activity">
      <h2>Slowest traces</h2>
      <p class="hint">
        The slowest of its {NEWEST} newest traces in the window. <a href={`/traces?${search}`}>Search its traces</a>
      </p>
      <TraceList label="Slowest traces" traces={activity.slowest} empty="No trace of this service in the window." />
      <h2>Failed traces</h2>
      <p class="hint">
        Its newest traces with a failed span of this service.{' '}
        <a href={`/traces?${search}&status=error`}>Search its failed traces</a>
      </p>
      <TraceList label="Failed traces" traces={activity.failed} empty="No failed span in this window." />
      <h2>Logs</h2>
      <p class="hint">
        Its newest log records. <a href={`/logs?${search}`}>Search its logs</a>
      </p>
      {activity.logs.length === 0 ? (
        <p class="hint">No log record of this service in the window.</p>
      ) : (
        <table class="data" aria-label="Newest log records">
          <tbody>
            {activity.logs.map((record) => (
              <tr>
                <td class="time">{showNanos(record.time_unix_nano)}</td>
                <td>{record.severity_text || record.severity_number}</td>
                <td class="body">{oneLine(record.body)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
