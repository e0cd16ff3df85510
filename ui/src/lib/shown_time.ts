// The zone the person chose (the `tz` URL parameter) applied to times:
// what pages call to show a time.

import { here } from './location';
import { formatAt, localOffsetMinutes, offsetLabel } from './time_zone';

export function showsUtc(): boolean {
  return here.value.params.get('tz') === 'utc';
}

// The offset of the chosen zone at `ms`, in minutes east of UTC.
export function shownOffset(ms: number): number {
  return showsUtc() ? 0 : localOffsetMinutes(ms);
}

// A time (epoch ms) in the chosen zone, with its offset when asked.
export function showTime(ms: number, withOffset = false): string {
  const offset = shownOffset(ms);
  return withOffset ? `${formatAt(ms, offset)} ${offsetLabel(offset)}` : formatAt(ms, offset);
}

// A time given in nanoseconds as the API sends them (a decimal string).
export function showNanos(nanos: string, withOffset = false): string {
  return showTime(Number(BigInt(nanos) / 1_000_000n), withOffset);
}
