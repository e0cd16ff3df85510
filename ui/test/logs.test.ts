// The log table's window of rows in view, and the live tail's buffer.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rowWindow } from '../src/lib/virtual_rows';
import { TailBuffer } from '../src/lib/tail_buffer';

const base = { rowHeight: 30, viewHeight: 300, overscan: 0, open: new Set<number>(), openHeight: new Map<number, number>(), openGuess: 200 };

test('only the rows in view (and the overscan) are in the window; spacers make up the rest', () => {
  const w = rowWindow({ ...base, count: 10_000, scrollTop: 3_000 });
  assert.deepEqual([w.first, w.last], [100, 111]);
  assert.equal(w.top, 3_000);
  assert.equal(w.total, 300_000);
  assert.equal(w.top + (w.last - w.first) * 30 + w.bottom, w.total);
  const over = rowWindow({ ...base, count: 10_000, scrollTop: 3_000, overscan: 5 });
  assert.deepEqual([over.first, over.last], [95, 116]);
  // The ends clamp.
  const start = rowWindow({ ...base, count: 10_000, scrollTop: 0, overscan: 5 });
  assert.deepEqual([start.first, start.top], [0, 0]);
  const end = rowWindow({ ...base, count: 50, scrollTop: 5_000 });
  assert.deepEqual([end.last, end.bottom], [50, 0]);
  const empty = rowWindow({ ...base, count: 0, scrollTop: 0 });
  assert.deepEqual([empty.first, empty.last, empty.total], [0, 0, 0]);
});

test('open rows push the rows below them down by their measured height, or the guess', () => {
  const open = new Set([2, 50]);
  const openHeight = new Map([[2, 120]]);
  const w = rowWindow({ ...base, count: 1_000, scrollTop: 3_000, open, openHeight });
  // Rows above 3,000 px: 2 opened by 120 px, 50 by the 200 px guess.
  assert.equal(w.total, 1_000 * 30 + 120 + 200);
  assert.equal(w.first, Math.floor((3_000 - 120 - 200) / 30));
  assert.ok(w.top <= 3_000 && w.top + 30 > 3_000 - 30, String(w.top));
  assert.equal(w.top, w.first * 30 + 320);
  // Between the two: only the first counts.
  const mid = rowWindow({ ...base, count: 1_000, scrollTop: 600, open, openHeight });
  assert.equal(mid.first, Math.floor((600 - 120) / 30));
  assert.equal(mid.top, mid.first * 30 + 120);
  assert.equal(mid.top + (mid.last - mid.first) * 30 + (mid.last > 50 ? 200 : 0) + mid.bottom, mid.total);
});

test('the tail shows the newest first and keeps at most its bound', () => {
  const tail = new TailBuffer<number>(3, 2);
  tail.add(1);
  tail.add(2);
  tail.addAll([3, 4]);
  assert.deepEqual(tail.shown, [4, 3, 2]);
  tail.addAll([5, 6, 7, 8]);
  assert.deepEqual(tail.shown, [8, 7, 6]);
});

test('paused, records wait (bounded, the rest counted) and resume shows them in order', () => {
  const tail = new TailBuffer<number>(10, 2);
  tail.add(1);
  tail.pause();
  tail.add(2);
  tail.addAll([3, 4]);
  assert.deepEqual(tail.shown, [1]);
  assert.equal(tail.waiting, 3);
  assert.equal(tail.paused, true);
  assert.equal(tail.resume(), 1);
  assert.deepEqual(tail.shown, [3, 2, 1]);
  assert.equal(tail.waiting, 0);
  tail.add(5);
  assert.deepEqual(tail.shown, [5, 3, 2, 1]);
  tail.clear();
  assert.deepEqual([tail.shown.length, tail.waiting, tail.missed], [0, 0, 0]);
});
