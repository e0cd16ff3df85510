// Drawing for the trace page's canvases: the waterfall's bars and time
// axis, the minimap and the flame graph. Each function paints what it is
// given and nothing else; the components decide what is in view.

import { duration } from '../lib/format';
import { tickStep } from '../lib/timeline';
import { hslToRgb, minimapPixels } from '../lib/minimap';
import { type CompactTrace, hue, type SpanTree } from '../lib/trace';
import { cssVar } from '../lib/css_var';
import { osScheme, theme } from '../lib/theme';

// Sizes the canvas's backing store for the device's pixel ratio and
// returns a context drawing in CSS pixels.
export function prepare(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D | null {
  const ratio = window.devicePixelRatio || 1;
  const w = Math.max(1, Math.round(width * ratio));
  const h = Math.max(1, Math.round(height * ratio));
  if (canvas.width !== w) canvas.width = w;
  if (canvas.height !== h) canvas.height = h;
  canvas.style.width = `${width}px`;
  canvas.style.height = `${height}px`;
  const context = canvas.getContext('2d');
  if (!context) return null;
  context.setTransform(ratio, 0, 0, ratio, 0, 0);
  context.clearRect(0, 0, width, height);
  return context;
}

// The theme's colours. Reading them costs a style recalculation per
// variable (the variables hold light-dark(), which only a styled element
// resolves), so they are read once per theme: the cache is keyed by the
// theme choice and the OS scheme counter, and read again when either
// changes. Every paint (each scroll frame) calls this.
export interface Palette {
  dark: boolean;
  fg: string;
  muted: string;
  line: string;
  accent: string;
  bad: string;
  warn: string;
}

let cached: { key: string; colours: Palette } | null = null;

export function palette(): Palette {
  const key = `${theme.peek()}/${osScheme.peek()}`;
  if (cached && cached.key === key) return cached.colours;
  const bg = cssVar('--bg');
  const rgb = /(\d+)\D+(\d+)\D+(\d+)/.exec(bg);
  const dark = rgb ? Number(rgb[1]) + Number(rgb[2]) + Number(rgb[3]) < 384 : false;
  const colours = {
    dark,
    fg: cssVar('--fg'),
    muted: cssVar('--muted'),
    line: cssVar('--line'),
    accent: cssVar('--accent'),
    bad: cssVar('--bad'),
    warn: cssVar('--warn'),
  };
  cached = { key, colours };
  return colours;
}

// A service's bar colour: its hue (the same as its name's in the tree).
export function barColour(service: string): string {
  return `hsl(${hue(service)} 60% 50%)`;
}

// A flame graph box: light enough for dark text in the light theme, dark
// enough for light text in the dark one.
function boxColour(service: string, dark: boolean): string {
  return dark ? `hsl(${hue(service)} 45% 30%)` : `hsl(${hue(service)} 70% 78%)`;
}

// Vertical lines and labels of a time axis `total` ns wide over `width` px.
export function drawAxis(context: CanvasRenderingContext2D, total: number, width: number, height: number, colours: Palette) {
  const step = tickStep(total, Math.max(1, Math.floor(width / 90)));
  context.font = '11px system-ui, sans-serif';
  context.textBaseline = 'middle';
  context.fillStyle = colours.muted;
  context.strokeStyle = colours.line;
  context.lineWidth = 1;
  for (let t = 0; t <= total; t += step) {
    const x = Math.round((t / total) * width) + 0.5;
    context.beginPath();
    context.moveTo(x, height - 6);
    context.lineTo(x, height);
    context.stroke();
    const label = t === 0 ? '0' : duration(String(t));
    const measured = context.measureText(label).width;
    if (x + 3 + measured <= width) context.fillText(label, x + 3, height / 2 - 2);
  }
}

export interface BarMarks {
  selected: number;
  matches: Uint8Array | null;   // span search hits
  critical: Uint8Array | null;  // the critical path, when shown
}

// The bars of rows[first, last) at `rowHeight` px each, the first row's
// top at `top` px (negative when scrolled part-way through it).
export function drawBars(
  context: CanvasRenderingContext2D,
  trace: CompactTrace,
  tree: SpanTree,
  rows: readonly number[],
  first: number,
  last: number,
  top: number,
  rowHeight: number,
  width: number,
  height: number,
  marks: BarMarks,
  colours: Palette,
) {
  const total = Math.max(1, tree.end);
  // Tick lines first, under the bars.
  const step = tickStep(total, Math.max(1, Math.floor(width / 90)));
  context.strokeStyle = colours.line;
  context.lineWidth = 1;
  context.beginPath();
  for (let t = step; t <= total; t += step) {
    const x = Math.round((t / total) * width) + 0.5;
    context.moveTo(x, 0);
    context.lineTo(x, height);
  }
  context.stroke();
  for (let k = first; k < last; k += 1) {
    const span = rows[k];
    const y = top + (k - first) * rowHeight;
    const x = (tree.start[span] / total) * width;
    const w = Math.max(2, (Math.max(0, tree.duration[span]) / total) * width);
    const onPath = marks.critical ? marks.critical[span] === 1 : true;
    context.globalAlpha = onPath ? 1 : 0.3;
    context.fillStyle = barColour(trace.services[trace.spans.service[span]]);
    context.fillRect(x, y + 6, w, rowHeight - 12);
    context.globalAlpha = 1;
    if (marks.critical && onPath) {
      // The path's bars carry an outline in the text colour, readable in
      // both themes whatever the service's hue.
      context.strokeStyle = colours.fg;
      context.lineWidth = 2;
      context.strokeRect(x + 1, y + 5, Math.max(1, w - 2), rowHeight - 10);
    }
    if (trace.spans.status_code[span] === 2) {
      context.fillStyle = colours.bad;
      context.fillRect(x, y + rowHeight - 6, w, 2);
    }
    if (marks.matches && marks.matches[span]) {
      context.fillStyle = colours.warn;
      context.fillRect(Math.max(0, x - 6), y + 8, 4, rowHeight - 16);
    }
  }
}

// Every row as a thin line: x by time, y by its place among `rows`, in its
// service's bar colour (lib/minimap.ts writes the pixels), over the whole
// canvas (`prepare`d, so its backing store is in device pixels).
export function drawMinimap(
  context: CanvasRenderingContext2D,
  trace: CompactTrace,
  tree: SpanTree,
  rows: readonly number[],
  critical: Uint8Array | null,
) {
  const { width, height } = context.canvas;
  const colours = trace.services.map((service) => hslToRgb(hue(service), 60, 50));
  const pixels = minimapPixels({
    tree, rows, width, height, critical, colour: (span) => colours[trace.spans.service[span]],
  });
  context.putImageData(new ImageData(pixels, width, height), 0, 0);
}

// The minimap's window on what the waterfall shows: rows from `from` to
// `to` (fractions of all rows).
export function drawViewport(context: CanvasRenderingContext2D, from: number, to: number, width: number, height: number, colours: Palette) {
  // At least 4 px tall, and kept inside the canvas at the very end.
  const h = Math.min(height, Math.max(4, Math.ceil((to - from) * height)));
  const y = Math.min(Math.floor(from * height), height - h);
  context.fillStyle = colours.accent;
  context.globalAlpha = 0.15;
  context.fillRect(0, y, width, h);
  context.globalAlpha = 1;
  context.strokeStyle = colours.accent;
  context.lineWidth = 2;
  context.strokeRect(1, y + 1, width - 2, Math.max(2, h - 2));
}

// The flame graph's levels [first, last), a level `levelHeight` px tall
// with the first one's top at `top`.
export function drawFlame(
  context: CanvasRenderingContext2D,
  trace: CompactTrace,
  tree: SpanTree,
  byDepth: readonly (readonly number[])[],
  first: number,
  last: number,
  top: number,
  levelHeight: number,
  width: number,
  marks: BarMarks,
  colours: Palette,
) {
  const total = Math.max(1, tree.end);
  context.font = '12px system-ui, sans-serif';
  context.textBaseline = 'middle';
  let selectedBox: [number, number, number] | null = null;
  for (let level = first; level < last && level < byDepth.length; level += 1) {
    const y = top + (level - first) * levelHeight;
    // Spans narrower than a pixel drawn at a pixel already painted add
    // nothing: skip them, so a level of 100,000 spans costs its width.
    let painted = -1;
    for (const span of byDepth[level]) {
      const x = (tree.start[span] / total) * width;
      const w = (Math.max(0, tree.duration[span]) / total) * width;
      if (w < 1 && Math.floor(x) <= painted && span !== marks.selected) continue;
      painted = Math.floor(x + Math.max(1, w));
      const service = trace.services[trace.spans.service[span]];
      const dimmed = (marks.critical && !marks.critical[span]) || (marks.matches && !marks.matches[span]);
      context.globalAlpha = dimmed ? 0.35 : 1;
      context.fillStyle = boxColour(service, colours.dark);
      context.fillRect(x, y + 1, Math.max(1, w - 1), levelHeight - 2);
      context.globalAlpha = 1;
      if (trace.spans.status_code[span] === 2) {
        context.fillStyle = colours.bad;
        context.fillRect(x, y + levelHeight - 4, Math.max(1, w - 1), 3);
      }
      if (span === marks.selected) selectedBox = [x, y, w];
      if (w > 30) {
        const name = trace.names[trace.spans.name[span]];
        context.fillStyle = colours.dark ? '#f0f3f6' : '#111418';
        context.globalAlpha = dimmed ? 0.6 : 1;
        context.save();
        context.beginPath();
        context.rect(x, y, w - 2, levelHeight);
        context.clip();
        context.fillText(name, x + 3, y + levelHeight / 2);
        context.restore();
        context.globalAlpha = 1;
      }
    }
  }
  if (selectedBox) {
    const [x, y, w] = selectedBox;
    context.strokeStyle = colours.fg;
    context.lineWidth = 2;
    context.strokeRect(x + 1, y + 1, Math.max(2, w - 2), levelHeight - 2);
  }
}
