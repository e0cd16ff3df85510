// Log records as a table that keeps only the rows in view in the page (a
// scroll box of its own, spacer rows above and below), so 10,000 records
// scroll as smoothly as 10. A record's body opens in place into its typed
// body, attributes, resource and a link to its trace.
//
// What a scroll step costs is kept small: the rows are laid out as blocks
// of fixed-width cells (styles.css, table.logs), not by the table
// algorithm over every row in the page; a record's row renders again only
// when what it shows changes (LogRow), so a step renders just the rows
// entering the page; the window holds few rows beyond it (OVERSCAN); and
// no row carries an inline style (rows placed absolutely, each with its
// own `top`, made a step's style recalculation several times dearer in
// Chromium). The elements keep their table roles, written out as the CSS
// lays them out as blocks.

import { Component } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Attributes, Value } from './attributes';
import type { LogRecord } from '../lib/api';
import { oneLine } from '../lib/values';
import { rowWindow } from '../lib/virtual_rows';

const ROW_HEIGHT = 33;
// Rows beyond the window on each side. The window already covers the view
// anywhere within a render step, so these only cover a scroll the
// compositor makes before the page renders the next step.
const OVERSCAN = 5;
// The rows in the page change only when the scroll passes a step of this
// many pixels; the window covers the view anywhere within the step, so
// most scroll frames leave the table's DOM (and its paint) alone.
const LOG_RENDER_STEP = 16 * ROW_HEIGHT;
const SEVERITIES = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

export function severityClass(n: number): string {
  return n >= 1 && n <= 24 ? SEVERITIES[Math.floor((n - 1) / 4)] : 'unspecified';
}

export function LogTable(props: { records: readonly LogRecord[]; formatTime: (nanos: string) => string }) {
  const { records } = props;
  const scroller = useRef<HTMLDivElement>(null);
  // The scroll position rounded down to a LOG_RENDER_STEP.
  const [renderTop, setRenderTop] = useState(0);
  const [viewHeight, setViewHeight] = useState(600);
  // Open records by identity, so rows arriving on top (a live tail) keep
  // the right ones open; their measured detail heights likewise.
  const [open, setOpen] = useState<Set<LogRecord>>(new Set());
  const [heights, setHeights] = useState<Map<LogRecord, number>>(new Map());

  useEffect(() => {
    const element = scroller.current;
    if (!element) return;
    const observer = new ResizeObserver(() => setViewHeight(element.clientHeight));
    observer.observe(element);
    return () => observer.disconnect();
  }, []);

  const openRows = useMemo(() => {
    const index = new Set<number>();
    const height = new Map<number, number>();
    for (const record of open) {
      const i = records.indexOf(record);
      if (i < 0) continue;
      index.add(i);
      const h = heights.get(record);
      if (h !== undefined) height.set(i, h);
    }
    return { index, height };
  }, [records, open, heights]);

  const view = rowWindow({
    count: records.length, rowHeight: ROW_HEIGHT, scrollTop: renderTop, viewHeight: viewHeight + LOG_RENDER_STEP,
    overscan: OVERSCAN,
    open: openRows.index, openHeight: openRows.height, openGuess: 240,
  });

  const measure = (record: LogRecord) => (element: HTMLTableRowElement | null) => {
    if (!element) return;
    const h = element.getBoundingClientRect().height;
    if (Math.abs((heights.get(record) ?? -1) - h) > 0.5) {
      setHeights((previous) => new Map(previous).set(record, h));
    }
  };

  const toggle = useCallback((record: LogRecord) => {
    setOpen((previous) => {
      const next = new Set(previous);
      if (next.has(record)) next.delete(record);
      else next.add(record);
      return next;
    });
  }, []);

  const rows = [];
  for (let i = view.first; i < view.last; i += 1) {
    const record = records[i];
    const expanded = openRows.index.has(i);
    rows.push(
      <LogRow key={`r${i}`} index={i} record={record} expanded={expanded} formatTime={props.formatTime} onToggle={toggle} />,
    );
    if (expanded) {
      rows.push(
        <tr key={`d${i}`} role="row" class="log-detail" ref={measure(record)}>
          <td role="cell" colSpan={4} aria-colspan={4}>
            <h3>Body</h3>
            <Value value={record.body} />
            {record.trace_id && (
              <p>
                <a href={`/traces/${record.trace_id}${record.span_id ? `?span=${record.span_id}` : ''}`}>Open the trace</a>
              </p>
            )}
            <h3>Attributes</h3>
            <Attributes attributes={record.attributes} label="Log attributes" />
            <h3>Resource</h3>
            <Attributes attributes={record.resource_attributes} />
          </td>
        </tr>,
      );
    }
  }

  return (
    <div
      class="log-scroller"
      ref={scroller}
      data-log-table
      onScroll={(event) => {
        const top = (event.target as HTMLDivElement).scrollTop;
        setRenderTop(Math.floor(top / LOG_RENDER_STEP) * LOG_RENDER_STEP);
      }}
    >
      <table role="table" class="data logs" aria-label="Log records" aria-rowcount={records.length + 1}>
        <thead role="rowgroup">
          <tr role="row" aria-rowindex={1}>
            <th role="columnheader" scope="col">Time</th>
            <th role="columnheader" scope="col">Severity</th>
            <th role="columnheader" scope="col">Service</th>
            <th role="columnheader" scope="col">Body</th>
          </tr>
        </thead>
        <tbody role="rowgroup">
          {view.top > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${view.top}px` }} />}
          {rows}
          {view.bottom > 0 && <tr class="spacer" aria-hidden="true" style={{ height: `${view.bottom}px` }} />}
        </tbody>
      </table>
    </div>
  );
}

interface LogRowProps {
  index: number;
  record: LogRecord;
  expanded: boolean;
  formatTime: (nanos: string) => string;
  onToggle: (record: LogRecord) => void;
}

// One record's row. It renders again only when a prop changes, or when its
// own state is set: the signals the time's format reads (the chosen zone)
// set it, and no other state is ever set on it, so a new state object is a
// signal's update.
class LogRow extends Component<LogRowProps> {
  shouldComponentUpdate(next: LogRowProps, nextState: object): boolean {
    const now = this.props;
    return (
      nextState !== this.state || next.index !== now.index || next.record !== now.record ||
      next.expanded !== now.expanded || next.formatTime !== now.formatTime || next.onToggle !== now.onToggle
    );
  }

  render() {
    const { index, record, expanded, formatTime, onToggle } = this.props;
    const severity = severityClass(record.severity_number);
    return (
      <tr role="row" class={`log ${severity}`} aria-rowindex={index + 2}>
        <td role="cell" class="time">{formatTime(record.time_unix_nano)}</td>
        <td role="cell">
          <span class={`severity ${severity}`}>{record.severity_text || severity}</span>
        </td>
        <td role="cell">{record.service_name}</td>
        <td role="cell" class="body">
          <button type="button" class="expand" aria-expanded={expanded} onClick={() => onToggle(record)}>
            {oneLine(record.body)}
          </button>
        </td>
      </tr>
    );
  }
}
