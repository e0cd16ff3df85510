// The trace scatter's placement.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { scatterPoints } from '../src/lib/scatter';

test('start places x in the window, duration places y on a log scale, longest on top', () => {
  const points = scatterPoints(
    [{ startMs: 1_000, durationMs: 1 }, { startMs: 1_500, durationMs: 100 }, { startMs: 2_000, durationMs: 10 }],
    1_000, 2_000, 112, 62, 6,
  );
  assert.deepEqual(points.map((p) => p.x), [6, 56, 106]);
  assert.deepEqual(points.map((p) => p.y), [56, 6, 31]);
  assert.deepEqual(points.map((p) => p.index), [0, 1, 2]);
});

test('outside the window clamps to its edges; equal durations sit in the middle; none is empty', () => {
  const points = scatterPoints([{ startMs: 0, durationMs: 5 }, { startMs: 9_000, durationMs: 5 }], 1_000, 2_000, 112, 62, 6);
  assert.deepEqual(points.map((p) => [p.x, p.y]), [[6, 31], [106, 31]]);
  assert.deepEqual(scatterPoints([], 0, 1, 10, 10), []);
  // A zero duration does not break the log scale.
  const zero = scatterPoints([{ startMs: 0, durationMs: 0 }, { startMs: 0, durationMs: 1 }], 0, 1, 12, 12, 1);
  assert.deepEqual(zero.map((p) => p.y), [11, 1]);
});
