// The service map's pure logic: health, sizes, labels, links and both
// layouts (run under Node: they never touch the DOM).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  edgeLabel, healthOf, layoutInput, type MapEdge, type MapNode, MAX_RADIUS, MIN_RADIUS, nodeHref,
  nodeRadius, pathOf, place,
} from '../src/lib/service_map';

function node(id: number, name: string, requests: number, errors = 0, type: MapNode['type'] = 'service'): MapNode {
  return {
    id, type, name, namespace: type === 'service' ? '' : undefined, requests, request_errors: errors,
    rate: requests / 60, error_rate: requests ? errors / requests : null,
    p50_nano: null, p95_nano: null, p99_nano: null,
  };
}
function edge(source: number, target: number, calls: number, errors = 0, type: MapEdge['type'] = 'call'): MapEdge {
  return {
    source, target, type, calls, errors, rate: calls / 60, error_rate: calls ? errors / calls : null,
    p50_nano: '1000000', p95_nano: '40000000', p99_nano: '90000000',
  };
}

const SHOP = {
  nodes: [node(0, 'frontend', 100), node(1, 'checkout', 50, 4), node(2, 'postgresql shop', 30, 0, 'database'),
          node(3, 'kafka orders', 10, 0, 'messaging'), node(4, 'payments.example', 5, 0, 'peer')],
  edges: [edge(0, 1, 50, 4), edge(1, 2, 30, 0, 'database'), edge(1, 3, 10, 0, 'messaging'), edge(1, 4, 5)],
};

test('health follows the services page thresholds; no calls is idle', () => {
  assert.equal(healthOf(0, 10), 'healthy');
  assert.equal(healthOf(0.0099, 10), 'healthy');
  assert.equal(healthOf(0.01, 10), 'degraded');
  assert.equal(healthOf(0.049, 10), 'degraded');
  assert.equal(healthOf(0.05, 10), 'unhealthy');
  assert.equal(healthOf(1, 10), 'unhealthy');
  assert.equal(healthOf(null, 0), 'idle');
  assert.equal(healthOf(0, 0), 'idle');
});

test('node area grows with requests, from the smallest to the busiest', () => {
  assert.equal(nodeRadius(0, 100), MIN_RADIUS);
  assert.equal(nodeRadius(5, 0), MIN_RADIUS);
  assert.equal(nodeRadius(100, 100), MAX_RADIUS);
  const quarter = nodeRadius(25, 100);
  assert.equal(quarter, MIN_RADIUS + (MAX_RADIUS - MIN_RADIUS) / 2);
  assert.ok(nodeRadius(10, 100) < quarter);
});

test('edge labels say calls, errors when there are some, and p95', () => {
  assert.equal(edgeLabel(edge(0, 1, 50, 4)), '50 calls · 8.0% errors · p95 40.0 ms');
  assert.equal(edgeLabel(edge(0, 1, 1)), '1 call · p95 40.0 ms');
  assert.equal(edgeLabel({ ...edge(0, 1, 1200), p95_nano: null }), '1,200 calls');
});

test('service nodes link to their page with the range and namespace; virtual nodes do not', () => {
  assert.equal(nodeHref(node(0, 'front end', 1), 'now-6h'), '/services/front%20end?range=now-6h');
  assert.equal(nodeHref({ ...node(0, 'cart', 1), namespace: 'shop' }, 'now-1h'),
    '/services/cart?range=now-1h&namespace=shop');
  assert.equal(nodeHref(node(2, 'postgresql shop', 1, 0, 'database'), 'now-1h'), null);
});

test('the layout input sizes and judges every node and drops edges it cannot draw', () => {
  const input = layoutInput({ nodes: SHOP.nodes, edges: [...SHOP.edges, edge(1, 1, 3), edge(1, 9, 3)] });
  assert.equal(input.nodes.length, 5);
  assert.deepEqual(input.nodes.map((n) => n.health), ['healthy', 'unhealthy', 'healthy', 'healthy', 'healthy']);
  assert.equal(input.nodes[0].r, MAX_RADIUS);
  assert.deepEqual(input.edges, SHOP.edges);  // no self-call, no edge to an unknown node
});

for (const which of ['layered', 'force'] as const) {
  test(`the ${which} layout places every node apart, inside the drawing, and routes every edge`, () => {
    const placed = place(SHOP, which);
    assert.equal(placed.nodes.length, 5);
    assert.equal(placed.edges.length, 4);
    for (const p of placed.nodes) {
      assert.ok(p.x - p.r >= 0 && p.x + p.r <= placed.width, `${p.node.name} x ${p.x}`);
      assert.ok(p.y - p.r >= 0 && p.y + p.r <= placed.height, `${p.node.name} y ${p.y}`);
      for (const q of placed.nodes) {
        if (q === p) continue;
        assert.ok(Math.hypot(p.x - q.x, p.y - q.y) >= p.r + q.r, `${p.node.name} overlaps ${q.node.name}`);
      }
    }
    for (const e of placed.edges) {
      const from = placed.nodes.find((n) => n.node.id === e.edge.source)!;
      const to = placed.nodes.find((n) => n.node.id === e.edge.target)!;
      const start = e.points[0];
      const end = e.points[e.points.length - 1];
      // Lines start at the caller's rim and stop just short of the callee's.
      assert.ok(Math.abs(Math.hypot(start.x - from.x, start.y - from.y) - from.r) < 1);
      assert.ok(Math.abs(Math.hypot(end.x - to.x, end.y - to.y) - (to.r + 4)) < 1);
      assert.match(pathOf(e.points), /^M[0-9.]+,[0-9.]+[LC]/);
    }
    // The same input gives the same drawing (no randomness).
    assert.deepEqual(place(SHOP, which), placed);
  });
}

test('the layered layout puts callers left of their callees', () => {
  const placed = place(SHOP, 'layered');
  const x = (name: string) => placed.nodes.find((n) => n.node.name === name)!.x;
  assert.ok(x('frontend') < x('checkout'));
  assert.ok(x('checkout') < x('postgresql shop'));
  assert.ok(x('checkout') < x('kafka orders'));
});

test('an empty map places nothing', () => {
  assert.deepEqual(place({ nodes: [], edges: [] }, 'layered'), { width: 0, height: 0, nodes: [], edges: [] });
  assert.deepEqual(place({ nodes: [], edges: [] }, 'force'), { width: 0, height: 0, nodes: [], edges: [] });
});

test('paths: a line for two points, a curve through every point for more', () => {
  assert.equal(pathOf([{ x: 0, y: 0 }, { x: 10, y: 5 }]), 'M0.0,0.0L10.0,5.0');
  // Through (10, 10): the middle point is a segment's end, not a control point.
  assert.equal(pathOf([{ x: 0, y: 0 }, { x: 10, y: 10 }, { x: 20, y: 0 }]),
    'M0.0,0.0C1.7,1.7 6.7,10.0 10.0,10.0C13.3,10.0 18.3,1.7 20.0,0.0');
  assert.equal(pathOf([{ x: 0, y: 0 }]), '');
});
