// Trace search results as a duration-over-time scatter (SVG): each trace a
// point, failed ones in the error colour, each a link to its trace. The
// drawing is laid out at the width the SVG is shown at (followed with a
// ResizeObserver), so points stay round at any width.

import { useEffect, useRef, useState } from 'preact/hooks';
import type { TraceSummary } from '../lib/api';
import { duration } from '../lib/format';
import { scatterPoints } from '../lib/scatter';
import { showNanos } from '../lib/shown_time';

const DEFAULT_WIDTH = 900;
const HEIGHT = 160;

export function TraceScatter(props: { traces: readonly TraceSummary[]; startMs: number; endMs: number }) {
  const svg = useRef<SVGSVGElement>(null);
  const [width, setWidth] = useState(DEFAULT_WIDTH);
  useEffect(() => {
    const element = svg.current;
    if (element === null) return undefined;
    const measure = () => {
      if (element.clientWidth > 0) setWidth(element.clientWidth);
    };
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(element);
    return () => observer.disconnect();
  }, []);
  const input = props.traces.map((t) => ({
    startMs: Number(BigInt(t.start_time_unix_nano) / 1_000_000n),
    durationMs: Number(BigInt(t.duration_nano)) / 1e6,
  }));
  const points = scatterPoints(input, props.startMs, props.endMs, width, HEIGHT);
  const longest = Math.max(...input.map((t) => t.durationMs));
  const shortest = Math.min(...input.map((t) => t.durationMs));
  return (
    <figure class="scatter">
      <figcaption>
        Duration over time: {props.traces.length} traces, {duration(String(Math.round(shortest * 1e6)))} to{' '}
        {duration(String(Math.round(longest * 1e6)))} (log scale, longest on top)
      </figcaption>
      <svg
        ref={svg}
        viewBox={`0 0 ${width} ${HEIGHT}`}
        role="group"
        aria-label="Traces by start and duration"
      >
        {points.map((p) => {
          const trace = props.traces[p.index];
          return (
            <a
              href={`/traces/${trace.trace_id}`}
              aria-label={`${trace.root_service}: ${trace.root_name}, ${duration(trace.duration_nano)}, started ${showNanos(trace.start_time_unix_nano)}`}
            >
              <circle cx={p.x} cy={p.y} r={4} class={trace.error_count > 0 ? 'failed' : undefined} />
            </a>
          );
        })}
      </svg>
    </figure>
  );
}
