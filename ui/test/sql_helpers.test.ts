// The SQL helpers the SQL page lists and completes.

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { SQL_HELPERS } from '../src/lib/sql_helpers';

test('seven helpers in each of the three families, named as docs/sql.md names them', () => {
  assert.equal(SQL_HELPERS.length, 21);
  assert.equal(new Set(SQL_HELPERS.map((h) => h.name)).size, 21);
  for (const family of ['attr', 'resource_attr', 'scope_attr']) {
    for (const suffix of ['', '_str', '_int', '_double', '_bool', '_json']) {
      assert.ok(SQL_HELPERS.some((h) => h.name === `${family}${suffix}`), `${family}${suffix}`);
    }
    assert.equal(SQL_HELPERS.find((h) => h.name === `has_${family}`)?.type, 'BOOLEAN');
  }
  assert.equal(SQL_HELPERS.find((h) => h.name === 'attr_int')?.type, 'BIGINT');
});
