// strata's PromQL parser against Prometheus's grammar
// (@prometheus-io/lezer-promql 0.42.0, the grammar of Prometheus 2.42's
// query editor): for every query of promql_corpus.json and every
// expression of Prometheus's own test files, both must agree on whether it
// is PromQL. The grammar checks syntax only; Prometheus's parser also
// type-checks (rate of an instant vector, scalar comparisons without bool,
// set operators on scalars, ...). Queries where the two differ are listed
// in promql_lezer_differences.json, and there strata must do what
// Prometheus does: reject what Prometheus's type checker rejects.
//
// STRATA_PROMQL_SYNTAX: the program (default build/release's).
// STRATA_PROMQL_TESTDATA: Prometheus's test files (default
// <source root>/../shared/compat/promql-v2.42.0); the test fails without them.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { grammarAccepts, syntaxAnswers } from './grammar_check.mjs';
import { parser } from '@prometheus-io/lezer-promql';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const program = process.env.STRATA_PROMQL_SYNTAX ??
  path.join(root, 'build/release/src/compat/promql/promql_syntax');
const testdata = process.env.STRATA_PROMQL_TESTDATA ??
  path.resolve(root, '../shared/compat/promql-v2.42.0');
const corpus = JSON.parse(fs.readFileSync(path.join(here, 'promql_corpus.json'), 'utf8'));
const lezerAccepts = (query) => grammarAccepts(parser, query);
const strataAnswers = (queries) => syntaxAnswers(program, queries, 'hex');
const differences = JSON.parse(fs.readFileSync(path.join(here, 'promql_lezer_differences.json'), 'utf8'));
const prometheusRejects = new Set(differences.prometheus_rejects);
const prometheusAccepts = new Set(differences.prometheus_accepts);

// The expressions of every `eval` line of Prometheus's test files, read
// where they lie (they are Prometheus's, not copied into strata).
function testFileExpressions() {
  assert.ok(fs.existsSync(testdata),
    `Prometheus's test files are not at ${testdata}; set STRATA_PROMQL_TESTDATA`);
  const expressions = [];
  for (const name of fs.readdirSync(testdata).filter((f) => f.endsWith('.test')).sort()) {
    for (const line of fs.readFileSync(path.join(testdata, name), 'utf8').split('\n')) {
      const m = /^eval(?:_fail|_ordered)?\s+instant\s+at\s+\S+\s+(.*)$/.exec(line);
      if (m) expressions.push(m[1]);
    }
  }
  assert.ok(expressions.length >= 500, `only ${expressions.length} eval lines in ${testdata}`);
  return expressions;
}


test('the corpus is large and has both sides of the question', () => {
  assert.ok(corpus.length >= 300, `only ${corpus.length} queries`);
  const accepted = corpus.filter(lezerAccepts).length;
  assert.ok(accepted >= 200 && corpus.length - accepted >= 60,
    `${accepted} accepted, ${corpus.length - accepted} rejected`);
});

test('the listed differences are still differences', () => {
  for (const q of prometheusRejects) {
    assert.ok(corpus.includes(q), `${JSON.stringify(q)} is not in the corpus`);
    assert.ok(lezerAccepts(q), `lezer now rejects ${JSON.stringify(q)}: move it out of prometheus_rejects`);
  }
  for (const q of prometheusAccepts) {
    assert.ok(!lezerAccepts(q), `lezer now accepts ${JSON.stringify(q)}: move it out of prometheus_accepts`);
  }
  assert.ok(prometheusRejects.size >= 40, 'the type errors strata must reject are part of the contract');
});

test('strata and Prometheus agree on what is PromQL', () => {
  const queries = [...corpus, ...testFileExpressions()];
  const answers = strataAnswers(queries);
  const disagreements = [];
  queries.forEach((query, i) => {
    const strata = answers[i].startsWith('ok');
    let expected = lezerAccepts(query);
    if (prometheusRejects.has(query)) expected = false;
    if (prometheusAccepts.has(query)) expected = true;
    if (strata !== expected) {
      disagreements.push(`${JSON.stringify(query)}: expected ${expected ? 'accept' : 'reject'}, strata says ${answers[i]}`);
    }
  });
  assert.deepEqual(disagreements, []);
});

test('every query shape Grafana\'s builder writes is accepted', () => {
  // The builder's shapes: a selector with label filters, a range function
  // over it with $__rate_interval substituted, an aggregation by labels,
  // histogram_quantile over summed buckets, binary operations between them.
  const built = corpus.filter((q) => /^(sum|histogram_quantile|topk|rate|avg)\(|^sum by/.test(q) && lezerAccepts(q) && !prometheusRejects.has(q));
  assert.ok(built.length >= 15, `only ${built.length} builder queries`);
  const answers = strataAnswers(built);
  built.forEach((q, i) => assert.equal(answers[i], 'ok', q));
});
