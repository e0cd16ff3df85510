// Geometry shared by the trace's canvases (waterfall, minimap, flame
// graph): time-axis ticks and the span under a point of the flame graph.
// Pure: unit-tested with node --test.

import type { SpanTree } from './trace';

// A tick step for a time axis `total` ns long with at most `most` ticks:
// 1, 2 or 5 times a power of ten (ns), never below 1 ns.
export function tickStep(total: number, most: number): number {
  const rough = Math.max(1, total / Math.max(1, most));
  const power = 10 ** Math.floor(Math.log10(rough));
  for (const factor of [1, 2, 5, 10]) {
    if (factor * power >= rough) return factor * power;
  }
  return 10 * power;
}

// The spans of each depth, in start order: the flame graph's levels.
export function levels(tree: SpanTree): number[][] {
  const result: number[][] = [];
  for (let span = 0; span < tree.depth.length; span += 1) {
    const depth = tree.depth[span];
    while (result.length <= depth) result.push([]);
    result[depth].push(span);
  }
  for (const level of result) level.sort((a, b) => tree.start[a] - tree.start[b] || a - b);
  return result;
}

// The span of `level` drawn at time `at` (ns from the trace start), or -1.
// `slack` ns either side lets a click hit a span drawn narrower than a
// pixel; the span whose interval holds `at` wins over one merely near it,
// and of overlapping spans the one that started last (drawn on top).
export function spanAt(tree: SpanTree, level: readonly number[], at: number, slack: number): number {
  // The last span starting at or before at + slack.
  let lo = 0;
  let hi = level.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (tree.start[level[mid]] <= at + slack) lo = mid + 1;
    else hi = mid;
  }
  let near = -1;
  // Look back over the few spans that could still reach `at`; spans are
  // in start order, so stop once a bounded number have been passed.
  for (let k = lo - 1, seen = 0; k >= 0 && seen < 64; k -= 1, seen += 1) {
    const span = level[k];
    const end = tree.start[span] + Math.max(0, tree.duration[span]);
    if (tree.start[span] <= at && at <= end) return span;
    if (near < 0 && end >= at - slack) near = span;
  }
  return near;
}

// The span the flame graph selects after `key` (KeyboardEvent.key) from
// `selected` (-1 for none): ArrowUp the parent, ArrowDown the earliest
// child, ArrowLeft and ArrowRight the box before and after it on its level
// (whatever its parent), Home and End the first and last of the level.
// With nothing selected, any of them selects the first root. The same span
// when there is nowhere to go; null for a key it does not handle.
export function flameKey(tree: SpanTree, byDepth: readonly number[][], selected: number,
  key: string): number | null {
  if (!['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End'].includes(key)) return null;
  if (selected < 0 || selected >= tree.depth.length) return byDepth.length > 0 ? byDepth[0][0] : -1;
  const level = byDepth[tree.depth[selected]];
  // Its place in the level: the first of its start, then on to it.
  let at = 0;
  for (let lo = 0, hi = level.length; lo < hi;) {
    const mid = (lo + hi) >> 1;
    if (tree.start[level[mid]] < tree.start[selected]) lo = mid + 1;
    else hi = mid;
    at = lo;
  }
  while (at < level.length && level[at] !== selected) at += 1;
  switch (key) {
    case 'ArrowUp':
      return tree.parent[selected] >= 0 ? tree.parent[selected] : selected;
    case 'ArrowDown':
      return tree.children[selected].length > 0 ? tree.children[selected][0] : selected;
    case 'ArrowLeft':
      return at > 0 && at < level.length ? level[at - 1] : selected;
    case 'ArrowRight':
      return at + 1 < level.length ? level[at + 1] : selected;
    case 'Home':
      return level[0];
    default:
      return level[level.length - 1];
  }
}
