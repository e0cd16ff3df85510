// Self time per span and per operation: a span's duration minus the time
// covered by its children (the union of their intervals, clipped to the
// span's own), summed per service and span name. Pure: unit-tested with
// node --test.

import type { CompactTrace, SpanTree } from './trace';

// Each span's self time in ns (a negative duration counts as 0).
export function selfTimes(tree: SpanTree): Float64Array {
  const n = tree.depth.length;
  const self = new Float64Array(n);
  for (let span = 0; span < n; span += 1) {
    const from = tree.start[span];
    const to = from + Math.max(0, tree.duration[span]);
    let covered = 0;
    let runStart = 0;
    let runEnd = -Infinity;
    // Children are in start order, and clipping keeps that order.
    for (const child of tree.children[span]) {
      const start = Math.max(from, tree.start[child]);
      const end = Math.min(to, tree.start[child] + Math.max(0, tree.duration[child]));
      if (end <= start) continue;
      if (start > runEnd) {
        if (runEnd > runStart) covered += runEnd - runStart;
        runStart = start;
        runEnd = end;
      } else {
        runEnd = Math.max(runEnd, end);
      }
    }
    if (runEnd > runStart) covered += runEnd - runStart;
    self[span] = to - from - covered;
  }
  return self;
}

export interface OperationStats {
  service: string;
  operation: string;
  count: number;
  total: number;  // ns, the sum of the spans' durations
  self: number;   // ns, the sum of their self times
}

// One row per (service, span name), the most self time first (then by
// service and operation, so equal rows keep one order).
export function operationStats(trace: CompactTrace, tree: SpanTree): OperationStats[] {
  const self = selfTimes(tree);
  const rows = new Map<number, OperationStats>();
  const names = trace.names.length;
  for (let span = 0; span < tree.depth.length; span += 1) {
    const service = trace.spans.service[span];
    const name = trace.spans.name[span];
    const key = service * names + name;
    let row = rows.get(key);
    if (!row) {
      row = { service: trace.services[service], operation: trace.names[name], count: 0, total: 0, self: 0 };
      rows.set(key, row);
    }
    row.count += 1;
    row.total += Math.max(0, tree.duration[span]);
    row.self += self[span];
  }
  return [...rows.values()].sort(
    (a, b) =>
      b.self - a.self ||
      (a.service < b.service ? -1 : a.service > b.service ? 1 : 0) ||
      (a.operation < b.operation ? -1 : a.operation > b.operation ? 1 : 0),
  );
}
