// A table of RED measures (operations or endpoints of a service).

import type { Measures } from '../lib/api';
import { count, duration, percent, rate } from '../lib/format';

export interface MeasuresRow extends Measures {
  key: string;
  label: string;
  kind: string;
}

export function MeasuresTable(props: { caption: string; rows: MeasuresRow[]; empty: string }) {
  if (props.rows.length === 0) {
    return (
      <section>
        <h2>{props.caption}</h2>
        <p class="hint">{props.empty}</p>
      </section>
    );
  }
  return (
    <section>
      <h2>{props.caption}</h2>
      <table class="data" aria-label={props.caption}>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Kind</th>
            <th scope="col" class="num">Rate</th>
            <th scope="col" class="num">Errors</th>
            <th scope="col" class="num">p50</th>
            <th scope="col" class="num">p95</th>
            <th scope="col" class="num">p99</th>
            <th scope="col" class="num">Max</th>
            <th scope="col" class="num">Spans</th>
          </tr>
        </thead>
        <tbody>
          {props.rows.map((row) => (
            <tr key={row.key}>
              <th scope="row">{row.label}</th>
              <td>{row.kind}</td>
              <td class="num">{rate(row.rate)}</td>
              <td class="num">{percent(row.error_rate)}</td>
              <td class="num">{duration(row.p50_nano)}</td>
              <td class="num">{duration(row.p95_nano)}</td>
              <td class="num">{duration(row.p99_nano)}</td>
              <td class="num">{duration(row.max_nano)}</td>
              <td class="num">{count(row.span_count)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
