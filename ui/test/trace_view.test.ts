// Unit tests of the trace page's pure logic: critical path, self time,
// span search and the canvases' geometry (node --test; bundled by
// ui/test/build.mjs).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { criticalPath } from '../src/lib/critical_path';
import { operationStats, selfTimes } from '../src/lib/self_time';
import { inOrder, matchSpans, positions, spanSearchPath, stepMatch, withAncestors } from '../src/lib/span_search';
import { flameKey, levels, spanAt, tickStep } from '../src/lib/timeline';
import { hslToRgb, minimapPixels } from '../src/lib/minimap';
import { buildTree, type CompactTrace, visibleRows } from '../src/lib/trace';

// A span: [id, parent id, start, duration] and optionally service and name.
type Row = [string, string, number, number, string?, string?];

function trace(rows: Row[]): CompactTrace {
  const services = [...new Set(rows.map((r) => r[4] ?? 'svc'))];
  const names = [...new Set(rows.map((r) => r[5] ?? r[0]))];
  const serviceIndex = new Map(services.map((s, i) => [s, i]));
  const nameIndex = new Map(names.map((s, i) => [s, i]));
  return {
    trace_id: '5b8efff798038103d269b633813fc60c',
    start_time_unix_nano: '1750000000000000000',
    span_count: rows.length,
    services,
    names,
    spans: {
      span_id: rows.map((r) => r[0]),
      parent_span_id: rows.map((r) => r[1]),
      service: rows.map((r) => serviceIndex.get(r[4] ?? 'svc')!),
      name: rows.map((r) => nameIndex.get(r[5] ?? r[0])!),
      kind: rows.map(() => 1),
      status_code: rows.map(() => 0),
      start_offset_nano: rows.map((r) => r[2]),
      duration_nano: rows.map((r) => r[3]),
    },
  };
}

// The ids of the marked spans, in id order.
function marked(rows: Row[], marks: Uint8Array): string[] {
  return rows.filter((_, i) => marks[i]).map((r) => r[0]).sort();
}

function pathOf(rows: Row[]): string[] {
  return marked(rows, criticalPath(buildTree(trace(rows))));
}

test('critical path: a chain of nested spans is on it whole', () => {
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 10, 80],
    ['c', 'b', 20, 50],
    ['d', 'c', 30, 10],
  ]), ['a', 'b', 'c', 'd']);
});

test('critical path: children one after the other are all on it, from the last back', () => {
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 0, 40],
    ['c', 'a', 50, 50],
    ['d', 'a', 45, 2],
  ]), ['a', 'b', 'c', 'd']);
});

test('critical path: of overlapping children only the last to finish counts', () => {
  // c finishes last; b ends (90) after c started (60), so the walk, at 60,
  // skips it; e ends before 60 and is taken.
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 0, 90],
    ['c', 'a', 60, 40],
    ['e', 'a', 5, 50],
    ['f', 'b', 10, 10],  // under a span off the path: off too
  ]), ['a', 'c', 'e']);
});

test('critical path: children are clipped to their parent', () => {
  // b ends after a (clipped to 100) and so finishes last; c overlaps b's
  // clipped interval and is skipped; d lies after a's end; inside b, g
  // is after a's end (outside b's clipped interval) and h within it.
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 50, 100],
    ['c', 'a', 0, 60],
    ['d', 'a', 120, 10],
    ['g', 'b', 110, 30],
    ['h', 'b', 60, 20],
  ]), ['a', 'b', 'h']);
  // A child starting before its parent counts from the parent's start.
  assert.deepEqual(pathOf([
    ['a', '', 10, 90],
    ['b', 'a', 0, 50],
    ['c', 'a', 40, 5],  // ends (45) before b's end but after b's clipped start (10)
  ]), ['a', 'b']);
});

