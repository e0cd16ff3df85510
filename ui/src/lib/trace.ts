// A trace's span tree from the compact form (GET /api/v1/traces/{id}
// ?format=columns), and the rows a waterfall shows. Pure: unit-tested with
// node --test.

export interface CompactTrace {
  trace_id: string;
  start_time_unix_nano: string;
  span_count: number;
  services: string[];
  names: string[];
  spans: {
    span_id: string[];
    parent_span_id: string[];
    service: number[];
    name: number[];
    kind: number[];
    status_code: number[];
    start_offset_nano: (number | string)[];
    duration_nano: (number | string)[];
  };
}

export interface SpanTree {
  // Children of each span, in start order; roots are the spans without a
  // parent in the trace.
  children: number[][];
  parent: number[];    // -1 for a root
  roots: number[];
  depth: number[];
  start: number[];     // offset from the trace start, ns (as numbers)
  duration: number[];  // ns
  end: number;         // the latest span end, ns from the trace start
}

// The children list of every leaf (shared; never changed).
const NO_CHILDREN: number[] = [];

const asNumber = (v: number | string) => (typeof v === 'number' ? v : Number(BigInt(v)));

export function buildTree(trace: CompactTrace): SpanTree {
  const n = trace.span_count;
  const start = trace.spans.start_offset_nano.map(asNumber);
  const duration = trace.spans.duration_nano.map(asNumber);
  const index = new Map<string, number>();
  for (let i = 0; i < n; i += 1) {
    // A span stored twice is listed twice: the first one stands for it.
    if (!index.has(trace.spans.span_id[i])) index.set(trace.spans.span_id[i], i);
  }
  // Leaves (most spans) share one empty list, never changed: only a span
  // with children gets a list of its own (fewer allocations, less GC).
  const children: number[][] = new Array<number[]>(n);
  for (let i = 0; i < n; i += 1) children[i] = NO_CHILDREN;
  const roots: number[] = [];
  const parent = new Array<number>(n).fill(-1);
  for (let i = 0; i < n; i += 1) {
    const up = index.get(trace.spans.parent_span_id[i]);
    if (up === undefined || up === i) {
      roots.push(i);
    } else {
      if (children[up] === NO_CHILDREN) children[up] = [];
      children[up].push(i);
      parent[i] = up;
    }
  }
  const byStart = (a: number, b: number) => start[a] - start[b] || a - b;
  const sortByStart = (list: number[]) => {
    for (let k = 1; k < list.length; k += 1) {
      if (byStart(list[k - 1], list[k]) > 0) {
        list.sort(byStart);
        return;
      }
    }
  };
  sortByStart(roots);
  for (const list of children) sortByStart(list);
  // Depths by walking from the roots (each span is pushed once, by its
  // parent or as a root, so the stack holds at most n); the first span of
  // a parent cycle (bad data) is never reached and becomes a root, the
  // rest of the cycle its descendants.
  const depth = new Array<number>(n).fill(-1);
  const stack = new Int32Array(n);
  const walk = (from: number) => {
    let top = 0;
    depth[from] = 0;
    stack[top++] = from;
    while (top > 0) {
      const span = stack[--top];
      for (const child of children[span]) {
        if (depth[child] >= 0) continue;
        depth[child] = depth[span] + 1;
        stack[top++] = child;
      }
    }
  };
  for (const root of roots) walk(root);
  for (let i = 0; i < n; i += 1) {
    if (depth[i] >= 0) continue;
    roots.push(i);
    const list = children[parent[i]];
    list.splice(list.indexOf(i), 1);
    parent[i] = -1;
    walk(i);
  }
  let end = 0;
  for (let i = 0; i < n; i += 1) end = Math.max(end, start[i] + Math.max(0, duration[i]));
  return { children, parent, roots, depth, start, duration, end };
}

// A service's colour: a hue from its name, the same on every page (the
// waterfall's names and bars, the minimap, the flame graph).
export function hue(name: string): number {
  let h = 0;
  for (let i = 0; i < name.length; i += 1) h = (h * 31 + name.charCodeAt(i)) % 360;
  return h;
}

// The spans shown, top to bottom: depth first, children under their parent
// in start order, nothing under a collapsed span, and, when `keep` is
// given, only the spans it marks (a span search's "matches only").
export function visibleRows(
  tree: SpanTree,
  collapsed: ReadonlySet<number>,
  keep?: Uint8Array,
): number[] {
  const rows: number[] = [];
  const seen = new Uint8Array(tree.depth.length);
  const stack = [...tree.roots].reverse();
  while (stack.length > 0) {
    const span = stack.pop()!;
    if (seen[span] || (keep && !keep[span])) continue;
    seen[span] = 1;
    rows.push(span);
    if (collapsed.has(span)) continue;
    const kids = tree.children[span];
    for (let k = kids.length - 1; k >= 0; k -= 1) stack.push(kids[k]);
  }
  return rows;
}
