import { useEffect, useRef, useState } from 'preact/hooks';
import { Sparkline } from '../components/sparkline';
import { arrived, get, type ServiceHealth, type ServicesAnswer, messageOf } from '../lib/api';
import { servicesPath } from '../lib/early';
import { count, duration, parseRange, percent, rangeParams, rate } from '../lib/format';
import { sparkStepMinutes } from '../lib/sparkline';
import { here, navigate, withParams } from '../lib/location';
import { type SortKey, sortServices } from '../lib/services';

const COLUMNS: { key: SortKey; label: string; numeric: boolean }[] = [
  { key: 'name', label: 'Service', numeric: false },
  { key: 'rate', label: 'Requests', numeric: true },
  { key: 'error_rate', label: 'Errors', numeric: true },
  { key: 'p50', label: 'p50', numeric: true },
  { key: 'p95', label: 'p95', numeric: true },
  { key: 'p99', label: 'p99', numeric: true },
  { key: 'spans', label: 'Spans', numeric: true },
];

// Services with a sparkline: the first this many in the table's order
// (one /api/v1/red request each).
const SPARKLINES_MAX = 50;

const serviceKey = (s: ServiceHealth) => `${s.namespace}/${s.name}`;

function serviceLink(service: ServiceHealth, range: string): string {
  const params = new URLSearchParams({ range });
  if (service.namespace) params.set('namespace', service.namespace);
  return `/services/${encodeURIComponent(service.name)}?${params}`;
}

export function ServicesPage() {
  const range = here.value.params.get('range') ?? 'now-1h';
  const sortParam = here.value.params.get('sort') ?? 'name';
  const descending = sortParam.startsWith('-');
  const sortKey = (sortParam.replace(/^-/, '') as SortKey) || 'name';
  // The answer asked for as the app started, when it is already here.
  const [answer, setAnswer] = useState<ServicesAnswer | null>(
    () => arrived<ServicesAnswer>(servicesPath(range, Date.now())) ?? null,
  );
  const [error, setError] = useState<string | null>(null);
  const answered = useRef(answer !== null ? range : null);

  useEffect(() => {
    if (answered.current === range) return;
    answered.current = null;
    const path = servicesPath(range, Date.now());
    if (!path) {
      setError(`"${range}" is not a time range`);
      return;
    }
    setError(null);
    let stale = false;  // an answer for a range no longer asked for is dropped
    get<ServicesAnswer>(path)
      .then((found) => !stale && setAnswer(found))
      .catch((caught) => !stale && setError(messageOf(caught)));
    return () => {
      stale = true;
    };
  }, [range]);

  // Request rate per step for the services shown first, once the
  // services are known.
  const [trends, setTrends] = useState<{ range: string; rates: Map<string, number[]> } | null>(null);
  const shownFirst = answer ? sortServices(answer.services, sortKey, descending).slice(0, SPARKLINES_MAX) : [];
  const trendKey = `${range}|${shownFirst.map(serviceKey).join(',')}`;
  useEffect(() => {
    const window = parseRange(range, Date.now());
    const query = rangeParams(range, Date.now());
    if (!window || !query || shownFirst.length === 0) return;
    query.set('step', `${sparkStepMinutes(window.endMs - window.startMs)}m`);
    let stale = false;
    Promise.all(
      shownFirst.map((service) => {
        const red = new URLSearchParams(query);
        red.set('service', service.name);
        red.set('namespace', service.namespace);
        return get<{ points: { rate: number | null }[] }>(`/api/v1/red?${red}`)
          .then((answer): [string, number[]] => [serviceKey(service), answer.points.map((p) => p.rate ?? 0)])
          .catch((): [string, number[]] => [serviceKey(service), []]);
      }),
    ).then((pairs) => !stale && setTrends({ range, rates: new Map(pairs) }));
    return () => {
      stale = true;
    };
  }, [trendKey]);

  function sortBy(key: SortKey) {
    const next = key === sortKey && !descending ? `-${key}` : key;
    navigate(withParams({ sort: next === 'name' ? null : next }), true);
  }

  if (error) {
    return (
      <p class="error" role="alert">
        Could not load services: {error}
      </p>
    );
  }
  if (!answer) return <p class="loading">Loading services…</p>;
  if (answer.services.length === 0) return <EmptyState />;
  const services = sortServices(answer.services, sortKey, descending);
  return (
    <section>
      <h1>Services</h1>
      <p class="hint">
        Requests are {answer.request_kinds.join(' and ')} spans; rates are per second over the
        window.
      </p>
      <table class="data" aria-label="Services">
        <thead>
          <tr>
            <th scope="col">Health</th>
            {COLUMNS.map((column) => [
              <th
                scope="col"
                class={column.numeric ? 'num' : undefined}
                aria-sort={
                  column.key === sortKey ? (descending ? 'descending' : 'ascending') : undefined
                }
              >
                <button type="button" class="sort" onClick={() => sortBy(column.key)}>
                  {column.label}
                </button>
              </th>,
              column.key === 'rate' ? <th scope="col">Trend</th> : null,
            ])}
          </tr>
        </thead>
        <tbody>
          {services.map((service) => (
            <tr key={`${service.namespace}/${service.name}`}>
              <td>
                <span class={`health ${service.health}`}>{service.health}</span>
              </td>
              <th scope="row">
                <a href={serviceLink(service, range)}>
                  {service.namespace ? <span class="namespace">{service.namespace}/</span> : null}
                  {service.name || '(no service.name)'}
                </a>
              </th>
              <td class="num">{rate(service.rate)}</td>
              <td class="trend">
                {trends?.range === range && trends.rates.get(serviceKey(service))?.length ? (
                  <Sparkline values={trends.rates.get(serviceKey(service))!} label="Requests per second" format={rate} />
                ) : null}
              </td>
              <td class="num">{percent(service.error_rate)}</td>
              <td class="num">{duration(service.p50_nano)}</td>
              <td class="num">{duration(service.p95_nano)}</td>
              <td class="num">{duration(service.p99_nano)}</td>
              <td class="num">{count(service.span_count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function EmptyState() {
  const origin = window.location.origin.replace(/:\d+$/, '');
  return (
    <section class="empty">
      <h1>No telemetry in this window yet</h1>
      <p>
        Point an OpenTelemetry SDK or Collector at strata with an ingest token (the first boot
        printed one; admins create more under tokens):
      </p>
      <pre>
        {`export OTEL_EXPORTER_OTLP_ENDPOINT=${origin}:4318
export OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<ingest token>`}
      </pre>
      <p>Then widen the time range above, or wait for the first spans.</p>
    </section>
  );
}
