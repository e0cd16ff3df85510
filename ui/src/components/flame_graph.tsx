// The trace as a flame graph on a canvas: one level per depth, each span a
// box placed by its start and as wide as its duration. Only the levels in
// view are drawn; a click selects the span under the pointer, and with the
// graph focused the arrow keys, Home and End move the selection
// (timeline.ts, flameKey).

import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import { osScheme, theme } from '../lib/theme';
import { flameKey, levels, spanAt } from '../lib/timeline';
import type { CompactTrace, SpanTree } from '../lib/trace';
import { type BarMarks, drawAxis, drawFlame, palette, prepare } from './trace_canvas';
import { paintOnScroll } from '../lib/paint_on_scroll';

const LEVEL_HEIGHT = 20;
const AXIS_HEIGHT = 22;

export function FlameGraph(props: {
  trace: CompactTrace;
  tree: SpanTree;
  marks: BarMarks;
  onSelect: (span: number) => void;
}) {
  const { trace, tree, marks } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const canvas = useRef<HTMLCanvasElement>(null);
  const axis = useRef<HTMLCanvasElement>(null);
  const byDepth = useMemo(() => levels(tree), [tree]);
  const [width, setWidth] = useState(800);
  const latest = useRef(props);
  latest.current = props;
  const themeKey = `${theme.value}/${osScheme.value}`;
  const fullHeight = byDepth.length * LEVEL_HEIGHT;
  const viewHeight = Math.min(fullHeight, Math.max(200, window.innerHeight - 300));

  const paint = () => {
    const element = scroller.current;
    if (!element || !canvas.current) return;
    const top = element.scrollTop;
    const first = Math.floor(top / LEVEL_HEIGHT);
    const last = Math.ceil((top + viewHeight) / LEVEL_HEIGHT);
    const context = prepare(canvas.current, width, viewHeight);
    const { trace: t, tree: tr, marks: m } = latest.current;
    if (context) drawFlame(context, t, tr, byDepth, first, last, first * LEVEL_HEIGHT - top, LEVEL_HEIGHT, width, m, palette());
  };

  useLayoutEffect(() => {
    if (scroller.current) setWidth(scroller.current.clientWidth);
  }, []);

  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    return paintOnScroll(element, paint, () => setWidth(element.clientWidth));
  }, [width, viewHeight, byDepth]);

  useLayoutEffect(() => {
    if (!axis.current) return;
    const context = prepare(axis.current, width, AXIS_HEIGHT);
    if (context) drawAxis(context, Math.max(1, tree.end), width, AXIS_HEIGHT, palette());
  }, [tree, width, themeKey]);

  useLayoutEffect(paint);

  const onClick = (event: MouseEvent) => {
    const element = scroller.current;
    if (!element || !canvas.current) return;
    const box = canvas.current.getBoundingClientRect();
    const level = Math.floor((event.clientY - box.top + element.scrollTop) / LEVEL_HEIGHT);
    if (level < 0 || level >= byDepth.length) return;
    const nsPerPixel = Math.max(1, tree.end) / width;
    const span = spanAt(tree, byDepth[level], (event.clientX - box.left) * nsPerPixel, 2 * nsPerPixel);
    if (span >= 0) props.onSelect(span);
  };

  const onKeyDown = (event: KeyboardEvent) => {
    const element = scroller.current;
    const next = flameKey(tree, byDepth, marks.selected, event.key);
    if (next === null || !element) return;
    event.preventDefault();
    if (next < 0 || next === marks.selected) return;
    // The new box's level in view.
    const top = tree.depth[next] * LEVEL_HEIGHT;
    if (top < element.scrollTop) element.scrollTop = top;
    else if (top + LEVEL_HEIGHT > element.scrollTop + viewHeight) element.scrollTop = top + LEVEL_HEIGHT - viewHeight;
    props.onSelect(next);
  };

  return (
    <div class="flame-frame">
      <div class="flame-axis" aria-hidden="true">
        <canvas ref={axis} />
      </div>
      <div class="flame" ref={scroller} style={{ height: `${viewHeight}px` }} tabIndex={0}
        aria-label="Flame graph levels: arrow keys, Home and End move the selection" onKeyDown={onKeyDown}>
        <canvas
          ref={canvas}
          class="flame-canvas"
          role="img"
          aria-label={`Flame graph of ${trace.span_count.toLocaleString('en-US')} spans over ${byDepth.length} levels; select a box to see its span`}
          onClick={onClick}
        />
        <div style={{ height: `${fullHeight - viewHeight}px` }} />
      </div>
    </div>
  );
}
