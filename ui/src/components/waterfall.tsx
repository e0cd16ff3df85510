// The trace's waterfall: a tree grid of the rows in view (names, durations;
// what assistive technology reads) beside a canvas that draws their bars,
// a time axis over it, and a minimap of every row above. Only the rows in
// view are in the page and on the canvas, so 100,000 spans scroll as
// smoothly as ten.

import { Component } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { duration } from '../lib/format';
import { osScheme, theme } from '../lib/theme';
import { type CompactTrace, hue, type SpanTree } from '../lib/trace';
import { treeKey } from '../lib/tree_keys';
import { paintOnScroll } from '../lib/paint_on_scroll';
import {
  type BarMarks,
  drawAxis,
  drawBars,
  drawMinimap,
  drawViewport,
  palette,
  prepare,
} from './trace_canvas';

export const ROW_HEIGHT = 24;
const OVERSCAN = 20;
// The tree re-renders when the scroll passes a step of this many rows;
// between steps only the canvas redraws.
const RENDER_STEP = 8;
const AXIS_HEIGHT = 22;
const MINIMAP_HEIGHT = 48;
const DURATION_WIDTH = 80;

export interface WaterfallProps {
  trace: CompactTrace;
  tree: SpanTree;
  rows: number[];
  collapsed: ReadonlySet<number>;
  marks: BarMarks;
  onToggle: (span: number) => void;
  onSelect: (span: number) => void;
}

