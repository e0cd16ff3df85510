// The service map (its own chunk: dagre and d3-force come with it). Who
// calls whom in the window, from GET /api/v1/service-map: nodes sized by
// requests and coloured by health, typed edges labelled with calls, errors
// and p95, a layered or a force layout (`layout` in the URL), and the same
// edges as a table. Service nodes are links to their service page.

import { useEffect, useMemo, useState } from 'preact/hooks';
import { get, messageOf } from '../lib/api';
import { count, duration, percent, rangeParams } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';
import {
  edgeLabel, type Health, type MapLayout, type MapNode, nodeHref, nodeLabel, pathOf, place,
  type PlacedNode, type ServiceMapAnswer,
} from '../lib/service_map';

const HEALTHS: Health[] = ['healthy', 'degraded', 'unhealthy', 'idle'];

function describe(node: MapNode, health: Health): string {
  const what = node.type === 'service' ? 'service' : node.type === 'peer' ? 'peer service' : node.type;
  const errors = node.requests > 0 ? `, ${percent(node.error_rate)} errors` : '';
  return `${what} ${nodeLabel(node)}: ${count(node.requests)} requests${errors}, ${health}`;
}

// A virtual node's shape: a database is a cylinder-like rounded box, a
// queue a diamond, a peer service a dashed circle.
function Shape(props: { placed: PlacedNode }) {
  const { node, r } = props.placed;
  if (node.type === 'database') {
    return <rect x={-r} y={-r * 0.8} width={2 * r} height={1.6 * r} rx={r * 0.5} ry={r * 0.3} />;
  }
  if (node.type === 'messaging') {
    return <polygon points={`0,${-r} ${r},0 0,${r} ${-r},0`} />;
  }
  return <circle r={r} />;
}

function MapNodeView(props: { placed: PlacedNode; range: string }) {
  const { node, x, y, r, health } = props.placed;
  const href = nodeHref(node, props.range);
  const label = describe(node, health);
  const body = (
    <>
      <title>{label}</title>
      <Shape placed={props.placed} />
      <text class="node-name" y={r + 16} text-anchor="middle">
        {nodeLabel(node)}
      </text>
    </>
  );
  const transform = `translate(${x.toFixed(1)},${y.toFixed(1)})`;
  const classes = `node ${node.type} ${health}`;
  return href ? (
    <a href={href} class={classes} aria-label={label} data-name={node.name}>
      <g transform={transform}>{body}</g>
    </a>
  ) : (
    <g class={classes} transform={transform} role="img" aria-label={label} data-name={node.name}>
      {body}
    </g>
  );
}

