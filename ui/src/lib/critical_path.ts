// The critical path of a trace: the spans whose own time made the trace as
// long as it is. Pure: unit-tested with node --test.
//
// Walking back from a span's end: the child that finished last (before the
// point reached so far) is on the path; the walk continues from that
// child's start, taking the next child that finished before it, until the
// span's start. Each chosen child is walked the same way, within its own
// interval. So:
//   - of overlapping children only the last to finish counts, and a child
//     that ends after the point the walk has reached is skipped;
//   - a child is clipped to its parent's interval (one that ends after its
//     parent counts only up to the parent's end; one wholly outside it, or
//     of no length, is never on the path);
//   - the trace's roots (the real root and orphans whose parent is not in
//     the trace) are children of one virtual root spanning the trace;
//   - ties (equal clipped ends) go to the longer child, then to the one
//     first in the trace's order.

import type { SpanTree } from './trace';

// One mark per span: 1 when it is on the critical path.
export function criticalPath(tree: SpanTree): Uint8Array {
  const on = new Uint8Array(tree.depth.length);
  // Work list of [span, from, to]: a span on the path and its interval
  // clipped to its parent's (no recursion: a chain may be 100,000 deep).
  const work: [number, number, number][] = [];
  const choose = (kids: readonly number[], from: number, to: number) => {
    const items: { span: number; start: number; end: number }[] = [];
    for (const span of kids) {
      const start = Math.max(from, tree.start[span]);
      const end = Math.min(to, tree.start[span] + Math.max(0, tree.duration[span]));
      if (end > start) items.push({ span, start, end });
    }
    items.sort((a, b) => b.end - a.end || a.start - b.start || a.span - b.span);
    let cursor = to;
    for (const item of items) {
      if (cursor <= from) break;
      if (item.end > cursor) continue;
      work.push([item.span, item.start, item.end]);
      cursor = item.start;
    }
  };
  choose(tree.roots, -Infinity, Infinity);
  while (work.length > 0) {
    const [span, from, to] = work.pop()!;
    on[span] = 1;
    choose(tree.children[span], from, to);
  }
  return on;
}
