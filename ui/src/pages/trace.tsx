import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Attributes } from '../components/attributes';
import { get, type KeyValue, messageOf } from '../lib/api';
import { duration } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';
import { buildTree, type CompactTrace, visibleRows } from '../lib/trace';

const ROW_HEIGHT = 24;
const OVERSCAN = 20;
const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];

// A service's colour: a hue from its name, the same on every page.
function hue(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i += 1) h = (h * 31 + name.charCodeAt(i)) % 360;
  return h;
}

interface SpanDetail {
  resourceSpans: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans: {
      scope?: { name?: string; version?: string };
      spans: {
        attributes?: KeyValue[];
        events?: { name: string; timeUnixNano: string; attributes?: KeyValue[] }[];
        links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
        status?: { code?: number; message?: string };
      }[];
    }[];
  }[];
}

// One trace: a waterfall of its spans (only the rows in view are drawn, so
// large traces stay fast) and the selected span's details.
export function TracePage(props: { traceId: string }) {
  const [trace, setTrace] = useState<CompactTrace | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [collapsed, setCollapsed] = useState<Set<number>>(new Set());
  const [scrollTop, setScrollTop] = useState(0);
  const [viewHeight, setViewHeight] = useState(600);
  const scroller = useRef<HTMLDivElement>(null);
  const selectedId = here.value.params.get('span');

  useEffect(() => {
    setTrace(null);
    setError(null);
    get<CompactTrace>(`/api/v1/traces/${props.traceId}?format=columns`)
      .then(setTrace)
      .catch((caught) => setError(messageOf(caught)));
  }, [props.traceId]);

  const tree = useMemo(() => (trace ? buildTree(trace) : null), [trace]);
  const rows = useMemo(() => (tree ? visibleRows(tree, collapsed) : []), [tree, collapsed]);

  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setViewHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, [trace]);

  if (error) {
    return (
      <p class="error" role="alert">
        Could not load trace {props.traceId}: {error}
      </p>
    );
  }
  if (!trace || !tree) return <p class="loading">Loading trace…</p>;

  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((scrollTop + viewHeight) / ROW_HEIGHT) + OVERSCAN);
  const total = Math.max(1, tree.end);
  const selected = selectedId === null ? -1 : trace.spans.span_id.indexOf(selectedId);
  const toggle = (span: number) => {
    const next = new Set(collapsed);
    if (next.has(span)) next.delete(span);
    else next.add(span);
    setCollapsed(next);
  };
  const rootIndex = tree.roots[0];

  return (
    <section class="trace">
      <p class="crumbs">
        <a href="/traces">Traces</a> /
      </p>
      <h1>
        {trace.services[trace.spans.service[rootIndex]]}: {trace.names[trace.spans.name[rootIndex]]}
      </h1>
      <p class="hint">
        Trace <code>{trace.trace_id}</code> · {trace.span_count.toLocaleString('en-US')} spans ·{' '}
        {duration(String(tree.end))} · started{' '}
        {new Date(Number(BigInt(trace.start_time_unix_nano) / 1_000_000n)).toLocaleString()} ·{' '}
        <a href={`/logs?trace_id=${trace.trace_id}&range=now-7d`}>Logs of this trace</a>
      </p>
      <div class="trace-body">
        <div
          class="waterfall"
          ref={scroller}
          role="treegrid"
          aria-label="Spans"
          aria-rowcount={rows.length}
          onScroll={(e) => setScrollTop((e.target as HTMLDivElement).scrollTop)}
        >
          <div style={{ height: `${rows.length * ROW_HEIGHT}px`, position: 'relative' }}>
            {rows.slice(first, last).map((span, k) => {
              const index = first + k;
              const service = trace.services[trace.spans.service[span]];
              const left = (tree.start[span] / total) * 100;
              const width = Math.max(0.2, (Math.max(0, tree.duration[span]) / total) * 100);
              const hasChildren = tree.children[span].length > 0;
              const error = trace.spans.status_code[span] === 2;
              return (
                <div
                  key={span}
                  role="row"
                  aria-rowindex={index + 1}
                  aria-level={tree.depth[span] + 1}
                  aria-expanded={hasChildren ? !collapsed.has(span) : undefined}
                  aria-selected={span === selected}
                  class={`span-row${span === selected ? ' selected' : ''}${error ? ' failed' : ''}`}
                  style={{ top: `${index * ROW_HEIGHT}px` }}
                  onClick={() => navigate(withParams({ span: trace.spans.span_id[span] }), true)}
                >
                  <div role="gridcell" class="span-name" style={{ paddingLeft: `${tree.depth[span] * 14 + 4}px` }}>
                    {hasChildren ? (
                      <button
                        type="button"
                        class="toggle"
                        aria-label={collapsed.has(span) ? 'Expand' : 'Collapse'}
                        onClick={(event) => {
                          event.stopPropagation();
                          toggle(span);
                        }}
                      >
                        {collapsed.has(span) ? '▸' : '▾'}
                      </button>
                    ) : (
                      <span class="toggle" />
                    )}
                    <span class="service" style={{ '--hue': String(hue(service)) }}>
                      {service || '(none)'}
                    </span>{' '}
                    {trace.names[trace.spans.name[span]]}
                  </div>
                  <div role="gridcell" class="span-bar-cell">
                    <div
                      class="span-bar"
                      style={{ left: `${left}%`, width: `${width}%`, background: `hsl(${hue(service)} 60% 50%)` }}
                    />
                    <span class="span-duration">{duration(String(tree.duration[span]))}</span>
                  </div>
                </div>
              );
            })}
          </div>
        </div>
        {selected >= 0 && <SpanPanel trace={trace} span={selected} traceId={props.traceId} />}
      </div>
    </section>
  );
}

