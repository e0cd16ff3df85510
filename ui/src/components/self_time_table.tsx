// Per-operation statistics of one trace: spans, total and self time for
// each service and span name, the most self time first.

import { useMemo } from 'preact/hooks';
import { duration } from '../lib/format';
import { operationStats } from '../lib/self_time';
import { type CompactTrace, hue, type SpanTree } from '../lib/trace';

const MAX_ROWS = 1000;

export function SelfTimeTable(props: { trace: CompactTrace; tree: SpanTree }) {
  const stats = useMemo(() => operationStats(props.trace, props.tree), [props.trace, props.tree]);
  const traceSelf = stats.reduce((sum, row) => sum + row.self, 0);
  return (
    <>
      <p class="hint">
        Self time is a span's duration minus the time its children run (their union, clipped to the
        span).{stats.length > MAX_ROWS ? ` The first ${MAX_ROWS} of ${stats.length} operations.` : ''}
      </p>
      <table class="data self-time" aria-label="Self time by operation">
        <thead>
          <tr>
            <th scope="col">Service</th>
            <th scope="col">Operation</th>
            <th scope="col" class="num">Spans</th>
            <th scope="col" class="num">Total</th>
            <th scope="col" class="num">Self time</th>
            <th scope="col" class="num">Share of self time</th>
          </tr>
        </thead>
        <tbody>
          {stats.slice(0, MAX_ROWS).map((row) => (
            <tr>
              <td>
                <span class="service" style={{ '--hue': String(hue(row.service)) }}>
                  {row.service || '(none)'}
                </span>
              </td>
              <td>{row.operation}</td>
              <td class="num">{row.count.toLocaleString('en-US')}</td>
              <td class="num">{duration(String(Math.round(row.total)))}</td>
              <td class="num">{duration(String(Math.round(row.self)))}</td>
              <td class="num">{traceSelf > 0 ? `${((row.self / traceSelf) * 100).toFixed(1)}%` : '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
