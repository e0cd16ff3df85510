// The service map's pure logic: the API's answer (GET /api/v1/service-map),
// each node's health and size, edge labels, and the layered (dagre) and
// force (d3-force) layouts, which place nodes and route edges without
// touching the DOM (so tests run them under Node).

import { graphlib, layout as dagreLayout } from '@dagrejs/dagre';
import { forceCollide, forceLink, forceManyBody, forceSimulation, forceX, forceY } from 'd3-force';
import { duration, percent } from './format';

export type NodeType = 'service' | 'peer' | 'database' | 'messaging';
export type EdgeType = 'call' | 'database' | 'messaging';
export type Health = 'healthy' | 'degraded' | 'unhealthy' | 'idle';
export type MapLayout = 'layered' | 'force';

export interface MapNode {
  id: number;
  type: NodeType;
  name: string;
  namespace?: string;
  requests: number;
  request_errors: number;
  rate: number | null;
  error_rate: number | null;
  p50_nano: string | null;
  p95_nano: string | null;
  p99_nano: string | null;
}

export interface MapEdge {
  source: number;
  target: number;
  type: EdgeType;
  calls: number;
  errors: number;
  rate: number | null;
  error_rate: number | null;
  p50_nano: string | null;
  p95_nano: string | null;
  p99_nano: string | null;
}

export interface ServiceMapAnswer {
  start: string;
  end: string;
  complete: boolean;
  pending_batches: number;
  truncated: boolean;
  node_limit_reached: boolean;
  nodes: MapNode[];
  edges: MapEdge[];
}

// The services page's default thresholds (docs/api.md, /api/v1/services).
export const ERROR_RATE_DEGRADED = 0.01;
export const ERROR_RATE_UNHEALTHY = 0.05;

// A node's or an edge's health from its error rate: idle without calls.
export function healthOf(errorRate: number | null, calls: number): Health {
  if (calls === 0 || errorRate === null) return 'idle';
  if (errorRate >= ERROR_RATE_UNHEALTHY) return 'unhealthy';
  if (errorRate >= ERROR_RATE_DEGRADED) return 'degraded';
  return 'healthy';
}

export const MIN_RADIUS = 14;
export const MAX_RADIUS = 36;

// A node's radius: the area grows with its requests, relative to the
// busiest node; a node without requests is the smallest.
export function nodeRadius(requests: number, maxRequests: number): number {
  if (maxRequests <= 0 || requests <= 0) return MIN_RADIUS;
  return MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) * Math.sqrt(Math.min(1, requests / maxRequests));
}

export function nodeLabel(node: MapNode): string {
  return node.type === 'service' && node.namespace ? `${node.namespace}/${node.name}` : node.name || '(no service.name)';
}

// "12 calls · 8.3% errors · p95 40.0 ms"
export function edgeLabel(edge: MapEdge): string {
  const parts = [`${edge.calls.toLocaleString('en-US')} ${edge.calls === 1 ? 'call' : 'calls'}`];
  if (edge.errors > 0) parts.push(`${percent(edge.error_rate)} errors`);
  if (edge.p95_nano !== null) parts.push(`p95 ${duration(edge.p95_nano)}`);
  return parts.join(' · ');
}

// The service page of a service node, keeping the time range; null for
// virtual nodes, which have no page.
export function nodeHref(node: MapNode, range: string): string | null {
  if (node.type !== 'service') return null;
  const params = new URLSearchParams({ range });
  if (node.namespace) params.set('namespace', node.namespace);
  return `/services/${encodeURIComponent(node.name)}?${params}`;
}

export interface Point {
  x: number;
  y: number;
}
export interface PlacedNode {
  node: MapNode;
  x: number;
  y: number;
  r: number;
  health: Health;
}
export interface PlacedEdge {
  edge: MapEdge;
  points: Point[];  // from the source's rim to the target's rim
  label: Point;
  health: Health;
}
export interface Placed {
  width: number;
  height: number;
  nodes: PlacedNode[];
  edges: PlacedEdge[];
}