test('critical path: orphans are roots beside the real one', () => {
  // x's parent is not in the trace. It ends after the root, so it is on
  // the path, and the root (ending before x starts) too; y overlaps x and
  // is not.
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 10, 50],
    ['x', 'ffffffffffffffff', 110, 40],
    ['y', 'eeeeeeeeeeeeeeee', 105, 30],
    ['z', 'x', 120, 10],
  ]), ['a', 'b', 'x', 'z']);
  // An orphan inside the root's time, ending before it, is not.
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['x', 'ffffffffffffffff', 20, 30],
  ]), ['a']);
});

test('critical path: ties go to the longer child, then to the first in the trace', () => {
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 50, 40],
    ['c', 'a', 20, 70],  // ends with b (90) and is longer
  ]), ['a', 'c']);
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['c', 'a', 20, 70],
    ['b', 'a', 20, 70],  // equal to c in every way: c comes first
  ]), ['a', 'c']);
  // Zero-length and negative spans are never on it.
  assert.deepEqual(pathOf([
    ['a', '', 0, 100],
    ['b', 'a', 100, 0],
    ['c', 'a', 50, -10],
  ]), ['a']);
});

test('critical path: a chain 100,000 deep does not overflow the stack', () => {
  const rows: Row[] = [];
  for (let i = 0; i < 100_000; i += 1) rows.push([`s${i}`, i === 0 ? '' : `s${i - 1}`, i, 200_000 - 2 * i]);
  const marks = criticalPath(buildTree(trace(rows)));
  assert.equal(marks.reduce((sum, m) => sum + m, 0), 100_000);
});

test('self time: duration minus the union of the children, clipped to the span', () => {
  const rows: Row[] = [
    ['a', '', 0, 100, 'front', 'GET /'],
    ['b', 'a', 10, 30, 'back', 'query'],   // 10..40
    ['c', 'a', 20, 40, 'back', 'query'],   // 20..60, overlaps b: union 10..60
    ['d', 'a', 90, 50, 'back', 'late'],    // 90..140, clipped to 90..100
    ['e', 'c', 30, 10, 'db', 'SELECT'],
    ['f', 'c', -5, 1, 'db', 'SELECT'],      // before c: clipped away
  ];
  const tree = buildTree(trace(rows));
  assert.deepEqual([...selfTimes(tree)], [100 - 50 - 10, 30, 40 - 10, 50, 10, 1]);
  assert.deepEqual(operationStats(trace(rows), tree), [
    { service: 'back', operation: 'query', count: 2, total: 70, self: 60 },
    { service: 'back', operation: 'late', count: 1, total: 50, self: 50 },
    { service: 'front', operation: 'GET /', count: 1, total: 100, self: 40 },
    { service: 'db', operation: 'SELECT', count: 2, total: 11, self: 11 },
  ]);
});

test('self time: a negative duration counts as nothing', () => {
  const tree = buildTree(trace([['a', '', 0, -5], ['b', 'a', 0, 3]]));
  assert.deepEqual([...selfTimes(tree)], [0, 3]);
});

const searched: Row[] = [
  ['00000000000000a1', '', 0, 100, 'checkout', 'POST /checkout'],
  ['00000000000000a2', '00000000000000a1', 10, 50, 'checkout', 'GET cart'],
  ['00000000000000a3', '00000000000000a2', 15, 20, 'cart', 'SELECT items'],
  ['00000000000000b4', '00000000000000a1', 70, 20, 'payments', 'charge'],
  ['00000000000000b5', '00000000000000b4', 75, 5, 'payments', 'GET card'],
];

test('span search matches names, services and span ids, whatever the case', () => {
  const t = trace(searched);
  assert.deepEqual(marked(searched, matchSpans(t, 'CART')!), ['00000000000000a2', '00000000000000a3']);
  assert.deepEqual(marked(searched, matchSpans(t, 'payments')!), ['00000000000000b4', '00000000000000b5']);
  assert.deepEqual(marked(searched, matchSpans(t, '0b5')!), ['00000000000000b5']);
  assert.deepEqual(marked(searched, matchSpans(t, 'nothing')!), []);
  assert.equal(matchSpans(t, '  '), null);
});

