// strata's LogQL parser against Grafana's LogQL grammar
// (@grafana/lezer-logql, the grammar Grafana's Loki query editor checks
// queries with): for every query of logql_corpus.json, both must agree on
// whether it is LogQL. Grafana's side is computed here, from its parser (a
// tree with no error node accepts); strata's from the logql_syntax
// program, which answers "ok", "unsupported ..." (LogQL that Loki, and so
// strata, refuses for its meaning: still LogQL) or "error ...".
//
// STRATA_LOGQL_SYNTAX: the program (default build/release's).

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { disagreements, grammarAccepts, syntaxAnswers } from './grammar_check.mjs';
import { parser } from '@grafana/lezer-logql';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const program = process.env.STRATA_LOGQL_SYNTAX ??
  path.join(root, 'build/release/src/compat/logql/logql_syntax');
const corpus = JSON.parse(fs.readFileSync(path.join(here, 'logql_corpus.json'), 'utf8'));
const grafanaAccepts = (query) => grammarAccepts(parser, query);
const strataAnswers = (queries) => syntaxAnswers(program, queries, 'json');


test('the corpus is large and has both sides of the question', () => {
  assert.ok(corpus.length >= 200, `only ${corpus.length} queries`);
  const accepted = corpus.filter(grafanaAccepts).length;
  assert.ok(accepted >= 150 && corpus.length - accepted >= 80,
    `${accepted} accepted, ${corpus.length - accepted} rejected`);
});

test('strata and Grafana agree on what is LogQL', () => {
  const answers = strataAnswers(corpus);
  const found = disagreements(parser, corpus, answers, 'Grafana');
  const { unsupported } = found;
  assert.deepEqual(found.disagreements, []);
  // Loki's own refusals (sum_over_time without unwrap, ...) are part of the
  // contract: some queries must get them.
  assert.ok(unsupported >= 10, `only ${unsupported} unsupported`);
});

test('the queries Grafana sends are accepted and pass Loki\'s checks', () => {
  // Explore's log volume query, the builder's shapes and the data source's
  // Save & test query.
  const sent = [
    'sum by (level, detected_level) (count_over_time({service_name="x"} | drop __error__ [1m]))',
    'sum by (level, detected_level) (count_over_time({service_name="x", env="prod"} |= "error" | drop __error__ [5m]))',
    'vector(1)+vector(1)',
    '{service_name="api"} |= `` | logfmt | __error__=``',
    '{service_name="api"} | json | line_format "{{.message}}"',
    'sum by(level) (rate({service_name="api"}[1m]))',
    'topk(10, sum by (service_name) (rate({service_name=~".+"}[5m])))',
    'quantile_over_time(0.99, {service_name="api"} | json | unwrap duration(latency) [5m]) by (route)',
  ];
  for (const q of sent) assert.ok(corpus.includes(q), `corpus lacks ${q}`);
  const answers = strataAnswers(sent);
  sent.forEach((q, i) => assert.equal(answers[i], 'ok', q));
});
