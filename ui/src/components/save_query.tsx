// "Save": keeps the page's query (its URL parameters, or what `parameters`
// returns) and time range as a saved query, private or, for operators and
// admins, shared. Listed on /saved.

import { useState } from 'preact/hooks';
import { messageOf, post } from '../lib/api';
import { here } from '../lib/location';
import { mayShare, parametersOf, type SavedKind, type SavedQuery } from '../lib/saved';
import { me } from '../session';

export function SaveQuery(props: { kind: SavedKind; parameters?: () => Record<string, string> }) {
  const [open, setOpen] = useState(false);
  const [name, setName] = useState('');
  const [shared, setShared] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<SavedQuery | null>(null);
  const range = here.value.params.get('range') ?? 'now-1h';
  const canShare = mayShare(me.value?.role);

  async function save(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const parameters = props.parameters ? props.parameters() : parametersOf(here.value.params);
      setSaved(
        await post<SavedQuery>('/api/v1/saved-queries', {
          name: name.trim(), kind: props.kind, parameters, time_range: range, shared: canShare && shared,
        }),
      );
      setOpen(false);
      setName('');
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  }

  return (
    <div class="save-query">
      <button type="button" aria-expanded={open} onClick={() => { setOpen(!open); setSaved(null); }}>
        Save
      </button>
      {saved && (
        <span role="status" class="hint">
          Saved “{saved.name}”. <a href="/saved">Saved queries</a>
        </span>
      )}
      {open && (
        <form class="save-form" aria-label="Save query" onSubmit={save}>
          <label>
            <span>Name</span>
            <input value={name} required maxLength={200} onInput={(e) => setName((e.target as HTMLInputElement).value)} />
          </label>
          {canShare && (
            <label class="check">
              <input type="checkbox" checked={shared} onChange={(e) => setShared((e.target as HTMLInputElement).checked)} />
              <span>Shared with everyone</span>
            </label>
          )}
          <span class="hint">Time range: {range}</span>
          <button type="submit" disabled={busy || !name.trim()}>
            {busy ? 'Saving…' : 'Save query'}
          </button>
          {error && (
            <span class="error" role="alert">
              {error}
            </span>
          )}
        </form>
      )}
    </div>
  );
}
