// The metrics page's pure logic: steps, aligned series, summaries, units,
// the SQL it sends, and the heatmap's bucket math.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  alignSeries, bucketName, defaultStepNanos, detailsSql, heatmapCells, heatmapSql, histogramPoint,
  type HistogramPoint, seriesLabel, summarize, viewsOf, withUnit,
} from '../src/lib/metrics';

const HOUR = { startMs: Date.UTC(2026, 11, 3, 9), endMs: Date.UTC(2026, 11, 3, 10) };

test('the default step is the API\'s: a sixtieth of the window in whole seconds, at least one', () => {
  assert.equal(defaultStepNanos(HOUR), 60e9);
  assert.equal(defaultStepNanos({ startMs: 0, endMs: 15 * 60e3 }), 15e9);
  assert.equal(defaultStepNanos({ startMs: 0, endMs: 10e3 }), 1e9);
  assert.equal(defaultStepNanos({ startMs: 0, endMs: 90e3 }), 2e9);  // 1.5 s rounds to 2
});

test('only explicit-bucket histograms offer percentiles and a heatmap', () => {
  assert.deepEqual(viewsOf('histogram'), ['series', 'percentiles', 'heatmap']);
  assert.deepEqual(viewsOf('gauge'), ['series']);
  assert.deepEqual(viewsOf('exponential_histogram'), ['series']);
});

test('series are aligned on the union of their times, gaps as null', () => {
  const aligned = alignSeries([
    { label: 'a', points: [['1796205600000000000', 1], ['1796205660000000000', 2]] },
    { label: 'b', points: [['1796205660000000000', 5], ['1796205720000000000', 'NaN']] },
  ]);
  assert.deepEqual(aligned.times, [1796205600, 1796205660, 1796205720]);
  assert.deepEqual(aligned.values, [[1, 2, null], [null, 5, null]]);
  assert.deepEqual(alignSeries([]), { times: [], values: [] });
});

test('labels, summaries and units', () => {
  assert.equal(seriesLabel([{ key: 'service.name', value: 'meter' }, { key: 'queue', value: 'orders' }]),
    'service.name=meter queue=orders');
  assert.equal(seriesLabel([]), '(no attributes)');
  assert.deepEqual(summarize([['1', 3], ['2', 'Infinity'], ['3', 7], ['4', 5]]), { points: 4, min: 3, max: 7, last: 5 });
  assert.deepEqual(summarize([]), { points: 0, min: null, max: null, last: null });
  assert.equal(withUnit(7, '{items}'), '7 items');
  assert.equal(withUnit(0.25, 's'), '0.2500 s');
  assert.equal(withUnit(12345, 'By'), '12,345 By');
  assert.equal(withUnit(3, '1'), '3');
  assert.equal(withUnit(null, 'ms'), '–');
});

test('the SQL quotes the metric name and bounds the window in nanoseconds', () => {
  const sql = heatmapSql("it's.latency", HOUR, 60e9);
  assert.match(sql, /metric_name = 'it''s\.latency'/);
  const ns = (ms: number) => String(BigInt(ms) * 1_000_000n);
  assert.ok(sql.includes(`time_unix_nano >= ${ns(HOUR.startMs)} AND time_unix_nano < ${ns(HOUR.endMs)}`), sql);
  assert.ok(sql.includes(`(time_unix_nano - ${ns(HOUR.startMs)}) // 60000000000`), sql);
  assert.match(sql, /\/\/ 60000000000 AS BIGINT\) AS k/);
  assert.match(detailsSql(HOUR), /GROUP BY metric_name/);
});

test('histogram rows from the SQL answer', () => {
  assert.deepEqual(histogramPoint([3, 'abc', 1, '10.0,50.0', '1,2,0']),
    { k: 3, stream: 'abc', temporality: 1, bounds: [10, 50], counts: [1, 2, 0] });
  assert.deepEqual(histogramPoint([0, 's', 2, null, null]).counts, []);
});

const delta = (k: number, counts: number[], stream = 'a', bounds = [10, 50]): HistogramPoint =>
  ({ k, stream, temporality: 1, bounds, counts });
const cumulative = (k: number, counts: number[], stream = 'a', bounds = [10, 50]): HistogramPoint =>
  ({ k, stream, temporality: 2, bounds, counts });

test('delta points add their counts to their time bucket', () => {
  const map = heatmapCells([delta(0, [1, 2, 0]), delta(0, [0, 1, 1]), delta(2, [4, 0, 0])], 3);
  assert.deepEqual(map.bounds, [10, 50]);
  assert.deepEqual(map.cells, [[1, 3, 1], [0, 0, 0], [4, 0, 0]]);
  assert.equal(map.max, 4);
  assert.equal(map.total, 9);
});

test('cumulative points add their increase; a stream\'s first point and resets as the API counts them', () => {
  const map = heatmapCells([
    cumulative(0, [1, 1, 0]),  // first of stream a: nothing
    cumulative(1, [3, 1, 0]),  // +2 in the first bucket
    cumulative(2, [1, 0, 0]),  // a decrease: a reset, the whole counts
    cumulative(0, [5, 5, 5], 'b'),  // first of stream b: nothing
    cumulative(2, [5, 6, 5], 'b'),  // +1 in the second bucket
  ], 3);
  assert.deepEqual(map.cells, [[0, 0, 0], [2, 0, 0], [1, 1, 0]]);
  assert.equal(map.total, 4);
});

test('points with other bounds than their time bucket\'s first, or outside the window, are left out', () => {
  const map = heatmapCells([
    delta(0, [1, 0, 0]),
    delta(0, [9, 9, 9, 9], 'b', [1, 2, 3]),
    delta(1, [0, 2, 0]),
    delta(-1, [7, 7, 7]),
    delta(5, [7, 7, 7]),
  ], 2);
  assert.deepEqual(map.cells, [[1, 0, 0], [0, 2, 0]]);
  assert.equal(map.total, 3);
  assert.deepEqual(heatmapCells([], 2), { bounds: [], cells: [[0], [0]], max: 0, total: 0 });
});

test('bucket names', () => {
  assert.equal(bucketName([10, 50], 0), '≤ 10');
  assert.equal(bucketName([10, 50], 1), '≤ 50');
  assert.equal(bucketName([10, 50], 2), '> 50');
});