function SpanPanel(props: { trace: CompactTrace; span: number; traceId: string }) {
  const spanId = props.trace.spans.span_id[props.span];
  const [detail, setDetail] = useState<SpanDetail | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    setDetail(null);
    setError(null);
    get<SpanDetail>(`/api/v1/traces/${props.traceId}/spans/${spanId}`)
      .then(setDetail)
      .catch((caught) => setError(messageOf(caught)));
  }, [spanId]);
  const t = props.trace;
  const s = props.span;
  const resource = detail?.resourceSpans[0];
  const scope = resource?.scopeSpans[0];
  const span = scope?.spans[0];
  return (
    <aside class="span-panel" aria-label="Span details">
      <h2>{t.names[t.spans.name[s]]}</h2>
      <dl>
        <dt>Service</dt>
        <dd>{t.services[t.spans.service[s]] || '(none)'}</dd>
        <dt>Kind</dt>
        <dd>{KINDS[t.spans.kind[s]] ?? t.spans.kind[s]}</dd>
        <dt>Duration</dt>
        <dd>{duration(String(t.spans.duration_nano[s]))}</dd>
        <dt>Span id</dt>
        <dd>
          <code>{spanId}</code>
        </dd>
        <dt>Status</dt>
        <dd>{['unset', 'ok', 'error'][t.spans.status_code[s]] ?? t.spans.status_code[s]}{span?.status?.message ? `: ${span.status.message}` : ''}</dd>
      </dl>
      {error && <p class="error">{error}</p>}
      {span && (
        <>
          <h3>Attributes</h3>
          <Attributes attributes={span.attributes ?? []} label="Span attributes" />
          <h3>Events</h3>
          {(span.events ?? []).length === 0 ? (
            <p class="hint">none</p>
          ) : (
            (span.events ?? []).map((event) => (
              <div class="event">
                <strong>{event.name}</strong>
                <Attributes attributes={event.attributes ?? []} />
              </div>
            ))
          )}
          <h3>Links</h3>
          {(span.links ?? []).length === 0 ? (
            <p class="hint">none</p>
          ) : (
            (span.links ?? []).map((link) => (
              <p>
                <a href={`/traces/${link.traceId}?span=${link.spanId}`}>
                  {link.traceId}/{link.spanId}
                </a>
              </p>
            ))
          )}
          <h3>Resource</h3>
          <Attributes attributes={resource?.resource?.attributes ?? []} label="Resource attributes" />
          <h3>Scope</h3>
          <p>
            {scope?.scope?.name ?? '(none)'} {scope?.scope?.version ?? ''}
          </p>
        </>
      )}
    </aside>
  );
}
