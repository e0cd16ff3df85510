// The trace minimap's pixels: every row of the waterfall as a thin line,
// x by time, y by its place among the rows, in its service's colour,
// written straight into an RGBA buffer (for putImageData) rather than
// drawn with one fillRect per row: a 50,000-span trace cost 150 ms of
// canvas calls a draw, this a few ms. Pure: unit-tested with node --test.
//
// Where rows share a pixel, the later row wins, as it would drawn on top;
// with the critical path shown, rows on it win over the others, which are
// drawn at 30% opacity where nothing on the path is. Rows are visited
// last first and each pixel is written once: a pixel row keeps, for each
// x, the next x not yet written (a union-find with path halving), so a
// pixel row costs its width whatever the number of rows in it.

import type { SpanTree } from './trace';

// The RGB bytes of hsl(h s% l%) (CSS's formula).
export function hslToRgb(h: number, s: number, l: number): [number, number, number] {
  const a = (s / 100) * Math.min(l / 100, 1 - l / 100);
  const channel = (n: number) => {
    const k = (n + h / 30) % 12;
    return Math.round(255 * (l / 100 - a * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [channel(0), channel(8), channel(4)];
}

export function minimapPixels(options: {
  tree: SpanTree;
  rows: readonly number[];
  // Each span's colour as [r, g, b].
  colour: (span: number) => readonly [number, number, number];
  width: number;   // device pixels
  height: number;  // device pixels
  critical: Uint8Array | null;
}): Uint8ClampedArray<ArrayBuffer> {
  const { tree, rows, colour, width, height, critical } = options;
  const pixels = new Uint8ClampedArray(width * height * 4);
  const n = rows.length;
  if (n === 0 || width <= 0 || height <= 0) return pixels;
  const total = Math.max(1, tree.end);
  const stride = width + 1;
  // next[y * stride + x]: an x' >= x to look at for the first free pixel
  // of pixel row y at or after x (width when none is left).
  const next = new Int32Array(height * stride);
  for (let y = 0; y < height; y += 1) {
    for (let x = 0; x <= width; x += 1) next[y * stride + x] = x;
  }
  const free = (base: number, x: number) => {
    while (next[base + x] !== x) {
      next[base + x] = next[base + next[base + x]];
      x = next[base + x];
    }
    return x;
  };
  const paint = (dimmed: boolean) => {
    for (let k = n - 1; k >= 0; k -= 1) {
      const span = rows[k];
      if ((critical !== null && critical[span] !== 1) !== dimmed) continue;
      const y0 = Math.floor((k * height) / n);
      const y1 = Math.min(height, Math.max(y0 + 1, Math.floor(((k + 1) * height) / n)));
      const left = (tree.start[span] / total) * width;
      const x0 = Math.max(0, Math.min(width - 1, Math.floor(left)));
      const x1 = Math.min(width, Math.max(x0 + 1, Math.round(left + (Math.max(0, tree.duration[span]) / total) * width)));
      const [r, g, b] = colour(span);
      const alpha = dimmed ? 77 : 255;
      for (let y = y0; y < y1; y += 1) {
        const base = y * stride;
        for (let x = free(base, x0); x < x1; x = free(base, x + 1)) {
          const at = (y * width + x) * 4;
          pixels[at] = r;
          pixels[at + 1] = g;
          pixels[at + 2] = b;
          pixels[at + 3] = alpha;
          next[base + x] = x + 1;
        }
      }
    }
  };
  paint(false);
  if (critical !== null) paint(true);
  return pixels;
}
