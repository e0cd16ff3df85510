// What a key pressed in the waterfall's tree grid does, as the ARIA tree
// grid pattern has it: Up and Down move the selection a row, Home and End
// to the first and last row, Right unfolds a folded span, Left folds an
// unfolded one or else moves to its parent. Pure: unit-tested with
// node --test.

import type { SpanTree } from './trace';

export interface TreeKeyAction {
  select?: number;  // the span to select
  toggle?: number;  // the span to fold or unfold
}

// The action for `key` with `selected` (-1 for none) among `rows` (the
// rows shown, top to bottom); null for a key the tree does not take.
export function treeKey(
  key: string,
  tree: SpanTree,
  rows: readonly number[],
  collapsed: ReadonlySet<number>,
  selected: number,
): TreeKeyAction | null {
  if (rows.length === 0) return null;
  const at = selected < 0 ? -1 : rows.indexOf(selected);
  switch (key) {
    case 'ArrowDown':
      return { select: rows[Math.min(rows.length - 1, at + 1)] };
    case 'ArrowUp':
      return { select: rows[Math.max(0, at < 0 ? 0 : at - 1)] };
    case 'Home':
      return { select: rows[0] };
    case 'End':
      return { select: rows[rows.length - 1] };
    case 'ArrowRight':
      if (at < 0) return { select: rows[0] };
      return tree.children[selected].length > 0 && collapsed.has(selected) ? { toggle: selected } : {};
    case 'ArrowLeft':
      if (at < 0) return { select: rows[0] };
      if (tree.children[selected].length > 0 && !collapsed.has(selected)) return { toggle: selected };
      return tree.parent[selected] >= 0 ? { select: tree.parent[selected] } : {};
    default:
      return null;
  }
}
