// Keyboard shortcuts: what each key does, and when typing keeps them quiet.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GO_KEYS, SHORTCUTS, shortcutFor, typing } from '../src/lib/shortcuts';

test('g then a letter goes to a page; other keys after g do nothing', () => {
  assert.deepEqual(shortcutFor(null, 'g'), { kind: 'prefix' });
  assert.deepEqual(shortcutFor('g', 's'), { kind: 'go', path: '/services' });
  assert.deepEqual(shortcutFor('g', 'l'), { kind: 'go', path: '/logs' });
  assert.equal(shortcutFor('g', 'z'), null);
  assert.equal(shortcutFor('g', 'g'), null);
  // Each page's letter is its own and listed.
  assert.equal(new Set(GO_KEYS.map(([key]) => key)).size, GO_KEYS.length);
  for (const [key] of GO_KEYS) assert.ok(SHORTCUTS.some(([keys]) => keys === `g ${key}`));
});

test('single keys: search, theme, help; the rest nothing', () => {
  assert.deepEqual(shortcutFor(null, '/'), { kind: 'focus-search' });
  assert.deepEqual(shortcutFor(null, 't'), { kind: 'toggle-theme' });
  assert.deepEqual(shortcutFor(null, '?'), { kind: 'help' });
  assert.equal(shortcutFor(null, 's'), null);
  assert.equal(shortcutFor(null, 'Enter'), null);
});

test('no shortcut while typing or with a modifier held', () => {
  const none = { ctrlKey: false, metaKey: false, altKey: false };
  assert.equal(typing({ tagName: 'INPUT', type: 'text' }, none), true);
  assert.equal(typing({ tagName: 'input' }, none), true);
  assert.equal(typing({ tagName: 'INPUT', type: 'search' }, none), true);
  assert.equal(typing({ tagName: 'TEXTAREA' }, none), true);
  assert.equal(typing({ tagName: 'SELECT' }, none), true);
  assert.equal(typing({ tagName: 'DIV', isContentEditable: true }, none), true);
  assert.equal(typing({ tagName: 'INPUT', type: 'checkbox' }, none), false);
  assert.equal(typing({ tagName: 'BUTTON' }, none), false);
  assert.equal(typing({ tagName: 'DIV' }, none), false);
  assert.equal(typing(null, none), false);
  assert.equal(typing({ tagName: 'DIV' }, { ...none, ctrlKey: true }), true);
  assert.equal(typing({ tagName: 'DIV' }, { ...none, metaKey: true }), true);
});
