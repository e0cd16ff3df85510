// Keyboard shortcuts: what a key does, given the key pressed before it
// (`g` then a letter goes to a page). Pure: unit-tested with node --test;
// components/shortcuts.tsx listens and acts.

export type ShortcutAction =
  | { kind: 'go'; path: string }
  | { kind: 'focus-search' }
  | { kind: 'toggle-theme' }
  | { kind: 'help' }
  | { kind: 'prefix' };  // `g`: wait for the next key

export const GO_KEYS: [string, string, string][] = [
  ['s', '/services', 'Services'],
  ['m', '/map', 'Service map'],
  ['t', '/traces', 'Traces'],
  ['l', '/logs', 'Logs'],
  ['x', '/metrics-explorer', 'Metrics'],
  ['q', '/sql', 'SQL'],
  ['v', '/saved', 'Saved queries'],
];

// Every shortcut as the help overlay lists it.
export const SHORTCUTS: [string, string][] = [
  ...GO_KEYS.map(([key, , label]): [string, string] => [`g ${key}`, `Go to ${label}`]),
  ['/', 'Focus the page\'s search'],
  ['t', 'Switch between light and dark'],
  ['?', 'Show these shortcuts'],
  ['Esc', 'Close this list'],
];

// The action of `key` (KeyboardEvent.key) after `previous` (the key
// before it if that was the `g` prefix, else null); null for none.
export function shortcutFor(previous: string | null, key: string): ShortcutAction | null {
  if (previous === 'g') {
    const go = GO_KEYS.find(([k]) => k === key);
    return go ? { kind: 'go', path: go[1] } : null;
  }
  switch (key) {
    case 'g':
      return { kind: 'prefix' };
    case '/':
      return { kind: 'focus-search' };
    case 't':
      return { kind: 'toggle-theme' };
    case '?':
      return { kind: 'help' };
    default:
      return null;
  }
}

// Whether a key event belongs to what the person is typing into (so no
// shortcut fires): text fields, selects, editors, or a modifier held.
export function typing(target: { tagName?: string; isContentEditable?: boolean; type?: string } | null,
  modifiers: { ctrlKey: boolean; metaKey: boolean; altKey: boolean }): boolean {
  if (modifiers.ctrlKey || modifiers.metaKey || modifiers.altKey) return true;
  if (!target) return false;
  if (target.isContentEditable) return true;
  const tag = (target.tagName ?? '').toUpperCase();
  if (tag === 'TEXTAREA' || tag === 'SELECT') return true;
  if (tag !== 'INPUT') return false;
  const type = (target.type ?? 'text').toLowerCase();
  return !['button', 'checkbox', 'radio', 'submit', 'reset', 'range', 'color', 'file'].includes(type);
}
