// Unit tests of the UI's pure logic (node --test; bundled by
// ui/test/build.mjs, as the UI itself is, so they test the same code).

import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ServiceHealth } from '../src/lib/api';
import { duration, parseRange, percent, rangeParams, rate, toMinutes } from '../src/lib/format';
import { sortServices } from '../src/lib/services';

const NOW = Date.UTC(2026, 11, 3, 10, 17, 42, 500);

test('relative ranges end now and reach back their length', () => {
  assert.deepEqual(parseRange('now-15m', NOW), { startMs: NOW - 15 * 60e3, endMs: NOW });
  assert.deepEqual(parseRange('now-1h', NOW), { startMs: NOW - 3600e3, endMs: NOW });
  assert.deepEqual(parseRange('now-7d', NOW), { startMs: NOW - 7 * 86400e3, endMs: NOW });
  assert.deepEqual(parseRange('now-2w', NOW), { startMs: NOW - 14 * 86400e3, endMs: NOW });
  assert.deepEqual(parseRange('now-30s', NOW), { startMs: NOW - 30e3, endMs: NOW });
});

test('absolute ranges need a start before the end; anything else is refused', () => {
  assert.deepEqual(parseRange('2026-12-01T00:00:00Z/2026-12-02T00:00:00Z', NOW), {
    startMs: Date.UTC(2026, 11, 1),
    endMs: Date.UTC(2026, 11, 2),
  });
  // An offset is honoured: 05:45 at +05:45 is midnight UTC.
  assert.equal(parseRange('2026-12-01T05:45:00+05:45/2026-12-02T00:00:00Z', NOW)?.startMs, Date.UTC(2026, 11, 1));
  for (const bad of ['', 'now', 'now-0m', 'now-1y', 'now--1h', 'now-1000000d', '1h',
                     '2026-12-02T00:00:00Z/2026-12-01T00:00:00Z', 'yesterday/today']) {
    assert.equal(parseRange(bad, NOW), null, bad);
  }
});

test('windows widen to whole minutes, as the rollups count them', () => {
  const window = toMinutes({ startMs: NOW - 3600e3, endMs: NOW });
  assert.equal(window.startMs, Date.UTC(2026, 11, 3, 9, 17));
  assert.equal(window.endMs, Date.UTC(2026, 11, 3, 10, 18));
  const exact = toMinutes({ startMs: Date.UTC(2026, 11, 3, 9), endMs: Date.UTC(2026, 11, 3, 10) });
  assert.deepEqual(exact, { startMs: Date.UTC(2026, 11, 3, 9), endMs: Date.UTC(2026, 11, 3, 10) });
  const params = rangeParams('now-1h', NOW);
  assert.equal(params?.get('start'), '2026-12-03T09:17:00.000Z');
  assert.equal(params?.get('end'), '2026-12-03T10:18:00.000Z');
  assert.equal(rangeParams('soon', NOW), null);
});

test('durations, rates and percentages read naturally', () => {
  assert.equal(duration(null), '–');
  assert.equal(duration('999'), '999 ns');
  assert.equal(duration('1500'), '1.50 µs');
  assert.equal(duration('20000000'), '20.0 ms');
  assert.equal(duration('181403648'), '181 ms');
  assert.equal(duration('2500000000'), '2.50 s');
  assert.equal(rate(null), '–');
  assert.equal(rate(0), '0/s');
  assert.equal(rate(2), '2.00/s');
  assert.equal(rate(0.0022), '0.13/min');
  assert.equal(percent(0.25), '25%');
  assert.equal(percent(0.0125), '1.3%');
  assert.equal(percent(null), '–');
});

function service(name: string, rate: number | null, errorRate: number | null, p99: string | null): ServiceHealth {
  return {
    name, namespace: '', health: 'healthy', request_count: 0, request_errors: 0, rate,
    error_rate: errorRate, p50_nano: null, p95_nano: null, p99_nano: p99, span_count: 0,
    span_errors: 0, logs: {}, metric_points: 0,
  };
}