test('span search adds the spans the server found the text in, and asks only for what it takes', () => {
  const t = trace(searched);
  // The server found "order-7" in b4's attributes; names still match too.
  assert.deepEqual(marked(searched, matchSpans(t, 'order-7', new Set(['00000000000000b4']))!), ['00000000000000b4']);
  assert.deepEqual(
    marked(searched, matchSpans(t, 'cart', new Set(['00000000000000b5']))!),
    ['00000000000000a2', '00000000000000a3', '00000000000000b5'],
  );
  assert.equal(matchSpans(t, ' ', new Set(['00000000000000b4'])), null);
  assert.equal(spanSearchPath('abc', '  a b&c '), '/api/v1/traces/abc/spans?q=a%20b%26c');
  assert.equal(spanSearchPath('abc', '   '), null);
  assert.equal(spanSearchPath('abc', 'x'.repeat(256)), `/api/v1/traces/abc/spans?q=${'x'.repeat(256)}`);
  assert.equal(spanSearchPath('abc', 'x'.repeat(257)), null);
  assert.equal(spanSearchPath('abc', 'é'.repeat(129)), null);  // 258 bytes
});

test('span search: "matches only" keeps the matches and their ancestors, in tree order', () => {
  const t = trace(searched);
  const tree = buildTree(t);
  const marks = matchSpans(t, 'select')!;
  const keep = withAncestors(tree, marks);
  assert.deepEqual(visibleRows(tree, new Set(), keep), [0, 1, 2]);
  const card = withAncestors(tree, matchSpans(t, 'card')!);  // GET card only
  assert.deepEqual(visibleRows(tree, new Set(), card), [0, 3, 4]);
  // A collapsed ancestor still hides what is under it.
  assert.deepEqual(visibleRows(tree, new Set([3]), card), [0, 3]);
});

test('span search: next and previous walk the matches in tree order and wrap', () => {
  const t = trace(searched);
  const tree = buildTree(t);
  const order = visibleRows(tree, new Set());
  const position = positions(order, t.span_count);
  const matches = inOrder(order, matchSpans(t, 'get')!);  // a2 (1), b5 (4)
  assert.deepEqual(matches, [1, 4]);
  assert.equal(stepMatch(matches, position, -1, 1), 1);
  assert.equal(stepMatch(matches, position, -1, -1), 4);
  assert.equal(stepMatch(matches, position, 1, 1), 4);
  assert.equal(stepMatch(matches, position, 4, 1), 1);   // wraps
  assert.equal(stepMatch(matches, position, 1, -1), 4);  // wraps back
  assert.equal(stepMatch(matches, position, 4, -1), 1);
  // From a span that is not a match: the next below it, the previous above.
  assert.equal(stepMatch(matches, position, 2, 1), 4);
  assert.equal(stepMatch(matches, position, 2, -1), 1);
  assert.equal(stepMatch(matches, position, 0, -1), 4);
  assert.equal(stepMatch([], position, 0, 1), -1);
});

test('time axis ticks are 1, 2 or 5 times a power of ten', () => {
  assert.equal(tickStep(1_000_000, 10), 100_000);
  assert.equal(tickStep(1_200_000, 10), 200_000);
  assert.equal(tickStep(3_000_000, 10), 500_000);
  assert.equal(tickStep(6_000_000, 10), 1_000_000);
  assert.equal(tickStep(0, 10), 1);
});

test('minimap colours are CSS hsl() in RGB bytes', () => {
  assert.deepEqual(hslToRgb(0, 60, 50), [204, 51, 51]);
  assert.deepEqual(hslToRgb(120, 60, 50), [51, 204, 51]);
  assert.deepEqual(hslToRgb(240, 60, 50), [51, 51, 204]);
  assert.deepEqual(hslToRgb(300, 0, 100), [255, 255, 255]);
});