export function MapPage() {
  const range = here.value.params.get('range') ?? 'now-1h';
  const layout: MapLayout = here.value.params.get('layout') === 'force' ? 'force' : 'layered';
  const [answer, setAnswer] = useState<{ range: string; map: ServiceMapAnswer } | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    const query = rangeParams(range, Date.now());
    if (!query) {
      setError(`"${range}" is not a time range`);
      return;
    }
    setError(null);
    let stale = false;  // an answer for a range no longer asked for is dropped
    get<ServiceMapAnswer>(`/api/v1/service-map?${query}`)
      .then((map) => !stale && setAnswer({ range, map }))
      .catch((caught) => !stale && setError(messageOf(caught)));
    return () => {
      stale = true;
    };
  }, [range]);

  const map = answer?.range === range ? answer.map : null;
  const placed = useMemo(() => (map ? place(map, layout) : null), [map, layout]);
  const byId = useMemo(() => new Map((map?.nodes ?? []).map((n) => [n.id, n])), [map]);

  return (
    <section>
      <h1>Service map</h1>
      <div class="map-controls">
        <div role="group" aria-label="Layout" class="segmented">
          {(['layered', 'force'] as const).map((which) => (
            <button
              type="button"
              aria-pressed={layout === which}
              onClick={() => navigate(withParams({ layout: which === 'layered' ? null : which }))}
            >
              {which === 'layered' ? 'Layered' : 'Force'}
            </button>
          ))}
        </div>
        <p class="hint">
          Size: requests. Colour: error rate (degraded from 1%, unhealthy from 5%). Circles are
          services (dashed: peers that sent nothing), boxes databases, diamonds queues. Lines: calls
          (solid), database (dashed), messaging (dotted).
        </p>
      </div>
      {error && (
        <p class="error" role="alert">
          Could not load the service map: {error}
        </p>
      )}
      {!error && !map && <p class="loading">Loading the service map…</p>}
      {map && !map.complete && (
        <p class="note" role="status">
          Still resolving calls ({map.pending_batches} batches pending); reload in a moment for the
          full map.
        </p>
      )}
      {map && map.truncated && <p class="note">Only the most called edges are shown.</p>}
      {map && map.nodes.length === 0 && (
        <p class="hint">No service sent spans in this window. Widen the time range above.</p>
      )}
      {placed && placed.nodes.length > 0 && (
        <div class="map-box">
          <svg
            class={`service-map ${layout}`}
            width={placed.width}
            height={placed.height}
            viewBox={`0 0 ${placed.width.toFixed(0)} ${placed.height.toFixed(0)}`}
            role="group"
            aria-label={`Service map, ${layout} layout`}
          >
            <defs>
              {HEALTHS.map((health) => (
                <marker
                  id={`arrow-${health}`}
                  class={`arrow ${health}`}
                  viewBox="0 0 10 10"
                  refX="9"
                  refY="5"
                  markerWidth="7"
                  markerHeight="7"
                  orient="auto-start-reverse"
                >
                  <path d="M0,0L10,5L0,10z" />
                </marker>
              ))}
            </defs>
            {placed.edges.map(({ edge, points, health }) => (
              <g
                class={`edge ${edge.type} ${health}`}
                data-source={byId.get(edge.source)?.name}
                data-target={byId.get(edge.target)?.name}
                key={`${edge.source}>${edge.target}:${edge.type}`}
              >
                <path d={pathOf(points)} marker-end={`url(#arrow-${health})`} />
              </g>
            ))}
            {placed.edges.map(({ edge, label }) => {
              // Labels above every line, each on a backing sized from its
              // length (11 px text is about 6 px a character).
              const text = edgeLabel(edge);
              const width = text.length * 6 + 8;
              return (
                <g class="edge-label" key={`${edge.source}>${edge.target}:${edge.type}`} transform={`translate(${label.x.toFixed(1)},${label.y.toFixed(1)})`}>
                  <rect x={-width / 2} y={-8} width={width} height={16} rx={3} />
                  <text y={4} text-anchor="middle" data-source={byId.get(edge.source)?.name} data-target={byId.get(edge.target)?.name}>
                    {text}
                  </text>
                </g>
              );
            })}
            {placed.nodes.map((p) => (
              <MapNodeView placed={p} range={range} key={p.node.id} />
            ))}
          </svg>
        </div>
      )}
      {map && map.edges.length > 0 && (
        <table class="data" aria-label="Calls">
          <thead>
            <tr>
              <th scope="col">Caller</th>
              <th scope="col">Callee</th>
              <th scope="col">Type</th>
              <th scope="col" class="num">Calls</th>
              <th scope="col" class="num">Errors</th>
              <th scope="col" class="num">p50</th>
              <th scope="col" class="num">p95</th>
              <th scope="col" class="num">p99</th>
            </tr>
          </thead>
          <tbody>
            {map.edges.map((edge) => {
              const source = byId.get(edge.source);
              const target = byId.get(edge.target);
              return (
                <tr key={`${edge.source}>${edge.target}:${edge.type}`}>
                  <td>{source ? nodeLabel(source) : edge.source}</td>
                  <td>{target ? nodeLabel(target) : edge.target}</td>
                  <td>{edge.type}</td>
                  <td class="num">{count(edge.calls)}</td>
                  <td class="num">{percent(edge.error_rate)}</td>
                  <td class="num">{duration(edge.p50_nano)}</td>
                  <td class="num">{duration(edge.p95_nano)}</td>
                  <td class="num">{duration(edge.p99_nano)}</td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
