// Sparklines: a small line of a series over the window. Pure: unit-tested
// with node --test.

// Whole minutes per point so that a window of `windowMs` has about
// `points` points (at least one minute: the rollups' resolution).
export function sparkStepMinutes(windowMs: number, points = 30): number {
  return Math.max(1, Math.ceil(windowMs / 60_000 / points));
}

// SVG polyline points ("x,y x,y ...") of `values` across `width` × `height`
// (y grows down; the lowest value on the bottom edge, the highest on the
// top; a flat series in the middle); null values count as 0. "" when empty.
export function sparkPoints(values: readonly (number | null)[], width: number, height: number): string {
  if (values.length === 0) return '';
  const v = values.map((x) => (x === null || !Number.isFinite(x) ? 0 : x));
  const low = Math.min(...v);
  const high = Math.max(...v);
  const xAt = (i: number) => (v.length === 1 ? width / 2 : (i * width) / (v.length - 1));
  const yAt = (x: number) => (high === low ? height / 2 : height - ((x - low) / (high - low)) * height);
  return v.map((x, i) => `${+xAt(i).toFixed(1)},${+yAt(x).toFixed(1)}`).join(' ');
}