// The minimap's pixels as text: a row of characters per pixel row, each
// the first letter of the span written there ('.' for none), lower case
// where drawn dimmed.
function minimapText(rows: Row[], order: number[], width: number, height: number, critical: Uint8Array | null = null) {
  const tree = buildTree(trace(rows));
  const letters = 'ABCDEFGH';
  const pixels = minimapPixels({
    tree, rows: order, width, height, critical, colour: (span) => [span * 10, 0, 0],
  });
  const lines = [];
  for (let y = 0; y < height; y += 1) {
    let line = '';
    for (let x = 0; x < width; x += 1) {
      const at = (y * width + x) * 4;
      const letter = letters[pixels[at] / 10];
      line += pixels[at + 3] === 0 ? '.' : pixels[at + 3] === 255 ? letter : letter.toLowerCase();
    }
    lines.push(line);
  }
  return lines;
}

test('minimap: each row a line by time, the later row on top where rows share a pixel row', () => {
  const rows: Row[] = [
    ['a', '', 0, 100],
    ['b', 'a', 50, 50],
    ['c', 'a', 0, 20],
    ['d', 'a', 10, 5],  // narrower than a pixel: still one pixel wide
  ];
  // A pixel row each, or more when there are fewer rows than pixel rows.
  assert.deepEqual(minimapText(rows.slice(0, 3), [0, 1, 2], 10, 4), ['AAAAAAAAAA', '.....BBBBB', 'CC........', 'CC........']);
  assert.deepEqual(minimapText(rows, [0, 1, 2, 3], 10, 4), ['AAAAAAAAAA', '.....BBBBB', 'CC........', '.D........']);
  // Four rows in two pixel rows: b over a, d over c.
  assert.deepEqual(minimapText(rows, [0, 1, 2, 3], 10, 2), ['AAAAABBBBB', 'CD........']);
  // The rows' order decides, not the spans'.
  assert.deepEqual(minimapText(rows, [1, 0, 3, 2], 10, 2), ['AAAAAAAAAA', 'CC........']);
});

test('minimap: with the critical path shown, rows on it win and the others are dimmed', () => {
  const rows: Row[] = [
    ['a', '', 0, 100],
    ['b', 'a', 50, 50],
    ['c', 'a', 0, 20],
    ['d', 'a', 10, 5],
  ];
  const onPath = Uint8Array.from([1, 0, 0, 1]);
  assert.deepEqual(minimapText(rows, [0, 1, 2, 3], 10, 2, onPath), ['AAAAAAAAAA', 'cD........']);
});

test('minimap: 100,000 rows in a 1,280 by 96 pixel map, each pixel written once', () => {
  const count = 100_000;
  const rows: Row[] = [['r', '', 0, 1_000_000]];
  for (let i = 1; i < count; i += 1) rows.push([`s${i}`, 'r', (i * 7919) % 1_000_000, 1_000_000 - ((i * 7919) % 1_000_000)]);
  const tree = buildTree(trace(rows));
  const order = visibleRows(tree, new Set());
  let calls = 0;
  const started = performance.now();
  const pixels = minimapPixels({
    tree, rows: order, width: 1280, height: 96, critical: null, colour: () => {
      calls += 1;
      return [1, 2, 3];
    },
  });
  const ms = performance.now() - started;
  assert.equal(calls, count);
  // Every span runs to the end, so the right edge of every pixel row is painted.
  for (let y = 0; y < 96; y += 1) assert.equal(pixels[(y * 1280 + 1279) * 4 + 3], 255);
  assert.ok(ms < 500, `${ms.toFixed(0)} ms`);
});

test('flame graph: levels by depth in start order, and the span under a point', () => {
  const t = trace(searched);
  const tree = buildTree(t);
  const byDepth = levels(tree);
  assert.deepEqual(byDepth, [[0], [1, 3], [2, 4]]);
  assert.equal(spanAt(tree, byDepth[1], 30, 0), 1);
  assert.equal(spanAt(tree, byDepth[1], 80, 0), 3);
  assert.equal(spanAt(tree, byDepth[1], 65, 0), -1);     // between the two
  assert.equal(spanAt(tree, byDepth[1], 65, 6), 3);      // near enough to b4's start
  assert.equal(spanAt(tree, byDepth[2], 79, 0), 4);
  assert.equal(spanAt(tree, byDepth[0], 150, 0), -1);
});