export function Waterfall(props: WaterfallProps) {
  const { trace, tree, rows, collapsed, marks } = props;
  const scroller = useRef<HTMLDivElement>(null);
  const bars = useRef<HTMLCanvasElement>(null);
  const axis = useRef<HTMLCanvasElement>(null);
  const minimap = useRef<HTMLCanvasElement>(null);
  // The minimap's spans, drawn once per change into a canvas of their own;
  // each scroll only copies it and draws the window.
  const minimapImage = useRef<HTMLCanvasElement | null>(null);
  const [renderTop, setRenderTop] = useState(0);
  const [size, setSize] = useState({ width: 800, height: 600 });
  const latest = useRef(props);
  latest.current = props;
  // The rows' callbacks, the same functions for the component's life, so a
  // row whose own props did not change is not re-rendered (SpanRow).
  const callbacks = useRef<RowCallbacks | null>(null);
  callbacks.current ??= {
    toggle: (span) => latest.current.onToggle(span),
    select: (span) => latest.current.onSelect(span),
  };
  const themeKey = `${theme.value}/${osScheme.value}`;
  const nameWidth = Math.max(256, Math.round(size.width * 0.38));
  const barWidth = Math.max(50, size.width - nameWidth - DURATION_WIDTH);

  // Paints the bars and the minimap's window for the current scroll.
  const paint = () => {
    const element = scroller.current;
    if (!element || !bars.current) return;
    const { trace: t, tree: tr, rows: r, marks: m } = latest.current;
    const colours = palette();
    const top = element.scrollTop;
    const height = element.clientHeight;
    const first = Math.floor(top / ROW_HEIGHT);
    const last = Math.min(r.length, Math.ceil((top + height) / ROW_HEIGHT));
    const context = prepare(bars.current, barWidth, height);
    if (context) {
      drawBars(context, t, tr, r, first, last, first * ROW_HEIGHT - top, ROW_HEIGHT, barWidth, height, m, colours);
    }
    const map = minimap.current;
    const image = minimapImage.current;
    if (map && image) {
      const mapContext = prepare(map, size.width, MINIMAP_HEIGHT);
      if (mapContext) {
        mapContext.drawImage(image, 0, 0, size.width, MINIMAP_HEIGHT);
        const all = Math.max(1, r.length * ROW_HEIGHT);
        drawViewport(mapContext, top / all, Math.min(1, (top + height) / all), size.width, MINIMAP_HEIGHT, colours);
      }
    }
  };

  // The real size before the first paint (the observer reports it a
  // frame later), so the first bars drawn are already in place.
  useLayoutEffect(() => {
    const element = scroller.current;
    if (element) setSize({ width: element.clientWidth, height: element.clientHeight });
  }, []);

  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    return paintOnScroll(
      element,
      paint,
      () => setSize({ width: element.clientWidth, height: element.clientHeight }),
      () => setRenderTop(Math.floor(element.scrollTop / (ROW_HEIGHT * RENDER_STEP)) * ROW_HEIGHT * RENDER_STEP),
    );
  }, [size.width]);

  // The minimap's spans and the axis change with the rows, size and theme.
  useLayoutEffect(() => {
    const image = minimapImage.current ?? document.createElement('canvas');
    minimapImage.current = image;
    const colours = palette();
    const mapContext = prepare(image, size.width, MINIMAP_HEIGHT);
    if (mapContext) drawMinimap(mapContext, trace, tree, rows, marks.critical);
    if (axis.current) {
      const context = prepare(axis.current, barWidth, AXIS_HEIGHT);
      if (context) drawAxis(context, Math.max(1, tree.end), barWidth, AXIS_HEIGHT, colours);
    }
  }, [trace, tree, rows, marks.critical, size.width, barWidth, themeKey]);

  // Everything else repaints when what it shows changes. A render for a
  // scroll step alone leaves the bars to the scroll's own frame (paintOnScroll):
  // painting here as well drew them twice in that frame.
  useLayoutEffect(paint, [trace, tree, rows, marks, size.width, size.height, barWidth, themeKey]);

  // A selected span out of view (a search step, a deep link) is scrolled to.
  useEffect(() => {
    const element = scroller.current;
    const at = marks.selected < 0 ? -1 : rows.indexOf(marks.selected);
    if (!element || at < 0) return;
    const y = at * ROW_HEIGHT;
    if (y < element.scrollTop || y + ROW_HEIGHT > element.scrollTop + element.clientHeight) {
      element.scrollTop = Math.max(0, y - element.clientHeight / 2);
    }
  }, [marks.selected, rows]);

  // The minimap scrolls the waterfall to where it is pressed or dragged.
  const scrollToMinimap = (event: PointerEvent) => {
    const element = scroller.current;
    const map = minimap.current;
    if (!element || !map) return;
    const fraction = (event.clientY - map.getBoundingClientRect().top) / MINIMAP_HEIGHT;
    const all = rows.length * ROW_HEIGHT;
    element.scrollTop = Math.max(0, fraction * all - element.clientHeight / 2);
  };

  const first = Math.max(0, Math.floor(renderTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(rows.length, Math.ceil((renderTop + size.height) / ROW_HEIGHT) + RENDER_STEP + OVERSCAN);
  const total = Math.max(1, tree.end);
  return (
    <div class="waterfall-frame" style={{ '--name-width': `${nameWidth}px`, '--duration-width': `${DURATION_WIDTH}px` }}>
      <canvas
        ref={minimap}
        class="trace-minimap"
        role="img"
        aria-label={`Overview of all ${rows.length.toLocaleString('en-US')} rows; press or drag to scroll there`}
        onPointerDown={(event) => {
          (event.target as HTMLCanvasElement).setPointerCapture(event.pointerId);
          scrollToMinimap(event);
        }}
        onPointerMove={(event) => {
          if ((event.target as HTMLCanvasElement).hasPointerCapture(event.pointerId)) scrollToMinimap(event);
        }}
      />
      <div class="waterfall-axis" aria-hidden="true">
        <canvas ref={axis} />
      </div>
      <div class="waterfall-view">
        <div
          class="waterfall"
          ref={scroller}
          role="treegrid"
          aria-label="Spans"
          aria-rowcount={rows.length}
          tabIndex={0}
          onKeyDown={(event) => {
            if (event.target !== event.currentTarget) return;  // a fold button's own keys
            const action = treeKey(event.key, tree, rows, collapsed, marks.selected);
            if (!action) return;
            event.preventDefault();
            if (action.toggle !== undefined) props.onToggle(action.toggle);
            if (action.select !== undefined) props.onSelect(action.select);
          }}
        >
          <div style={{ height: `${rows.length * ROW_HEIGHT}px`, position: 'relative' }}>
            {spanRows(props, first, last, total, callbacks.current)}
          </div>
        </div>
        <canvas ref={bars} class="waterfall-bars" aria-hidden="true" />
      </div>
    </div>
  );
}

// The tree's rows [first, last). A scroll step adds and drops a few rows
// at the ends; the rest keep their props and are not re-rendered.
function spanRows(props: WaterfallProps, first: number, last: number, total: number, callbacks: RowCallbacks) {
  const { trace, tree, rows, collapsed, marks } = props;
  const out = [];
  for (let index = first; index < last; index += 1) {
    const span = rows[index];
    out.push(
      <SpanRow
        key={span}
        trace={trace}
        tree={tree}
        span={span}
        index={index}
        total={total}
        expanded={!collapsed.has(span)}
        selected={span === marks.selected}
        match={marks.matches !== null && marks.matches[span] === 1}
        critical={marks.critical !== null && marks.critical[span] === 1}
        callbacks={callbacks}
      />,
    );
  }
  return out;
}

interface RowCallbacks {
  toggle: (span: number) => void;
  select: (span: number) => void;
}

interface SpanRowProps {
  trace: CompactTrace;
  tree: SpanTree;
  span: number;
  index: number;
  total: number;
  expanded: boolean;
  selected: boolean;
  match: boolean;
  critical: boolean;
  callbacks: RowCallbacks;
}

// One row of the tree. Its props are all primitives or shared objects, so
// a shallow comparison says whether it would render differently. It reads
// no signal: its own shouldComponentUpdate replaces the one @preact/signals
// gives every component, which re-renders on a signal's change.
class SpanRow extends Component<SpanRowProps> {
  shouldComponentUpdate(next: SpanRowProps) {
    const now = this.props;
    return (
      next.span !== now.span || next.index !== now.index || next.expanded !== now.expanded ||
      next.selected !== now.selected || next.match !== now.match || next.critical !== now.critical ||
      next.trace !== now.trace || next.tree !== now.tree || next.total !== now.total ||
      next.callbacks !== now.callbacks
    );
  }

  render() {
    return spanRow(this.props);
  }
}

function spanRow(props: SpanRowProps) {
  const { trace, tree, span, selected, match, critical, callbacks } = props;
  const service = trace.services[trace.spans.service[span]];
  const hasChildren = tree.children[span].length > 0;
  const failed = trace.spans.status_code[span] === 2;
  const classes = ['span-row'];
  if (selected) classes.push('selected');
  if (failed) classes.push('failed');
  if (match) classes.push('match');
  return (
    <div
      role="row"
      aria-rowindex={props.index + 1}
      aria-level={tree.depth[span] + 1}
      aria-expanded={hasChildren ? props.expanded : undefined}
      aria-selected={selected}
      class={classes.join(' ')}
      style={{ top: `${props.index * ROW_HEIGHT}px` }}
      onClick={() => callbacks.select(span)}
    >
      <div role="gridcell" class="span-name" style={{ paddingLeft: `${tree.depth[span] * 14 + 4}px` }}>
        {hasChildren ? (
          <button
            type="button"
            class="toggle"
            aria-label={props.expanded ? 'Collapse' : 'Expand'}
            onClick={(event) => {
              event.stopPropagation();
              callbacks.toggle(span);
            }}
          >
            {props.expanded ? '▾' : '▸'}
          </button>
        ) : (
          <span class="toggle" />
        )}
        <span class="service" style={{ '--hue': String(hue(service)) }}>
          {service || '(none)'}
        </span>{' '}
        {trace.names[trace.spans.name[span]]}
      </div>
      {/* The bar is on the canvas; this cell says where it starts. */}
      <div
        role="gridcell"
        class="span-when"
        aria-label={`starts at ${duration(String(tree.start[span]))}${match ? ', matches the search' : ''}${
          critical ? ', on the critical path' : ''
        }`}
      />
      <div role="gridcell" class="span-duration">
        {duration(String(tree.duration[span]))}
      </div>
    </div>
  );
}
