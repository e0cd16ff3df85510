// Times as the UI shows them: in UTC or in the browser's zone (the `tz`
// URL parameter: `utc`, or absent for local), always with the offset in
// view. Pure apart from the browser's zone offset, which callers pass in:
// unit-tested with node --test.

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

// "UTC", or "UTC+05:45" / "UTC-05:00" for an offset in minutes east.
export function offsetLabel(offsetMinutes: number): string {
  if (offsetMinutes === 0) return 'UTC';
  const sign = offsetMinutes > 0 ? '+' : '-';
  const abs = Math.abs(offsetMinutes);
  return `UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
}

// The browser's offset at `ms`, in minutes east of UTC.
export function localOffsetMinutes(ms: number): number {
  return -new Date(ms).getTimezoneOffset();
}

// "2026-12-04 00:24:30.123" at `offsetMinutes` east of UTC.
export function formatAt(ms: number, offsetMinutes: number, withMillis = true): string {
  const d = new Date(ms + offsetMinutes * 60_000);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  return `${date} ${time}${withMillis ? `.${pad(d.getUTCMilliseconds(), 3)}` : ''}`;
}

// The value of a datetime-local input ("2026-12-04T00:24") for `ms`.
export function inputValueAt(ms: number, offsetMinutes: number): string {
  return formatAt(ms, offsetMinutes, false).slice(0, 16).replace(' ', 'T');
}

// A datetime-local input's value read at `offsetMinutes` east of UTC (the
// offset of that moment for the local zone: `offsetOf`), as epoch ms;
// null when it is not one.
export function parseInputValue(value: string, offsetOf: (approxMs: number) => number): number | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(value);
  if (!m) return null;
  const wall = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], m[6] ? +m[6] : 0);
  if (!Number.isFinite(wall)) return null;
  // The offset at the wall time read as UTC, then at the moment it names
  // (the two differ only across a change of the zone's offset).
  const first = wall - offsetOf(wall) * 60_000;
  return wall - offsetOf(first) * 60_000;
}

// An absolute range for the `range` URL parameter.
export function absoluteRange(startMs: number, endMs: number): string {
  return `${new Date(startMs).toISOString()}/${new Date(endMs).toISOString()}`;
}