test('flame graph keys: parent, earliest child, neighbours on the level, its ends', () => {
  const tree = buildTree(trace(searched));
  const byDepth = levels(tree);  // [[0], [1, 3], [2, 4]]; 2 is 1's child, 4 is 3's
  assert.equal(flameKey(tree, byDepth, -1, 'ArrowDown'), 0);
  assert.equal(flameKey(tree, byDepth, 0, 'ArrowDown'), 1);
  assert.equal(flameKey(tree, byDepth, 0, 'ArrowUp'), 0);
  assert.equal(flameKey(tree, byDepth, 1, 'ArrowRight'), 3);
  assert.equal(flameKey(tree, byDepth, 3, 'ArrowRight'), 3);
  assert.equal(flameKey(tree, byDepth, 3, 'ArrowLeft'), 1);
  assert.equal(flameKey(tree, byDepth, 1, 'ArrowLeft'), 1);
  // Across parents on one level.
  assert.equal(flameKey(tree, byDepth, 2, 'ArrowRight'), 4);
  assert.equal(flameKey(tree, byDepth, 4, 'ArrowUp'), 3);
  assert.equal(flameKey(tree, byDepth, 4, 'ArrowDown'), 4);
  assert.equal(flameKey(tree, byDepth, 4, 'Home'), 2);
  assert.equal(flameKey(tree, byDepth, 2, 'End'), 4);
  assert.equal(flameKey(tree, byDepth, 2, 'Enter'), null);
});

import { treeKey } from '../src/lib/tree_keys';

test('keys in the tree grid move the selection and fold as the ARIA pattern says', () => {
  const tree = buildTree(trace(searched));
  const rows = visibleRows(tree, new Set());  // 0, 1, 2, 3, 4
  const none = new Set<number>();
  assert.deepEqual(treeKey('ArrowDown', tree, rows, none, -1), { select: 0 });
  assert.deepEqual(treeKey('ArrowDown', tree, rows, none, 1), { select: 2 });
  assert.deepEqual(treeKey('ArrowDown', tree, rows, none, 4), { select: 4 });
  assert.deepEqual(treeKey('ArrowUp', tree, rows, none, 2), { select: 1 });
  assert.deepEqual(treeKey('ArrowUp', tree, rows, none, 0), { select: 0 });
  assert.deepEqual(treeKey('End', tree, rows, none, 0), { select: 4 });
  assert.deepEqual(treeKey('Home', tree, rows, none, 3), { select: 0 });
  // Left folds an open span, then goes to the parent; Right unfolds.
  assert.deepEqual(treeKey('ArrowLeft', tree, rows, none, 3), { toggle: 3 });
  assert.deepEqual(treeKey('ArrowLeft', tree, rows, new Set([3]), 3), { select: 0 });
  assert.deepEqual(treeKey('ArrowLeft', tree, rows, none, 4), { select: 3 });
  assert.deepEqual(treeKey('ArrowRight', tree, rows, new Set([3]), 3), { toggle: 3 });
  assert.deepEqual(treeKey('ArrowRight', tree, rows, none, 3), {});
  assert.deepEqual(treeKey('ArrowLeft', tree, rows, none, 0), { toggle: 0 });
  assert.deepEqual(treeKey('ArrowLeft', tree, rows, new Set([0]), 0), {});
  // A selected span hidden by "matches only" starts from the top.
  assert.deepEqual(treeKey('ArrowDown', tree, [0, 3, 4], none, 1), { select: 0 });
  assert.equal(treeKey('a', tree, rows, none, 0), null);
  assert.equal(treeKey('ArrowDown', tree, [], none, -1), null);
});