// What both layouts start from: nodes with their radius and health, and
// the edges whose ends both exist (self-calls are left out: a service
// calling itself has no line to draw).
export interface LayoutInput {
  nodes: { node: MapNode; r: number; health: Health }[];
  edges: MapEdge[];
}

export function layoutInput(answer: Pick<ServiceMapAnswer, 'nodes' | 'edges'>): LayoutInput {
  const maxRequests = Math.max(0, ...answer.nodes.map((n) => n.requests));
  const ids = new Set(answer.nodes.map((n) => n.id));
  return {
    nodes: answer.nodes.map((node) => ({
      node,
      r: nodeRadius(node.requests, maxRequests),
      health: healthOf(node.error_rate, node.requests),
    })),
    edges: answer.edges.filter((e) => e.source !== e.target && ids.has(e.source) && ids.has(e.target)),
  };
}

const MARGIN = 60;  // room for labels around the drawing
const LABEL_ROOM = 40;  // below a node, for its name

// Moves a segment's end back by `by` along it (so arrows stop at the rim).
function shorten(from: Point, to: Point, by: number): Point {
  const dx = to.x - from.x;
  const dy = to.y - from.y;
  const length = Math.hypot(dx, dy);
  if (length <= by) return to;
  return { x: to.x - (dx / length) * by, y: to.y - (dy / length) * by };
}

function edgeKey(edge: MapEdge): string {
  return `${edge.source}>${edge.target}:${edge.type}`;
}

function finish(input: LayoutInput, at: Map<number, Point>, routes: Map<string, Point[]>): Placed {
  let minX = Infinity;
  let minY = Infinity;
  let maxX = -Infinity;
  let maxY = -Infinity;
  for (const { node, r } of input.nodes) {
    const p = at.get(node.id)!;
    minX = Math.min(minX, p.x - r);
    maxX = Math.max(maxX, p.x + r);
    minY = Math.min(minY, p.y - r);
    maxY = Math.max(maxY, p.y + r + LABEL_ROOM);
  }
  if (!Number.isFinite(minX)) return { width: 0, height: 0, nodes: [], edges: [] };
  const dx = MARGIN - minX;
  const dy = MARGIN - minY;
  const move = (p: Point) => ({ x: p.x + dx, y: p.y + dy });
  const radius = new Map(input.nodes.map((n) => [n.node.id, n.r]));
  const nodes = input.nodes.map((n) => ({ ...n, ...move(at.get(n.node.id)!) }));
  const edges = input.edges.map((edge) => {
    const route = (routes.get(edgeKey(edge)) ?? [at.get(edge.source)!, at.get(edge.target)!]).map(move);
    const first = route[0];
    const last = route[route.length - 1];
    route[0] = shorten(route[1], first, radius.get(edge.source)!);
    route[route.length - 1] = shorten(route[route.length - 2], last, radius.get(edge.target)! + 4);
    const label = route.length % 2 === 1
      ? route[(route.length - 1) / 2]
      : { x: (route[route.length / 2 - 1].x + route[route.length / 2].x) / 2,
          y: (route[route.length / 2 - 1].y + route[route.length / 2].y) / 2 };
    return { edge, points: route, label, health: healthOf(edge.error_rate, edge.calls) };
  });
  return { width: maxX - minX + 2 * MARGIN, height: maxY - minY + 2 * MARGIN, nodes, edges };
}

