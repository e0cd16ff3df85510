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
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { disagreements, grammarAccepts, syntaxAnswers } from './grammar_check.mjs';
import { parser } from '@grafana/lezer-traceql';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const program = process.env.STRATA_TRACEQL_SYNTAX ??
  path.join(root, 'build/release/src/compat/traceql/traceql_syntax');
const corpus = JSON.parse(fs.readFileSync(path.join(here, 'traceql_corpus.json'), 'utf8'));
const grafanaAccepts = (query) => grammarAccepts(parser, query);
const strataAnswers = (queries) => syntaxAnswers(program, queries, 'hex');


test('the corpus is large and has both sides of the question', () => {
  assert.ok(corpus.length >= 200, `only ${corpus.length} queries`);
  const accepted = corpus.filter(grafanaAccepts).length;
  assert.ok(accepted >= 100 && corpus.length - accepted >= 60,
    `${accepted} accepted, ${corpus.length - accepted} rejected`);
});

test('strata and Grafana agree on what is TraceQL', () => {
  const answers = strataAnswers(corpus);
  const found = disagreements(parser, corpus, answers, 'Grafana');
  const { unsupported } = found;
  assert.deepEqual(found.disagreements, []);
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
