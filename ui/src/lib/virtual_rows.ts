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

// Where each row of a window sits in the whole list (pixels from its top),
// for tables that place their rows absolutely rather than after spacers:
// a row's `top`, and an open row's detail `detailTop` just below it (null
// when the row is not open). The rows follow each other from `view.top`,
// an open one's detail taking its measured height or the guess, as
// rowWindow counts them, so the last row ends where `view.bottom` begins.
export interface PlacedRow {
  index: number;
  top: number;
  detailTop: number | null;
}

export function placeRows(
  view: RowWindow,
  options: {
    rowHeight: number;
    open: ReadonlySet<number>;
    openHeight: ReadonlyMap<number, number>;
    openGuess: number;
  },
): PlacedRow[] {
  const placed: PlacedRow[] = [];
  let top = view.top;
  for (let index = view.first; index < view.last; index += 1) {
    const open = options.open.has(index);
    placed.push({ index, top, detailTop: open ? top + options.rowHeight : null });
    top += options.rowHeight + (open ? options.openHeight.get(index) ?? options.openGuess : 0);
  }
  return placed;
}