test('services sort by any column, both ways, with missing values last when descending', () => {
  const services = [service('b', 2, 0.1, '900'), service('a', null, null, null), service('c', 5, 0, '30000')];
  const names = (list: ServiceHealth[]) => list.map((s) => s.name).join('');
  assert.equal(names(sortServices(services, 'name', false)), 'abc');
  assert.equal(names(sortServices(services, 'rate', true)), 'cba');
  assert.equal(names(sortServices(services, 'error_rate', true)), 'bca');
  // p99 compares as numbers, not as strings ("900" < "30000").
  assert.equal(names(sortServices(services, 'p99', false)), 'abc');
  assert.equal(names(services), 'bac', 'the input is not reordered');
});

import { buildTree, type CompactTrace, visibleRows } from '../src/lib/trace';

function compact(spans: [string, string, number, number | string][]): CompactTrace {
  return {
    trace_id: '5b8efff798038103d269b633813fc60c',
    start_time_unix_nano: '1750000000000000000',
    span_count: spans.length,
    services: ['s'],
    names: ['n'],
    spans: {
      span_id: spans.map((s) => s[0]),
      parent_span_id: spans.map((s) => s[1]),
      service: spans.map(() => 0),
      name: spans.map(() => 0),
      kind: spans.map(() => 1),
      status_code: spans.map(() => 0),
      start_offset_nano: spans.map((s) => s[2]),
      duration_nano: spans.map((s) => s[3]),
    },
  };
}

test('a trace becomes a tree: children in start order under their parent', () => {
  // root(a) -> b, c ; b -> d ; e's parent is not in the trace (a root too)
  const tree = buildTree(
    compact([
      ['a', '', 0, 100],
      ['c', 'a', 50, 10],
      ['b', 'a', 10, 30],
      ['d', 'b', 12, 5],
      ['e', 'ffffffffffffffff', 5, '200'],
    ]),
  );
  assert.deepEqual(tree.roots, [0, 4]);
  assert.deepEqual(tree.children[0], [2, 1]);
  assert.deepEqual(tree.depth, [0, 1, 1, 2, 0]);
  assert.equal(tree.end, 205);
  assert.deepEqual(visibleRows(tree, new Set()), [0, 2, 3, 1, 4]);
  assert.deepEqual(visibleRows(tree, new Set([2])), [0, 2, 1, 4]);
  assert.deepEqual(visibleRows(tree, new Set([0])), [0, 4]);
});

test('bad data cannot loop: a parent cycle and a span that is its own parent', () => {
  const tree = buildTree(
    compact([
      ['a', 'b', 0, 1],
      ['b', 'a', 1, 1],
      ['c', 'c', 2, 1],
    ]),
  );
  const rows = visibleRows(tree, new Set());
  assert.deepEqual([...rows].sort(), [0, 1, 2]);
  assert.equal(new Set(rows).size, 3);
});

import { oneLine } from '../src/lib/values';

test('log bodies read on one line, whatever their type', () => {
  assert.equal(oneLine({ stringValue: 'cart loaded' }), 'cart loaded');
  assert.equal(
    oneLine({
      kvlistValue: {
        values: [
          { key: 'message', value: { stringValue: 'payment failed' } },
          { key: 'code', value: { intValue: '402' } },
          { key: 'tags', value: { arrayValue: { values: [{ stringValue: 'a' }, { boolValue: true }] } } },
          { key: 'inner', value: { kvlistValue: { values: [{ key: 'x', value: { doubleValue: 2.5 } }] } } },
        ],
      },
    }),
    'message="payment failed" code=402 tags=["a", true] inner={x=2.5}',
  );
  assert.equal(oneLine({ bytesValue: 'AAE=' }), 'bytes:AAE=');
  assert.equal(oneLine({}), '');
  assert.equal(oneLine(undefined), '');
});

import { toCsv } from '../src/lib/values';

test('CSV quotes only what needs quoting, doubles quotes and leaves NULL empty', () => {
  assert.equal(
    toCsv(['a', 'b,c'], [[1, 'x'], ['say "hi"', null], ['two\nlines', { k: 1 }]]),
    'a,"b,c"\r\n1,x\r\n"say ""hi""",\r\n"two\nlines","{""k"":1}"\r\n',
  );
});
