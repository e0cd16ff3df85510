// Log records as a table that keeps only the rows in view in the page (a
// scroll box of its own), so 10,000 records scroll as smoothly as 10. A
// record's body opens in place into its typed body, attributes, resource
// and a link to its trace.
//
// The rows are placed absolutely at their offset in the whole list (the
// body is as tall as the whole list), each record row a fixed 33 px box
// whose layout and paint are contained (styles.css, table.logs): rows that
// enter the page on a scroll step are laid out, painted and rastered on
// their own, and the rows already there are left alone, where a table
// layout with spacer rows re-laid out and repainted every row in the page.
// The elements keep their table roles (explicit, as the CSS lays them out
// as blocks) and aria-rowcount / aria-rowindex say where a row is.

import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Attributes, Value } from './attributes';
import type { LogRecord } from '../lib/api';
import { oneLine } from '../lib/values';
import { placeRows, rowWindow } from '../lib/virtual_rows';

const ROW_HEIGHT = 33;
const OVERSCAN = 15;
// The rows in the page change only when the scroll passes a step of this
// many pixels; the window covers the view anywhere within the step, so
// most scroll frames leave the table's DOM (and its paint) alone.
const LOG_RENDER_STEP = 16 * ROW_HEIGHT;
// An open record's detail height until it is measured.
const OPEN_GUESS = 240;
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
    open: openRows.index, openHeight: openRows.height, openGuess: OPEN_GUESS,
  });

  const onHeight = useCallback((record: LogRecord, h: number) => {
    setHeights((previous) => (Math.abs((previous.get(record) ?? -1) - h) > 0.5 ? new Map(previous).set(record, h) : previous));
  }, []);
  const toggle = useCallback((record: LogRecord) => {
    setOpen((previous) => {
      const next = new Set(previous);
      if (next.has(record)) next.delete(record);
      else next.add(record);
      return next;
    });
  }, []);

  const rows = [];
  const placed = placeRows(view, {
    rowHeight: ROW_HEIGHT, open: openRows.index, openHeight: openRows.height, openGuess: OPEN_GUESS,
  });
  for (const { index: i, top, detailTop } of placed) {
    const record = records[i];
    const expanded = detailTop !== null;
    const severity = severityClass(record.severity_number);
    rows.push(
      <tr key={`r${i}`} role="row" class={`log ${severity}`} aria-rowindex={i + 2} style={{ top: `${top}px` }}>
        <td role="cell" class="time">{props.formatTime(record.time_unix_nano)}</td>
        <td role="cell">
          <span class={`severity ${severity}`}>{record.severity_text || severity}</span>
        </td>
        <td role="cell">{record.service_name}</td>
        <td role="cell" class="body">
          <button type="button" class="expand" aria-expanded={expanded} onClick={() => toggle(record)}>
            {oneLine(record.body)}
          </button>
        </td>
      </tr>,
    );
    if (detailTop !== null) {
      rows.push(<LogDetail key={`d${i}`} record={record} top={detailTop} onHeight={onHeight} />);
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
        <tbody role="rowgroup" style={{ height: `${view.total}px` }}>
          {rows}
        </tbody>
      </table>
    </div>
  );
}

// An open record's detail row, placed at `top`; it reports its height when
// it is first laid out and whenever it changes (a ResizeObserver, so no
// render reads layout).
function LogDetail(props: { record: LogRecord; top: number; onHeight: (record: LogRecord, h: number) => void }) {
  const { record, onHeight } = props;
  const element = useRef<HTMLTableRowElement>(null);
  useEffect(() => {
    const row = element.current;
    if (!row) return;
    const observer = new ResizeObserver((entries) => {
      const box = entries[entries.length - 1].borderBoxSize?.[0];
      onHeight(record, box ? box.blockSize : row.getBoundingClientRect().height);
    });
    observer.observe(row);
    return () => observer.disconnect();
  }, [record, onHeight]);
  return (
    <tr role="row" class="log-detail" ref={element} style={{ top: `${props.top}px` }}>
      <td role="cell" aria-colspan={4} colSpan={4}>
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
    </tr>
  );
}
