// Saved queries: the person's own and everyone's shared ones, each opening
// its page with its parameters and time range; the person's own can be
// renamed and deleted.

import { useEffect, useState } from 'preact/hooks';
import { get, messageOf, patch, remove } from '../lib/api';
import { savedQueryUrl, type SavedQuery } from '../lib/saved';
import { me } from '../session';

const KIND_NAMES: Record<string, string> = { traces: 'Traces', logs: 'Logs', metrics: 'Metrics', sql: 'SQL' };

export function SavedPage() {
  const [list, setList] = useState<SavedQuery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<{ id: number; name: string } | null>(null);
  const email = me.value?.email;

  const load = () =>
    get<{ saved_queries: SavedQuery[] }>('/api/v1/saved-queries')
      .then((answer) => setList(answer.saved_queries))
      .catch((caught) => setError(messageOf(caught)));
  useEffect(() => {
    void load();
  }, []);

  async function act(action: () => Promise<unknown>) {
    setError(null);
    try {
      await action();
      setRenaming(null);
      await load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  }

  function rename(event: Event) {
    event.preventDefault();
    if (!renaming) return;
    void act(() => patch(`/api/v1/saved-queries/${renaming.id}`, { name: renaming.name.trim() }));
  }

  function del(saved: SavedQuery) {
    if (!window.confirm(`Delete the saved query “${saved.name}”?`)) return;
    void act(() => remove(`/api/v1/saved-queries/${saved.id}`));
  }

  return (
    <section>
      <h1>Saved queries</h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {!error && list === null && <p class="loading">Loading…</p>}
      {list !== null && list.length === 0 && (
        <p class="hint">
          Nothing saved yet. "Save" on the traces, logs, metrics and SQL pages keeps a query with its time
          range here.
        </p>
      )}
      {list !== null && list.length > 0 && (
        <table class="data" aria-label="Saved queries">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Page</th>
              <th scope="col">Time range</th>
              <th scope="col">Owner</th>
              <th scope="col">Shared</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((saved) => {
              const own = saved.owner === email;
              const url = savedQueryUrl(saved);
              return (
                <tr key={saved.id}>
                  <th scope="row">
                    {renaming?.id === saved.id ? (
                      <form class="rename" onSubmit={rename}>
                        <input
                          aria-label="New name"
                          value={renaming.name}
                          required
                          maxLength={200}
                          onInput={(e) => setRenaming({ id: saved.id, name: (e.target as HTMLInputElement).value })}
                        />
                        <button type="submit">Save name</button>
                        <button type="button" onClick={() => setRenaming(null)}>
                          Cancel
                        </button>
                      </form>
                    ) : (
                      saved.name
                    )}
                  </th>
                  <td>{KIND_NAMES[saved.kind] ?? saved.kind}</td>
                  <td>{saved.time_range}</td>
                  <td>{own ? 'you' : saved.owner}</td>
                  <td>{saved.shared ? 'shared' : 'private'}</td>
                  <td>
                    <div class="row-actions">
                      {url && (
                        <a href={url} aria-label={`Open ${saved.name}`}>
                          Open
                        </a>
                      )}
                      {own && (
                        <>
                          <button
                            type="button"
                            aria-label={`Rename ${saved.name}`}
                            onClick={() => setRenaming({ id: saved.id, name: saved.name })}
                          >
                            Rename
                          </button>
                          <button type="button" aria-label={`Delete ${saved.name}`} onClick={() => del(saved)}>
                            Delete
                          </button>
                        </>
                      )}
                    </div>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
