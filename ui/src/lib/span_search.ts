// Span search inside one trace: which spans match a text, in the order the
// waterfall lists them, the next and previous match, and what "matches
// only" keeps. Pure: unit-tested with node --test.

import type { CompactTrace, SpanTree } from './trace';

// One mark per span: 1 when its name, service or span id contains `text`
// (case-insensitive), or when its id is in `alsoIds`: the spans the server
// found the text in (attributes, events, links, status message; the
// compact form has none of them, see spanSearchPath). Null for a blank
// text (no search).
export function matchSpans(
  trace: CompactTrace,
  text: string,
  alsoIds?: ReadonlySet<string>,
): Uint8Array | null {
  const needle = text.trim().toLowerCase();
  if (needle === '') return null;
  // Names and services are few and shared: test each once.
  const nameHit = trace.names.map((name) => name.toLowerCase().includes(needle));
  const serviceHit = trace.services.map((service) => service.toLowerCase().includes(needle));
  const marks = new Uint8Array(trace.span_count);
  const { name, service, span_id } = trace.spans;
  for (let i = 0; i < trace.span_count; i += 1) {
    if (nameHit[name[i]] || serviceHit[service[i]] || span_id[i].includes(needle) || alsoIds?.has(span_id[i])) {
      marks[i] = 1;
    }
  }
  return marks;
}

// The longest text the server searches spans for (docs/api.md).
export const SPAN_SEARCH_MAX_BYTES = 256;

// The API path that names the spans of `traceId` holding `text` in what the
// compact form leaves out, or null when there is nothing to ask (a blank
// text, or one longer than the server takes).
export function spanSearchPath(traceId: string, text: string): string | null {
  const needle = text.trim();
  if (needle === '' || new TextEncoder().encode(needle).length > SPAN_SEARCH_MAX_BYTES) return null;
  return `/api/v1/traces/${traceId}/spans?q=${encodeURIComponent(needle)}`;
}

// The marked spans in `order` (the whole tree, top to bottom).
export function inOrder(order: readonly number[], marks: Uint8Array): number[] {
  return order.filter((span) => marks[span] === 1);
}

// The matches and the ancestors they hang from: what "matches only" shows.
export function withAncestors(tree: SpanTree, marks: Uint8Array): Uint8Array {
  const keep = new Uint8Array(marks.length);
  for (let span = 0; span < marks.length; span += 1) {
    if (!marks[span]) continue;
    // Stop at the first ancestor already kept: its own ancestors are too.
    for (let at = span; at >= 0 && !keep[at]; at = tree.parent[at]) keep[at] = 1;
  }
  return keep;
}

// Which match to go to from `current` (a span, or -1 for none), one step
// forward (+1) or back (-1), wrapping around. From a span that is not a
// match, forward goes to the first match below it and back to the first
// above it. `position` gives each span's place in the tree's order.
export function stepMatch(
  matches: readonly number[],
  position: ArrayLike<number>,
  current: number,
  direction: 1 | -1,
): number {
  if (matches.length === 0) return -1;
  if (current < 0) return direction === 1 ? matches[0] : matches[matches.length - 1];
  const here = position[current];
  // The first match at or after `here` in tree order (binary search).
  let lo = 0;
  let hi = matches.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (position[matches[mid]] < here) lo = mid + 1;
    else hi = mid;
  }
  const exact = lo < matches.length && matches[lo] === current;
  let next: number;
  if (direction === 1) next = exact ? lo + 1 : lo;
  else next = lo - 1;
  const count = matches.length;
  return matches[((next % count) + count) % count];
}

// Each span's place in `order` (-1 for a span not in it).
export function positions(order: readonly number[], spanCount: number): Int32Array {
  const position = new Int32Array(spanCount).fill(-1);
  order.forEach((span, k) => {
    position[span] = k;
  });
  return position;
}
