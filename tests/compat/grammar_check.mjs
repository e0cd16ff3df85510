// What the *_lezer tests share: whether a lezer grammar accepts a query (a
// tree with no error node), and what one of strata's *_syntax programs
// answers for each of a list of queries (one line each: "ok",
// "unsupported ..." or "error ...").

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';

export function grammarAccepts(parser, query) {
  let error = false;
  parser.parse(query).iterate({ enter: (node) => { if (node.type.isError) error = true; } });
  return !error;
}

// `encoding`: how the program reads a query per line, 'hex' (UTF-8 bytes
// as hex digits) or 'json' (a JSON string).
export function syntaxAnswers(program, queries, encoding) {
  const line = encoding === 'json' ? (q) => JSON.stringify(q)
    : (q) => Buffer.from(q, 'utf8').toString('hex');
  const input = queries.map(line).join('\n') + '\n';
  const run = spawnSync(program, [], { input, encoding: 'utf8', timeout: 60_000, maxBuffer: 1 << 26 });
  assert.equal(run.status, 0, `${program} failed: ${run.stderr}`);
  const lines = run.stdout.split('\n');
  assert.equal(lines.pop(), '');
  assert.equal(lines.length, queries.length);
  return lines;
}

// The queries on which strata (accepting with "ok" or "unsupported") and
// the grammar disagree, each with both answers; and how many strata
// refused by name.
export function disagreements(parser, queries, answers, grammar) {
  const out = [];
  let unsupported = 0;
  queries.forEach((query, i) => {
    const strata = answers[i].startsWith('ok') || answers[i].startsWith('unsupported');
    if (answers[i].startsWith('unsupported')) unsupported++;
    const theirs = grammarAccepts(parser, query);
    if (strata !== theirs) {
      out.push(`${JSON.stringify(query)}: ${grammar} ${theirs ? 'accepts' : 'rejects'}, strata says ${answers[i]}`);
    }
  });
  return { disagreements: out, unsupported };
}
