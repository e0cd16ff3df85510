// The canvases' palette is read from the page's styles once per theme,
// not on every paint (each read forces a style recalculation, and the
// waterfall paints every scroll frame), and read again after a switch.

import './fake_theme_dom';
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { palette } from '../src/components/trace_canvas';
import { applyTheme, osScheme } from '../src/lib/theme';
import { styleReads } from './fake_theme_dom';

test('palette is read once per theme and again after a theme switch', () => {
  applyTheme('light');
  const before = styleReads.count;
  const light = palette();
  const perRead = styleReads.count - before;
  assert.ok(perRead > 0);
  assert.equal(light.dark, false);
  assert.equal(light.fg, 'rgb(17, 20, 24)');
  for (let i = 0; i < 100; i += 1) assert.deepEqual(palette(), light);
  assert.equal(styleReads.count - before, perRead, 'repeated paints read no styles');

  applyTheme('dark');
  const dark = palette();
  assert.equal(dark.dark, true);
  assert.equal(dark.fg, 'rgb(240, 243, 246)');
  assert.equal(styleReads.count - before, 2 * perRead);
  palette();
  assert.equal(styleReads.count - before, 2 * perRead);
});

test('palette is read again when the OS switches scheme', () => {
  applyTheme('system');
  palette();
  const before = styleReads.count;
  palette();
  assert.equal(styleReads.count, before);
  osScheme.value += 1;
  palette();
  assert.ok(styleReads.count > before);
});
