// A histogram's buckets over time on a canvas: one column per time step,
// one row per histogram bucket (the overflow bucket on top), each cell as
// strong as its share of the busiest cell. Redraws on a theme change and
// when its box is resized.

import { useEffect, useRef } from 'preact/hooks';
import { cssVar } from '../lib/css_var';
import { bucketName, type Heatmap } from '../lib/metrics';
import { osScheme, theme } from '../lib/theme';

const HEIGHT = 260;
const LEFT = 70;  // room for bucket names
const BOTTOM = 22;  // room for times

export function HeatmapChart(props: { title: string; heatmap: Heatmap; times: number[]; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const themeChoice = `${theme.value}/${osScheme.value}`;
  useEffect(() => {
    const element = canvas.current;
    if (!element) return;
    const draw = () => {
      const width = Math.max(300, element.parentElement?.clientWidth ?? 600);
      const ratio = window.devicePixelRatio || 1;
      element.width = Math.round(width * ratio);
      element.height = Math.round(HEIGHT * ratio);
      const context = element.getContext('2d');
      if (!context) return;
      context.setTransform(ratio, 0, 0, ratio, 0, 0);
      context.clearRect(0, 0, width, HEIGHT);
      const { bounds, cells, max } = props.heatmap;
      const rows = bounds.length + 1;
      const columns = cells.length;
      const cellWidth = (width - LEFT) / Math.max(1, columns);
      const cellHeight = (HEIGHT - BOTTOM) / rows;
      context.fillStyle = cssVar('--accent');
      for (let k = 0; k < columns; k += 1) {
        cells[k].forEach((n, b) => {
          if (n <= 0 || max <= 0) return;
          // Square root: a bucket with a tenth of the peak still shows.
          context.globalAlpha = 0.12 + 0.88 * Math.sqrt(n / max);
          const y = HEIGHT - BOTTOM - (b + 1) * cellHeight;
          context.fillRect(LEFT + k * cellWidth, y, Math.max(1, cellWidth - 1), Math.max(1, cellHeight - 1));
        });
      }
      context.globalAlpha = 1;
      context.fillStyle = cssVar('--muted');
      context.font = '11px system-ui, sans-serif';
      context.textBaseline = 'middle';
      const every = Math.max(1, Math.ceil(rows / Math.floor((HEIGHT - BOTTOM) / 14)));
      for (let b = 0; b < rows; b += every) {
        context.fillText(bucketName(bounds, b), 4, HEIGHT - BOTTOM - (b + 0.5) * cellHeight);
      }
      context.textBaseline = 'alphabetic';
      const labels = Math.max(1, Math.floor((width - LEFT) / 110));
      const stride = Math.max(1, Math.ceil(columns / labels));
      for (let k = 0; k < columns; k += stride) {
        const time = new Date(props.times[k] * 1e3);
        context.fillText(
          time.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' }),
          LEFT + k * cellWidth,
          HEIGHT - 6,
        );
      }
    };
    draw();
    const resize = new ResizeObserver(draw);
    if (element.parentElement) resize.observe(element.parentElement);
    return () => resize.disconnect();
  }, [props.heatmap, props.times, themeChoice]);
  return (
    <figure class="chart heatmap">
      <figcaption>{props.title}</figcaption>
      <div class="heatmap-box">
        <canvas ref={canvas} height={HEIGHT} role="img" aria-label={props.label} />
      </div>
    </figure>
  );
}
