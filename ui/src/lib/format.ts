// Time ranges and the numbers the UI shows.

// "now-15m", "now-1h", "now-24h", "now-7d" -> milliseconds back from now.
const UNITS: Record<string, number> = { s: 1e3, m: 60e3, h: 3600e3, d: 86400e3, w: 604800e3 };

export interface Window {
  startMs: number;
  endMs: number;
}

// A relative range ("now-<N><s|m|h|d|w>") or an absolute one
// ("<RFC 3339>/<RFC 3339>") as a window ending at `nowMs` for relative
// ones; null when the text is neither.
export function parseRange(text: string, nowMs: number): Window | null {
  const relative = /^now-([1-9][0-9]{0,4})([smhdw])$/.exec(text);
  if (relative) {
    return { startMs: nowMs - Number(relative[1]) * UNITS[relative[2]], endMs: nowMs };
  }
  const parts = text.split('/');
  if (parts.length !== 2) return null;
  const startMs = Date.parse(parts[0]);
  const endMs = Date.parse(parts[1]);
  if (!Number.isFinite(startMs) || !Number.isFinite(endMs) || startMs >= endMs) return null;
  return { startMs, endMs };
}

// Whole minutes (the rollups' resolution): start down, end up.
export function toMinutes(window: Window): Window {
  return {
    startMs: Math.floor(window.startMs / 60e3) * 60e3,
    endMs: Math.ceil(window.endMs / 60e3) * 60e3,
  };
}

// A duration in nanoseconds (a string, as the API sends 64-bit values).
export function duration(nanos: string | null): string {
  if (nanos === null) return '–';
  const n = Number(nanos);
  if (n < 1e3) return `${n} ns`;
  if (n < 1e6) return `${(n / 1e3).toPrecision(3)} µs`;
  if (n < 1e9) return `${(n / 1e6).toPrecision(3)} ms`;
  return `${(n / 1e9).toPrecision(3)} s`;
}

export function rate(perSecond: number | null): string {
  if (perSecond === null) return '–';
  if (perSecond === 0) return '0/s';
  if (perSecond < 0.01) return `${(perSecond * 60).toPrecision(2)}/min`;
  return `${perSecond.toPrecision(3)}/s`;
}

export function percent(fraction: number | null): string {
  if (fraction === null) return '–';
  if (fraction === 0) return '0%';
  return `${(fraction * 100).toPrecision(2)}%`;
}

export function count(n: number): string {
  return n.toLocaleString('en-US');
}

// The API parameters (start, end) of a range, on whole minutes; null when
// the text is not a range.
export function rangeParams(range: string, nowMs: number): URLSearchParams | null {
  const window = parseRange(range, nowMs);
  if (!window) return null;
  const minutes = toMinutes(window);
  return new URLSearchParams({
    start: new Date(minutes.startMs).toISOString(),
    end: new Date(minutes.endMs).toISOString(),
  });
}
