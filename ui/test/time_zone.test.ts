// Times in UTC or at an offset, the offset's label, and the custom range's
// inputs read back in the chosen zone.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseRange } from '../src/lib/format';
import { absoluteRange, formatAt, inputValueAt, offsetLabel, parseInputValue } from '../src/lib/time_zone';

const ms = Date.UTC(2026, 11, 3, 23, 50, 7, 42);  // 2026-12-03T23:50:07.042Z

test('offsets are labelled with sign, hours and minutes', () => {
  assert.equal(offsetLabel(0), 'UTC');
  assert.equal(offsetLabel(345), 'UTC+05:45');
  assert.equal(offsetLabel(-300), 'UTC-05:00');
  assert.equal(offsetLabel(-570), 'UTC-09:30');
});

test('a time is written at an offset, across midnight and a year end', () => {
  assert.equal(formatAt(ms, 0), '2026-12-03 23:50:07.042');
  assert.equal(formatAt(ms, 345), '2026-12-04 05:35:07.042');
  assert.equal(formatAt(ms, -300), '2026-12-03 18:50:07.042');
  assert.equal(formatAt(Date.UTC(2026, 11, 31, 22, 0), 120, false), '2027-01-01 00:00:00');
});

test('custom range inputs read back to the same moment in the zone they were written in', () => {
  for (const offset of [0, 345, -300]) {
    const value = inputValueAt(ms, offset);
    const back = parseInputValue(value, () => offset);
    assert.equal(back, Math.floor(ms / 60_000) * 60_000, `${offset}: ${value}`);
  }
  assert.equal(inputValueAt(ms, 345), '2026-12-04T05:35');
  assert.equal(parseInputValue('2026-12-04T05:35:30', () => 345), Date.UTC(2026, 11, 3, 23, 50, 30));
  assert.equal(parseInputValue('', () => 0), null);
  assert.equal(parseInputValue('2026-12-04 05:35', () => 0), null);
  // A zone whose offset changes (from +60 to +120 at 01:00 UTC): the
  // offset of the moment named, not of the wall time read as UTC.
  const change = Date.UTC(2026, 2, 29, 1, 0);
  const offsetOf = (t: number) => (t < change ? 60 : 120);
  assert.equal(parseInputValue('2026-03-29T04:00', offsetOf), Date.UTC(2026, 2, 29, 2, 0));
  assert.equal(parseInputValue('2026-03-29T01:30', offsetOf), Date.UTC(2026, 2, 29, 0, 30));
});

test('an absolute range goes into the URL and back as the same window', () => {
  const range = absoluteRange(ms, ms + 3_600_000);
  assert.equal(range, '2026-12-03T23:50:07.042Z/2026-12-04T00:50:07.042Z');
  assert.deepEqual(parseRange(range, 0), { startMs: ms, endMs: ms + 3_600_000 });
});
