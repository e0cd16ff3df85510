import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Attributes } from '../components/attributes';
import { FlameGraph } from '../components/flame_graph';
import { SelfTimeTable } from '../components/self_time_table';
import { Waterfall } from '../components/waterfall';
import { arrived, get, type KeyValue, messageOf } from '../lib/api';
import { criticalPath } from '../lib/critical_path';
import { tracePath } from '../lib/early';
import { duration } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';
import { inOrder, matchSpans, positions, spanSearchPath, stepMatch, withAncestors } from '../lib/span_search';
import { buildTree, type CompactTrace, visibleRows } from '../lib/trace';
import { showNanos } from '../lib/shown_time';

const KINDS = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const VIEWS: [string | null, string][] = [
  [null, 'Waterfall'],
  ['flame', 'Flame graph'],
  ['stats', 'Self time'],
];

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

// One trace: a waterfall of its spans (canvas bars beside a virtualised
// tree grid), or its flame graph, or its self time per operation; span
// search, the critical path and the selected span's details. The URL
// holds the view (?view=flame|stats), the search (?find=, ?matches=1),
// the critical path (?critical=1), the folded spans (?fold=) and the span
// (?span=).
export function TracePage(props: { traceId: string }) {
  // The trace asked for as the app started, when it is already here.
  const [trace, setTrace] = useState<CompactTrace | null>(
    () => arrived<CompactTrace>(tracePath(props.traceId)) ?? null,
  );
  const [error, setError] = useState<string | null>(null);
  const answered = useRef(trace !== null ? props.traceId : null);
  const params = here.value.params;
  const selectedId = params.get('span');
  const fold = params.get('fold') ?? '';
  const view = params.get('view');
  const find = params.get('find') ?? '';
  const matchesOnly = params.get('matches') === '1';
  const showCritical = params.get('critical') === '1';

  useEffect(() => {
    if (answered.current === props.traceId) return;
    answered.current = null;
    setTrace(null);
    setError(null);
    get<CompactTrace>(tracePath(props.traceId))
      .then(setTrace)
      .catch((caught) => setError(messageOf(caught)));
  }, [props.traceId]);

  const tree = useMemo(() => (trace ? buildTree(trace) : null), [trace]);
  // The whole tree top to bottom: the order matches are stepped through.
  const order = useMemo(() => (tree ? visibleRows(tree, new Set()) : []), [tree]);
  const position = useMemo(() => positions(order, tree ? tree.depth.length : 0), [order, tree]);
  // The spans the server finds the text in (attributes, events, ...), for
  // the text they were asked for; asked for a moment after typing stops.
  const [found, setFound] = useState<{ path: string; ids: ReadonlySet<string> } | null>(null);
  const searchPath = spanSearchPath(props.traceId, find);
  useEffect(() => {
    if (!trace || searchPath === null) return;
    let current = true;
    const timer = setTimeout(() => {
      get<{ span_ids: string[] }>(searchPath)
        .then((answer) => current && setFound({ path: searchPath, ids: new Set(answer.span_ids) }))
        .catch(() => {});  // names, services and ids are still searched
    }, 200);
    return () => {
      current = false;
      clearTimeout(timer);
    };
  }, [trace, searchPath]);
  const alsoIds = found !== null && found.path === searchPath ? found.ids : undefined;
  const marks = useMemo(() => (trace ? matchSpans(trace, find, alsoIds) : null), [trace, find, alsoIds]);
  const matches = useMemo(() => (marks ? inOrder(order, marks) : []), [order, marks]);
  const keep = useMemo(
    () => (tree && marks && matchesOnly ? withAncestors(tree, marks) : undefined),
    [tree, marks, matchesOnly],
  );
  // Folded spans, by span id in the URL (?fold=<id>,<id>).
  const collapsed = useMemo(() => {
    const folded = new Set<number>();
    if (!trace || fold === '') return folded;
    const wanted = new Set(fold.split(','));
    trace.spans.span_id.forEach((id, span) => {
      if (wanted.has(id)) folded.add(span);
    });
    return folded;
  }, [trace, fold]);
  const rows = useMemo(() => (tree ? visibleRows(tree, collapsed, keep) : []), [tree, collapsed, keep]);
  const critical = useMemo(() => (tree && showCritical ? criticalPath(tree) : null), [tree, showCritical]);
  const selected = useMemo(
    () => (trace && selectedId !== null ? trace.spans.span_id.indexOf(selectedId) : -1),
    [trace, selectedId],
  );

  if (error) {
    return (
      <p class="error" role="alert">
        Could not load trace {props.traceId}: {error}
      </p>
    );
  }
  if (!trace || !tree) return <p class="loading">Loading trace…</p>;

  const foldParam = (folded: ReadonlySet<number>) =>
    folded.size === 0 ? null : [...folded].map((span) => trace.spans.span_id[span]).join(',');
  const select = (span: number) => navigate(withParams({ span: trace.spans.span_id[span] }), true);
  const toggle = (span: number) => {
    const next = new Set(collapsed);
    if (next.has(span)) next.delete(span);
    else next.add(span);
    navigate(withParams({ fold: foldParam(next) }), true);
  };
  // Goes to the next or previous match, unfolding what hides it.
  const step = (direction: 1 | -1) => {
    const target = stepMatch(matches, position, selected, direction);
    if (target < 0) return;
    const next = new Set(collapsed);
    for (let at = tree.parent[target]; at >= 0; at = tree.parent[at]) next.delete(at);
    navigate(withParams({ span: trace.spans.span_id[target], fold: foldParam(next) }), true);
  };
  const current = marks && selected >= 0 && marks[selected] ? matches.indexOf(selected) + 1 : 0;
  const rootIndex = tree.roots[0];
  const barMarks = { selected, matches: marks, critical };

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
        {showNanos(trace.start_time_unix_nano, true)} ·{' '}
        <a href={`/logs?trace_id=${trace.trace_id}&range=now-7d`}>Logs of this trace</a>
      </p>
      <nav class="tabs" aria-label="Trace views">
        {VIEWS.map(([value, label]) => (
          <a href={withParams({ view: value })} aria-current={view === value ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      {view !== 'stats' && (
        <div class="trace-tools">
          <form
            role="search"
            aria-label="Spans of this trace"
            class="span-search"
            onSubmit={(event) => event.preventDefault()}
          >
            <input
              type="search"
              aria-label="Find spans"
              placeholder="Find spans by name, service, id or attribute"
              value={find}
              onInput={(event) =>
                navigate(withParams({ find: (event.target as HTMLInputElement).value || null }), true)
              }
              onKeyDown={(event) => {
                if (event.key !== 'Enter') return;
                event.preventDefault();
                step(event.shiftKey ? -1 : 1);
              }}
            />
            <span class="match-count" role="status">
              {marks ? `${current} of ${matches.length}` : ''}
            </span>
            <button type="button" disabled={matches.length === 0} onClick={() => step(-1)}>
              Previous
            </button>
            <button type="button" disabled={matches.length === 0} onClick={() => step(1)}>
              Next
            </button>
            {view !== 'flame' && (
              <label>
                <input
                  type="checkbox"
                  checked={matchesOnly}
                  onChange={(event) =>
                    navigate(withParams({ matches: (event.target as HTMLInputElement).checked ? '1' : null }), true)
                  }
                />{' '}
                Matches only
              </label>
            )}
          </form>
          <label>
            <input
              type="checkbox"
              checked={showCritical}
              onChange={(event) =>
                navigate(withParams({ critical: (event.target as HTMLInputElement).checked ? '1' : null }), true)
              }
            />{' '}
            Critical path
          </label>
        </div>
      )}
      <div class="trace-body">
        <div class="trace-main">
          {view === 'stats' ? (
            <SelfTimeTable trace={trace} tree={tree} />
          ) : view === 'flame' ? (
            <FlameGraph trace={trace} tree={tree} marks={barMarks} onSelect={select} />
          ) : (
            <Waterfall
              trace={trace}
              tree={tree}
              rows={rows}
              collapsed={collapsed}
              marks={barMarks}
              onToggle={toggle}
              onSelect={select}
            />
          )}
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