// Layered: callers left of callees (dagre, left to right), edges routed
// around nodes.
export function layered(input: LayoutInput): Placed {
  const graph = new graphlib.Graph({ multigraph: true });
  graph.setGraph({ rankdir: 'LR', nodesep: 50, ranksep: 180, edgesep: 20 });
  graph.setDefaultEdgeLabel(() => ({}));
  for (const { node, r } of input.nodes) {
    graph.setNode(String(node.id), { width: 2 * r, height: 2 * r + LABEL_ROOM });
  }
  for (const edge of input.edges) {
    graph.setEdge(String(edge.source), String(edge.target), { width: 120, height: 16, labelpos: 'c' }, edgeKey(edge));
  }
  dagreLayout(graph);
  const at = new Map<number, Point>();
  for (const { node } of input.nodes) {
    const placed = graph.node(String(node.id)) as { x: number; y: number };
    // dagre's box holds the label room below the circle.
    at.set(node.id, { x: placed.x, y: placed.y - LABEL_ROOM / 2 });
  }
  const routes = new Map<string, Point[]>();
  for (const edge of input.edges) {
    const label = graph.edge(String(edge.source), String(edge.target), edgeKey(edge)) as { points?: Point[] };
    const points = label.points ?? [];
    if (points.length >= 2) {
      // dagre ends edges at the label boxes; start and end at the centres
      // and let finish() cut them back to the circles.
      routes.set(edgeKey(edge), [at.get(edge.source)!, ...points.slice(1, -1), at.get(edge.target)!]);
    }
  }
  return finish(input, at, routes);
}

interface ForceNode {
  id: number;
  r: number;
  x?: number;
  y?: number;
  index?: number;
}

// Force: linked nodes pull together, all push apart, none overlap. Run to
// rest at once (300 ticks, from a circle so the result is the same every
// time), not animated.
export function force(input: LayoutInput): Placed {
  const count = input.nodes.length;
  const nodes: ForceNode[] = input.nodes.map(({ node, r }, i) => ({
    id: node.id,
    r,
    x: 200 * Math.cos((2 * Math.PI * i) / Math.max(1, count)),
    y: 200 * Math.sin((2 * Math.PI * i) / Math.max(1, count)),
  }));
  const links = input.edges.map((e) => ({ source: e.source, target: e.target }));
  const simulation = forceSimulation(nodes)
    .force('link', forceLink<ForceNode>(links).id((n) => n.id).distance(280))
    .force('charge', forceManyBody().strength(-900))
    .force('collide', forceCollide((n: ForceNode) => n.r + 40))
    .force('x', forceX(0).strength(0.05))
    .force('y', forceY(0).strength(0.05))
    .stop();
  simulation.tick(300);
  const at = new Map<number, Point>(nodes.map((n) => [n.id, { x: n.x ?? 0, y: n.y ?? 0 }]));
  // Each edge bends a little to its left, so a call back along the same
  // pair does not hide under it.
  const routes = new Map<string, Point[]>();
  for (const edge of input.edges) {
    const a = at.get(edge.source)!;
    const b = at.get(edge.target)!;
    const bend = 0.12;
    const middle = { x: (a.x + b.x) / 2 + (b.y - a.y) * bend, y: (a.y + b.y) / 2 - (b.x - a.x) * bend };
    routes.set(edgeKey(edge), [a, middle, b]);
  }
  return finish(input, at, routes);
}

export function place(answer: Pick<ServiceMapAnswer, 'nodes' | 'edges'>, which: MapLayout): Placed {
  const input = layoutInput(answer);
  return which === 'force' ? force(input) : layered(input);
}

// An SVG path through the points: straight for two, else a smooth curve
// that passes through every point (Catmull-Rom as cubic Béziers), so an
// edge's label, placed on its middle point, sits on its line.
export function pathOf(points: Point[]): string {
  const f = (n: number) => n.toFixed(1);
  if (points.length < 2) return '';
  let d = `M${f(points[0].x)},${f(points[0].y)}`;
  if (points.length === 2) return `${d}L${f(points[1].x)},${f(points[1].y)}`;
  for (let i = 0; i < points.length - 1; i += 1) {
    const before = points[Math.max(0, i - 1)];
    const from = points[i];
    const to = points[i + 1];
    const after = points[Math.min(points.length - 1, i + 2)];
    const c1 = { x: from.x + (to.x - before.x) / 6, y: from.y + (to.y - before.y) / 6 };
    const c2 = { x: to.x - (after.x - from.x) / 6, y: to.y - (after.y - from.y) / 6 };
    d += `C${f(c1.x)},${f(c1.y)} ${f(c2.x)},${f(c2.y)} ${f(to.x)},${f(to.y)}`;
  }
  return d;
}
