import { useEffect, useRef, useState } from 'preact/hooks';
import { SaveQuery } from '../components/save_query';
import { post, messageOf } from '../lib/api';
import { SQL_HELPERS } from '../lib/sql_helpers';
import { here, navigate, withParams } from '../lib/location';
import { toCsv } from '../lib/values';
import type { Editor } from './sql_editor';

interface SqlAnswer {
  columns: { name: string; type: string }[];
  rows: unknown[][];
  truncated: boolean;
  truncated_reason?: string;
}

const VIEWS = ['spans', 'logs', 'metrics', 'rollups'];
const EXAMPLE = `SELECT service_name, count(*) AS spans, avg(duration_ms) AS avg_ms
FROM spans
GROUP BY service_name
ORDER BY spans DESC`;

function cell(value: unknown): string {
  if (value === null) return 'NULL';
  return typeof value === 'string' ? value : JSON.stringify(value);
}

// The SQL console: the editor (loaded only here), the answer as a table,
// CSV download, and how long the query took. The query is in the URL.
export function SqlPage() {
  const box = useRef<HTMLDivElement>(null);
  const editor = useRef<Editor | null>(null);
  const [answer, setAnswer] = useState<SqlAnswer | null>(null);
  const [tookMs, setTookMs] = useState<number | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [running, setRunning] = useState(false);

  async function run() {
    const text = editor.current?.text() ?? '';
    navigate(withParams({ q: text }), true);
    setRunning(true);
    setError(null);
    const began = performance.now();
    try {
      setAnswer(await post<SqlAnswer>('/api/v1/sql', { sql: text }));
      setTookMs(performance.now() - began);
    } catch (caught) {
      setAnswer(null);
      setError(messageOf(caught));
    } finally {
      setRunning(false);
    }
  }

  useEffect(() => {
    let cancelled = false;
    const initial = here.value.params.get('q') ?? EXAMPLE;
    Promise.all([
      import('./sql_editor'),
      Promise.all(
        VIEWS.map((view) =>
          post<SqlAnswer>('/api/v1/sql', { sql: `DESCRIBE ${view}` })
            .then((described) => [view, described.rows.map((row) => String(row[0]))] as const)
            .catch(() => [view, []] as const),
        ),
      ),
    ]).then(([module, columns]) => {
      if (cancelled || !box.current) return;
      editor.current = module.createEditor(box.current, initial, () => void run(), Object.fromEntries(columns));
    });
    return () => {
      cancelled = true;
      editor.current?.destroy();
    };
  }, []);

  function download() {
    if (!answer) return;
    const blob = new Blob([toCsv(answer.columns.map((c) => c.name), answer.rows)], { type: 'text/csv' });
    const link = document.createElement('a');
    link.href = URL.createObjectURL(blob);
    link.download = 'strata-query.csv';
    link.click();
    URL.revokeObjectURL(link.href);
  }

  return (
    <section>
      <div class="page-title">
        <h1>SQL</h1>
        <SaveQuery kind="sql" parameters={() => ({ q: editor.current?.text() ?? '' })} />
      </div>
      <p class="hint">
        Read-only SQL over the views {VIEWS.join(', ')} (docs/sql.md). Ctrl+Enter runs the query.
      </p>
      <details class="sql-helpers">
        <summary>Helpers: an attribute by key, e.g. attr_int('http.response.status_code')</summary>
        <ul aria-label="SQL helpers">
          {SQL_HELPERS.map((helper) => (
            <li key={helper.name}>
              <code>{helper.name}(key)</code> {helper.type}: {helper.info.replace(/^[^:]*: /, '')}
            </li>
          ))}
        </ul>
      </details>
      <div class="sql-editor" ref={box} />
      <p class="sql-actions">
        <button type="button" onClick={() => void run()} disabled={running}>
          {running ? 'Running…' : 'Run'}
        </button>
        {answer && (
          <button type="button" onClick={download}>
            Download CSV
          </button>
        )}
        {answer && tookMs !== null && (
          <span class="hint" role="status">
            {answer.rows.length.toLocaleString('en-US')} rows in {tookMs.toFixed(0)} ms
            {answer.truncated ? ` (truncated: ${answer.truncated_reason})` : ''}
          </span>
        )}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {answer && (
        <div class="sql-result">
          <table class="data" aria-label="Query result">
            <thead>
              <tr>
                {answer.columns.map((column) => (
                  <th scope="col" title={column.type}>
                    {column.name}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {answer.rows.map((row) => (
                <tr>
                  {row.map((value) => (
                    <td class={typeof value === 'number' ? 'num' : undefined}>{cell(value)}</td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
