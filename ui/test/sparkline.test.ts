// Sparklines: the step for a window, and the line's points.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sparkPoints, sparkStepMinutes } from '../src/lib/sparkline';

test('about thirty whole-minute points over a window, never under a minute', () => {
  assert.equal(sparkStepMinutes(15 * 60_000), 1);
  assert.equal(sparkStepMinutes(60 * 60_000), 2);
  assert.equal(sparkStepMinutes(24 * 3_600_000), 48);
  assert.equal(sparkStepMinutes(7 * 24 * 3_600_000), 336);
  assert.equal(sparkStepMinutes(61 * 60_000), 3);
});

test('the lowest value on the bottom edge, the highest on the top, nulls as zero', () => {
  assert.equal(sparkPoints([0, 5, 10], 100, 20), '0,20 50,10 100,0');
  assert.equal(sparkPoints([2, null, 4], 10, 10), '0,5 5,10 10,0');
  assert.equal(sparkPoints([3, 3], 10, 10), '0,5 10,5');
  assert.equal(sparkPoints([7], 10, 10), '5,5');
  assert.equal(sparkPoints([], 10, 10), '');
});
