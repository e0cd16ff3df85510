// Which rows of a long list are in view, for tables that keep only those
// in the page. Rows are `rowHeight` tall, except the open ones (a log
// record's expanded detail), which add their measured height, or
// `openGuess` until measured. Pure: unit-tested with node --test.

export interface RowWindow {
  first: number;   // the first row in the page
  last: number;    // one past the last
  top: number;     // pixels above `first` (a spacer's height)
  bottom: number;  // pixels below `last`
  total: number;   // the whole list's height
}

export function rowWindow(options: {
  count: number;
  rowHeight: number;
  scrollTop: number;
  viewHeight: number;
  overscan: number;
  open: ReadonlySet<number>;
  openHeight: ReadonlyMap<number, number>;
  openGuess: number;
}): RowWindow {
  const { count, rowHeight, scrollTop, viewHeight, overscan } = options;
  const extra = (i: number) => (options.open.has(i) ? options.openHeight.get(i) ?? options.openGuess : 0);
  // The open rows in order, with the extra height above each.
  const opened = [...options.open].filter((i) => i >= 0 && i < count).sort((a, b) => a - b);
  const extraBefore = (row: number) => {
    let sum = 0;
    for (const i of opened) {
      if (i >= row) break;
      sum += extra(i);
    }
    return sum;
  };
  const topOf = (row: number) => row * rowHeight + extraBefore(row);
  const total = topOf(count);
  // The row at a pixel: its plain estimate, then back while it starts
  // below the pixel (open rows above push rows down).
  const rowAt = (pixel: number) => {
    let row = Math.min(count, Math.max(0, Math.floor(pixel / rowHeight)));
    while (row > 0 && topOf(row) > pixel) row -= 1;
    return row;
  };
  const first = Math.max(0, rowAt(Math.max(0, scrollTop)) - overscan);
  const last = Math.min(count, rowAt(scrollTop + viewHeight) + 1 + overscan);
  const top = topOf(first);
  return { first, last, top, bottom: total - topOf(last), total };
}
