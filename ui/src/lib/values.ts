// OTLP/JSON values as one line of text (log bodies in a list). Pure:
// unit-tested with node --test.

import type { AnyValue } from './api';

// A string as it is at the top and quoted inside; a map as key=value
// pairs; an array in brackets; numbers and booleans as written; bytes as
// base64.
export function oneLine(value: AnyValue | undefined, nested = false): string {
  const v = value ?? {};
  if (v.stringValue !== undefined) return nested ? JSON.stringify(v.stringValue) : v.stringValue;
  if (v.intValue !== undefined) return String(v.intValue);
  if (v.doubleValue !== undefined) return String(v.doubleValue);
  if (v.boolValue !== undefined) return String(v.boolValue);
  if (v.bytesValue !== undefined) return `bytes:${v.bytesValue}`;
  if (v.arrayValue !== undefined) {
    return `[${(v.arrayValue.values ?? []).map((item) => oneLine(item, true)).join(', ')}]`;
  }
  if (v.kvlistValue !== undefined) {
    const pairs = (v.kvlistValue.values ?? []).map((kv) => `${kv.key}=${oneLine(kv.value, true)}`);
    return nested ? `{${pairs.join(' ')}}` : pairs.join(' ');
  }
  return '';
}

// RFC 4180 CSV: a header line, then one line per row; a field with a
// comma, quote, CR or LF is quoted with its quotes doubled; NULL is empty.
export function toCsv(header: string[], rows: unknown[][]): string {
  const field = (value: unknown) => {
    if (value === null || value === undefined) return '';
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
  };
  return [header, ...rows].map((row) => row.map(field).join(',')).join('\r\n') + '\r\n';
}
