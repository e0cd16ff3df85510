// strata's TraceQL parser against Grafana's TraceQL grammar
// (@grafana/lezer-traceql, the grammar Grafana's query editor checks
// queries with): for every query of traceql_corpus.json, both must agree on
// whether it is TraceQL. Grafana's side is computed here, from its parser
// (a tree with no error node accepts); strata's from the traceql_syntax
// program, which answers "ok", "unsupported ..." (TraceQL strata refuses
// by name, still TraceQL) or "error ...".
//
// STRATA_TRACEQL_SYNTAX: the program (default build/release's).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parser } from '@grafana/lezer-traceql';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const program = process.env.STRATA_TRACEQL_SYNTAX ??
  path.join(root, 'build/release/src/compat/traceql/traceql_syntax');
const corpus = JSON.parse(fs.readFileSync(path.join(here, 'traceql_corpus.json'), 'utf8'));

function grafanaAccepts(query) {
  let error = false;
  parser.parse(query).iterate({ enter: (node) => { if (node.type.isError) error = true; } });
  return !error;
}

function strataAnswers(queries) {
  const input = queries.map((q) => Buffer.from(q, 'utf8').toString('hex')).join('\n') + '\n';
  const run = spawnSync(program, [], { input, encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, `${program} failed: ${run.stderr}`);
  const lines = run.stdout.split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, queries.length);
  return lines;
}

test('the corpus is large and has both sides of the question', () => {
  assert.ok(corpus.length >= 200, `only ${corpus.length} queries`);
  const accepted = corpus.filter(grafanaAccepts).length;
  assert.ok(accepted >= 100 && corpus.length - accepted >= 60,
    `${accepted} accepted, ${corpus.length - accepted} rejected`);
});

test('strata and Grafana agree on what is TraceQL', () => {
  const answers = strataAnswers(corpus);
  const disagreements = [];
  let unsupported = 0;
  corpus.forEach((query, i) => {
    const strata = answers[i].startsWith('ok') || answers[i].startsWith('unsupported');
    if (answers[i].startsWith('unsupported')) unsupported++;
    if (strata !== grafanaAccepts(query)) {
      disagreements.push(`${JSON.stringify(query)}: Grafana ${grafanaAccepts(query) ? 'accepts' : 'rejects'}, strata says ${answers[i]}`);
    }
  });
  assert.deepEqual(disagreements, []);
  // Refusals by name are part of the contract: some queries must get them.
  assert.ok(unsupported >= 20, `only ${unsupported} unsupported`);
});

test('every query Grafana\'s search form builds is answered, not refused', () => {
  // The shapes the TraceQL search form writes: one filter of conditions
  // joined by &&, with =, !=, =~, !~, <, >, <=, >= and every value kind.
  const form = corpus.filter((q) => /^\{resource\.service\.name|^\{span\.|^\{name=|^\{status=|^\{\.foo/.test(q) && grafanaAccepts(q));
  assert.ok(form.length >= 10, `only ${form.length} search-form queries`);
  const answers = strataAnswers(form);
  form.forEach((q, i) => assert.equal(answers[i], 'ok', q));
});
