// Saved queries: what a page saves and the link that opens one again.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mayShare, parametersOf, savedQueryUrl } from '../src/lib/saved';

test('a page saves its URL query without the time range, which is saved on its own', () => {
  assert.deepEqual(parametersOf(new URLSearchParams('service=checkout&range=now-6h&status=error')),
    { service: 'checkout', status: 'error' });
  assert.deepEqual(parametersOf(new URLSearchParams('')), {});
});

test('a saved query opens its page with its parameters and its time range', () => {
  assert.equal(savedQueryUrl({ kind: 'traces', parameters: { service: 'checkout', min_duration: '500ms' }, time_range: 'now-1h' }),
    '/traces?service=checkout&min_duration=500ms&range=now-1h');
  assert.equal(savedQueryUrl({ kind: 'sql', parameters: { q: 'SELECT 1 + 1 AS "two & more"' }, time_range: 'now-15m' }),
    '/sql?q=SELECT+1+%2B+1+AS+%22two+%26+more%22&range=now-15m');
  assert.equal(savedQueryUrl({ kind: 'metrics', parameters: { metric: 'ui.queue.depth', view: 'heatmap' },
    time_range: '2026-12-01T00:00:00Z/2026-12-02T00:00:00Z' }),
    '/metrics-explorer?metric=ui.queue.depth&view=heatmap&range=2026-12-01T00%3A00%3A00Z%2F2026-12-02T00%3A00%3A00Z');
  assert.equal(savedQueryUrl({ kind: 'logs', parameters: {}, time_range: '' }), '/logs');
});

test('parameters saved by another client: a saved range never overrides time_range; non-strings as JSON', () => {
  assert.equal(savedQueryUrl({ kind: 'logs', parameters: { range: 'now-7d', severity_min: 17, q: null }, time_range: 'now-1h' }),
    '/logs?severity_min=17&range=now-1h');
  assert.equal(savedQueryUrl({ kind: 'dashboards' as never, parameters: {}, time_range: 'now-1h' }), null);
});

test('operators and admins may share; viewers may not', () => {
  assert.equal(mayShare('admin'), true);
  assert.equal(mayShare('operator'), true);
  assert.equal(mayShare('viewer'), false);
  assert.equal(mayShare(undefined), false);
});
