import { useEffect, useMemo, useState } from 'preact/hooks';
import { type Series, TimeChart } from '../components/chart';
import { MeasuresTable } from '../components/measures_table';
import { ServiceActivity } from '../components/service_activity';
import { type Endpoint, get, type Operation, type RedAnswer, messageOf } from '../lib/api';
import { percent, rangeParams } from '../lib/format';
import { here } from '../lib/location';

interface Loaded {
  red: RedAnswer;
  operations: Operation[];
  endpoints: Endpoint[];
}

const ms = (v: number) => `${v >= 100 ? v.toFixed(0) : v.toPrecision(3)} ms`;
const perSecond = (v: number) => `${v >= 100 ? v.toFixed(0) : v.toPrecision(3)}/s`;
const nanosToMs = (v: string | null) => (v === null ? null : Number(v) / 1e6);

// One service: RED over time, its operations and its endpoints, its
// slowest and failed traces and its newest logs.
export function ServicePage(props: { name: string }) {
  const range = here.value.params.get('range') ?? 'now-1h';
  const namespace = here.value.params.get('namespace');
  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const window = rangeParams(range, Date.now());
    if (!window) {
      setError(`"${range}" is not a time range`);
      return;
    }
    if (namespace !== null) window.set('namespace', namespace);
    const red = new URLSearchParams(window);
    red.set('service', props.name);
    const base = `/api/v1/services/${encodeURIComponent(props.name)}`;
    setError(null);
    setLoaded(null);
    let stale = false;  // answers for a service or range no longer shown are dropped
    Promise.all([
      get<RedAnswer>(`/api/v1/red?${red}`),
      get<{ operations: Operation[] }>(`${base}/operations?${window}`),
      get<{ endpoints: Endpoint[] }>(`${base}/endpoints?${window}`),
    ])
      .then(([redAnswer, operations, endpoints]) =>
        !stale && setLoaded({ red: redAnswer, operations: operations.operations, endpoints: endpoints.endpoints }),
      )
      .catch((caught) => !stale && setError(messageOf(caught)));
    return () => {
      stale = true;
    };
  }, [props.name, namespace, range]);

  const charts = useMemo(() => {
    if (!loaded) return null;
    const points = loaded.red.points;
    const times = points.map((p) => Number(BigInt(p.time) / 1_000_000_000n));
    const rates: Series[] = [{ label: 'requests/s', values: points.map((p) => p.rate), colour: '--accent' }];
    const errors: Series[] = [
      { label: 'errors', values: points.map((p) => (p.error_rate === null ? null : p.error_rate * 100)), colour: '--bad' },
    ];
    const latency: Series[] = [
      { label: 'p50', values: points.map((p) => nanosToMs(p.p50_nano)), colour: '--ok' },
      { label: 'p95', values: points.map((p) => nanosToMs(p.p95_nano)), colour: '--warn' },
      { label: 'p99', values: points.map((p) => nanosToMs(p.p99_nano)), colour: '--bad' },
    ];
    return { times, rates, errors, latency };
  }, [loaded]);

  const title = namespace ? `${namespace}/${props.name}` : props.name;
  return (
    <section>
      <p class="crumbs">
        <a href={`/services?range=${encodeURIComponent(range)}`}>Services</a> /
      </p>
      <h1>{title}</h1>
      {error && (
        <p class="error" role="alert">
          Could not load this service: {error}
        </p>
      )}
      {!error && !loaded && <p class="loading">Loading…</p>}
      {loaded && charts && (
        <>
          <p class="hint">
            Requests are {loaded.red.kinds.join(' and ')} spans, in steps of{' '}
            {Number(BigInt(loaded.red.step_nano) / 60_000_000_000n)} min.
          </p>
          <div class="charts">
            <TimeChart title="Requests" times={charts.times} series={charts.rates} format={perSecond} />
            <TimeChart title="Error rate" times={charts.times} series={charts.errors} format={(v) => percent(v / 100)} />
            <TimeChart title="Latency" times={charts.times} series={charts.latency} format={ms} />
          </div>
          <MeasuresTable
            caption="Operations"
            empty="No spans in this window."
            rows={loaded.operations.map((o) => ({ ...o, key: `${o.name}|${o.kind}`, label: o.name }))}
          />
          <MeasuresTable
            caption="Endpoints"
            empty="No span in this window names an HTTP route, an RPC method or a messaging destination."
            rows={loaded.endpoints.map((e) => ({ ...e, key: `${e.type}|${e.name}|${e.kind}`, label: e.name }))}
          />
          <ServiceActivity name={props.name} namespace={namespace} range={range} />
        </>
      )}
    </section>
  );
}
