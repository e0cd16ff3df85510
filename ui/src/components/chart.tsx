// A time-series chart (uPlot) that fills its container's width and redraws
// in the theme's colours.

import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import { cssVar } from '../lib/css_var';
import { osScheme, theme } from '../lib/theme';
import { showsUtc } from '../lib/shown_time';

export interface Series {
  label: string;
  values: (number | null)[];
  colour: string;  // a CSS variable name, e.g. '--accent'
}

export function TimeChart(props: {
  title: string;
  times: number[];  // unix seconds
  series: Series[];
  format: (value: number) => string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const themeChoice = `${theme.value}/${osScheme.value}`;  // redraw on a theme change
  const utc = showsUtc();  // and on a change of zone
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const axis = { stroke: cssVar('--muted'), grid: { stroke: cssVar('--line'), width: 1 } };
    const options: uPlot.Options = {
      width: Math.max(200, element.clientWidth),
      height: 180,
      legend: { show: true },
      scales: { x: { time: true } },
      // uPlot draws times in the browser's zone unless told another.
      ...(utc ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts * 1e3), 'Etc/UTC') } : {}),
      axes: [axis, { ...axis, values: (_u, ticks) => ticks.map(props.format), size: 70 }],
      series: [
        {},
        ...props.series.map((s) => ({
          label: s.label,
          stroke: cssVar(s.colour),
          width: 1.5,
          // A lone point between empty steps has no line: mark every point.
          points: { show: true, size: 4 },
          value: (_u: uPlot, v: number | null) => (v === null ? '–' : props.format(v)),
        })),
      ],
    };
    const plot = new uPlot(
      options,
      [props.times, ...props.series.map((s) => s.values)] as uPlot.AlignedData,
      element,
    );
    const resize = new ResizeObserver(() => {
      plot.setSize({ width: Math.max(200, element.clientWidth), height: 180 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.times, props.series, themeChoice, utc]);
  return (
    <figure class="chart">
      <figcaption>{props.title}</figcaption>
      <div ref={box} role="img" aria-label={props.title} />
    </figure>
  );
}
