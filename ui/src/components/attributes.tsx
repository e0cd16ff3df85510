// OTLP attributes, typed: strings quoted, numbers and booleans as they are,
// arrays and maps nested, bytes as base64.

import type { AnyValue, KeyValue } from '../lib/api';

export function Value(props: { value?: AnyValue }) {
  const v = props.value ?? {};
  if (v.stringValue !== undefined) return <span class="v-string">{JSON.stringify(v.stringValue)}</span>;
  if (v.intValue !== undefined) return <span class="v-number">{String(v.intValue)}</span>;
  if (v.doubleValue !== undefined) return <span class="v-number">{String(v.doubleValue)}</span>;
  if (v.boolValue !== undefined) return <span class="v-bool">{String(v.boolValue)}</span>;
  if (v.bytesValue !== undefined) return <span class="v-bytes">bytes {v.bytesValue}</span>;
  if (v.arrayValue !== undefined) {
    return (
      <span class="v-array">
        [
        {(v.arrayValue.values ?? []).map((item, i) => (
          <>
            {i > 0 && ', '}
            <Value value={item} />
          </>
        ))}
        ]
      </span>
    );
  }
  if (v.kvlistValue !== undefined) return <Attributes attributes={v.kvlistValue.values ?? []} />;
  return <span class="v-empty">(empty)</span>;
}

export function Attributes(props: { attributes: KeyValue[]; label?: string }) {
  if (props.attributes.length === 0) return <p class="hint">none</p>;
  return (
    <table class="attributes" aria-label={props.label}>
      <tbody>
        {props.attributes.map((attribute) => (
          <tr key={attribute.key}>
            <th scope="row">{attribute.key}</th>
            <td>
              <Value value={attribute.value} />
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
