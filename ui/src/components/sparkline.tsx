// A sparkline (lib/sparkline.ts) as a small SVG, described for assistive
// technology by its first, lowest, highest and last values.

import { sparkPoints } from '../lib/sparkline';

export function Sparkline(props: { values: readonly (number | null)[]; label: string; format: (v: number) => string }) {
  const width = 96;
  const height = 22;
  const numbers = props.values.map((v) => v ?? 0);
  const summary = numbers.length
    ? `${props.label}: from ${props.format(numbers[0])} to ${props.format(numbers[numbers.length - 1])}, ` +
      `lowest ${props.format(Math.min(...numbers))}, highest ${props.format(Math.max(...numbers))}`
    : `${props.label}: no points`;
  return (
    <svg class="sparkline" width={width} height={height} viewBox={`-1 -1 ${width + 2} ${height + 2}`} role="img" aria-label={summary}>
      <polyline points={sparkPoints(props.values, width, height)} />
    </svg>
  );
}
