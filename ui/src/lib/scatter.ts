// The trace search's duration-over-time scatter: where each trace goes.
// Pure: unit-tested with node --test.

export interface ScatterInput {
  startMs: number;     // the trace's start
  durationMs: number;  // its duration
}

export interface ScatterPoint {
  index: number;  // into the input
  x: number;
  y: number;
}

// x by start within [windowStartMs, windowEndMs] across `width`; y by
// duration on a log scale from the shortest to the longest (the longest at
// the top), across `height` (y grows down), inset by `pad` on every side.
export function scatterPoints(
  traces: readonly ScatterInput[],
  windowStartMs: number,
  windowEndMs: number,
  width: number,
  height: number,
  pad = 6,
): ScatterPoint[] {
  if (traces.length === 0) return [];
  const span = Math.max(1, windowEndMs - windowStartMs);
  const logs = traces.map((t) => Math.log10(Math.max(t.durationMs, 0.001)));
  const low = Math.min(...logs);
  const high = Math.max(...logs);
  const clamp = (v: number) => Math.min(1, Math.max(0, v));
  return traces.map((t, index) => ({
    index,
    x: pad + clamp((t.startMs - windowStartMs) / span) * (width - 2 * pad),
    y: high === low ? height / 2 : pad + (1 - (logs[index] - low) / (high - low)) * (height - 2 * pad),
  }));
}
