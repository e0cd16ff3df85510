// The header's time range (relative, or absolute from/to in the chosen
// zone) and the zone times are shown in: local, with its offset, or UTC.
// Both live in the URL (`range`, `tz`).

import { useState } from 'preact/hooks';
import { parseRange } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';
import { showsUtc } from '../lib/shown_time';
import { absoluteRange, formatAt, inputValueAt, localOffsetMinutes, offsetLabel, parseInputValue } from '../lib/time_zone';

const RANGES = ['now-15m', 'now-1h', 'now-6h', 'now-24h', 'now-7d'];

export function TimePicker() {
  const range = here.value.params.get('range') ?? 'now-1h';
  const utc = showsUtc();
  const relative = RANGES.includes(range);
  const [editing, setEditing] = useState(false);
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const offsetOf = (ms: number) => (utc ? 0 : localOffsetMinutes(ms));

  const startEditing = () => {
    const window = parseRange(range, Date.now()) ?? parseRange('now-1h', Date.now())!;
    setFrom(inputValueAt(window.startMs, offsetOf(window.startMs)));
    setTo(inputValueAt(window.endMs, offsetOf(window.endMs)));
    setProblem(null);
    setEditing(true);
  };
  const apply = (event: Event) => {
    event.preventDefault();
    const start = parseInputValue(from, offsetOf);
    const end = parseInputValue(to, offsetOf);
    if (start === null || end === null) return setProblem('Give both times.');
    if (start >= end) return setProblem('"From" must be before "To".');
    setEditing(false);
    navigate(withParams({ range: absoluteRange(start, end) }));
  };
  const absolute = !relative ? parseRange(range, Date.now()) : null;
  const localLabel = `Local (${offsetLabel(localOffsetMinutes(Date.now()))})`;

  return (
    <div class="time-picker">
      <label class="range">
        <span>Time range</span>
        <select
          value={editing ? 'custom' : range}
          onChange={(event) => {
            const value = (event.target as HTMLSelectElement).value;
            if (value === 'custom') startEditing();
            else {
              setEditing(false);
              navigate(withParams({ range: value }));
            }
          }}
        >
          {RANGES.map((value) => (
            <option value={value}>Last {value.slice(4)}</option>
          ))}
          {absolute && (
            <option value={range}>
              {formatAt(absolute.startMs, offsetOf(absolute.startMs), false)} to{' '}
              {formatAt(absolute.endMs, offsetOf(absolute.endMs), false)}
            </option>
          )}
          <option value="custom">Custom range…</option>
        </select>
      </label>
      <div class="segmented" role="group" aria-label="Time zone">
        <button type="button" aria-pressed={!utc} onClick={() => navigate(withParams({ tz: null }))}>
          {localLabel}
        </button>
        <button type="button" aria-pressed={utc} onClick={() => navigate(withParams({ tz: 'utc' }))}>
          UTC
        </button>
      </div>
      {editing && (
        <form class="custom-range" aria-label="Custom time range" onSubmit={apply}>
          <label>
            <span>From ({utc ? 'UTC' : 'local'})</span>
            <input type="datetime-local" step="1" value={from} onInput={(e) => setFrom((e.target as HTMLInputElement).value)} />
          </label>
          <label>
            <span>To ({utc ? 'UTC' : 'local'})</span>
            <input type="datetime-local" step="1" value={to} onInput={(e) => setTo((e.target as HTMLInputElement).value)} />
          </label>
          <button type="submit">Apply</button>
          <button type="button" onClick={() => setEditing(false)}>
            Cancel
          </button>
          {problem && (
            <span class="error" role="alert">
              {problem}
            </span>
          )}
        </form>
      )}
    </div>
  );
}
