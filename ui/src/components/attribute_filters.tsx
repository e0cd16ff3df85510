// Attribute filters of the trace search (`attr.<key>=<value>` in the URL,
// as GET /api/v1/traces takes them), with keys and their frequent values
// suggested from GET /api/v1/attributes for the window (native datalists).

import { useEffect, useState } from 'preact/hooks';
import { get } from '../lib/api';
import { rangeParams } from '../lib/format';
import { here, navigate, withParams } from '../lib/location';

interface DiscoveredKey {
  key: string;
  family: string;
  types: string[];
  values: { value: string; count: number }[];
}

// The attribute filters in the URL, in its order.
export function attributeFilters(params: URLSearchParams): [string, string][] {
  return [...params.entries()].filter(([name]) => name.startsWith('attr.') && name.length > 5)
    .map(([name, value]) => [name.slice(5), value]);
}

export function AttributeFilters(props: { range: string; service: string }) {
  const [keys, setKeys] = useState<DiscoveredKey[]>([]);
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const filters = attributeFilters(here.value.params);

  useEffect(() => {
    const query = rangeParams(props.range, Date.now());
    if (!query) return;
    query.set('signal', 'spans');
    if (props.service) query.set('service', props.service);
    let stale = false;
    // Suggestions only: a failure leaves the fields as plain text fields.
    get<{ attributes: DiscoveredKey[] }>(`/api/v1/attributes?${query}`)
      .then((answer) => !stale && setKeys(answer.attributes))
      .catch(() => !stale && setKeys([]));
    return () => {
      stale = true;
    };
  }, [props.range, props.service]);

  const chosen = keys.find((k) => k.key === key);
  const add = () => {
    if (!key.trim()) return;
    navigate(withParams({ [`attr.${key.trim()}`]: value }));
    setKey('');
    setValue('');
  };
  return (
    <div class="attribute-filters">
      <label>
        <span>Attribute</span>
        <input name="attr-key" list="attribute-keys" value={key} autocomplete="off"
          onInput={(e) => setKey((e.target as HTMLInputElement).value)} />
      </label>
      <datalist id="attribute-keys">
        {keys.map((k) => (
          <option value={k.key}>{`${k.family}, ${k.types.join('/')}`}</option>
        ))}
      </datalist>
      <label>
        <span>Value</span>
        <input name="attr-value" list="attribute-values" value={value} autocomplete="off"
          onInput={(e) => setValue((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'Enter') {
              e.preventDefault();
              add();
            }
          }} />
      </label>
      <datalist id="attribute-values">
        {(chosen?.values ?? []).map((v) => (
          <option value={v.value}>{`${v.count} spans`}</option>
        ))}
      </datalist>
      <button type="button" onClick={add}>
        Add filter
      </button>
      {filters.length > 0 && (
        <ul class="filter-chips" aria-label="Attribute filters">
          {filters.map(([k, v]) => (
            <li>
              <code>{k}={v}</code>
              <button type="button" aria-label={`Remove ${k}=${v}`} onClick={() => navigate(withParams({ [`attr.${k}`]: null }))}>
                ×
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
