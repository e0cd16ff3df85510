// Every call the UI makes to strata's REST API (docs/api.md). Requests carry
// the session cookie (same origin) and the header the server's browser
// rules ask for on anything that changes state.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
  }
}

export interface User {
  id: number;
  email: string;
  name: string;
  role: 'viewer' | 'operator' | 'admin';
  active: boolean;
  has_password: boolean;
  created_at: string;
  last_sign_in_at: string | null;
}

export interface ServiceHealth {
  name: string;
  namespace: string;
  health: 'healthy' | 'degraded' | 'unhealthy' | 'idle';
  request_count: number;
  request_errors: number;
  rate: number | null;
  error_rate: number | null;
  p50_nano: string | null;
  p95_nano: string | null;
  p99_nano: string | null;
  span_count: number;
  span_errors: number;
  logs: Record<string, number>;
  metric_points: number;
}

export interface ServicesAnswer {
  start: string;
  end: string;
  request_kinds: string[];
  services: ServiceHealth[];
}

// What to tell a person about a failure.
export function messageOf(caught: unknown): string {
  return caught instanceof Error ? caught.message : String(caught);
}

export async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { 'X-Strata-Request': '1' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const response = await fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const message =
      parsed && typeof parsed === 'object' && 'error' in parsed
        ? String((parsed as { error: unknown }).error)
        : `${response.status} ${response.statusText}`;
    const retry = Number(response.headers.get('Retry-After'));
    throw new ApiError(response.status, message, Number.isFinite(retry) && retry > 0 ? retry : undefined);
  }
  return parsed as T;
}

// GETs started before the page that wants them is on screen (lib/early.ts
// starts the current page's first request beside the sign-in check and
// the page's chunk, rather than after them): a `get` of the same path
// within EARLY_MS takes the answer in flight, once, and asks again if it
// failed (a 401 before signing in, say).
// `arrived` takes the answer if it is already here, so the page shows it
// in its first render instead of after an effect and a render more.
const EARLY_MS = 10_000;
const early = new Map<string, { at: number; answer: Promise<unknown>; value?: unknown }>();

export function getEarly(path: string): void {
  const entry: { at: number; answer: Promise<unknown>; value?: unknown } = {
    at: Date.now(),
    answer: call<unknown>('GET', path),
  };
  entry.answer.then(
    (value) => (entry.value = value),
    () => {},  // whoever takes it sees the failure
  );
  early.set(path, entry);
}

export function arrived<T>(path: string | null): T | undefined {
  const started = path === null ? undefined : early.get(path);
  if (!started || started.value === undefined || Date.now() - started.at >= EARLY_MS) return undefined;
  early.delete(path!);
  return started.value as T;
}

export function get<T>(path: string): Promise<T> {
  const started = early.get(path);
  if (started) {
    early.delete(path);
    if (Date.now() - started.at < EARLY_MS) return (started.answer as Promise<T>).catch(() => call<T>('GET', path));
  }
  return call<T>('GET', path);
}
export const post = <T>(path: string, body: unknown) => call<T>('POST', path, body);

export interface Measures {
  span_count: number;
  error_count: number;
  rate: number | null;
  error_rate: number | null;
  p50_nano: string | null;
  p95_nano: string | null;
  p99_nano: string | null;
  avg_nano: string | null;
  min_nano: string | null;
  max_nano: string | null;
}

export interface Operation extends Measures {
  name: string;
  kind: string;
}

export interface Endpoint extends Measures {
  type: 'http' | 'rpc' | 'messaging';
  name: string;
  a: string;
  b: string;
  kind: string;
}

export interface RedPoint {
  time: string;
  count: number;
  errors: number;
  rate: number;
  error_rate: number | null;
  p50_nano: string | null;
  p95_nano: string | null;
  p99_nano: string | null;
}

export interface RedAnswer {
  start: string;
  end: string;
  step_nano: string;
  kinds: string[];
  points: RedPoint[];
}

export interface TokenInfo {
  id: number;
  name: string;
  scope: 'ingest' | 'read' | 'admin';
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

// One consent the signed-in user gave an MCP client (docs/api.md, "OAuth
// grants").
export interface OAuthGrant {
  id: number;
  client_id: string;
  client_name: string;
  resource: string;
  created_at: string;
  last_issued_at: string | null;
}

export interface PasswordLink {
  url: string;
  expires_at: string;
}

export const patch = <T>(path: string, body: unknown) => call<T>('PATCH', path, body);
export const remove = <T>(path: string) => call<T>('DELETE', path);

export interface TraceSummary {
  trace_id: string;
  root_service: string;
  root_name: string;
  start_time_unix_nano: string;
  duration_nano: string;
  span_count: number;
  error_count: number;
  services: string[];
  service_spans: { service: string; spans: number }[];
  root_status_code: number;
}

// OTLP/JSON AnyValue and KeyValue, as the trace answers encode them.
export interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number | string;
  bytesValue?: string;
  arrayValue?: { values?: AnyValue[] };
  kvlistValue?: { values?: KeyValue[] };
}
export interface KeyValue {
  key: string;
  value?: AnyValue;
}

export interface LogRecord {
  time_unix_nano: string;
  observed_time_unix_nano: string;
  severity_number: number;
  severity_text: string;
  body: AnyValue;
  service_name: string;
  trace_id: string;
  span_id: string;
  attributes: KeyValue[];
  scope_attributes: KeyValue[];
  resource_attributes: KeyValue[];
}

export interface LogVolume {
  start_time_unix_nano: string;
  end_time_unix_nano: string;
  step_nano: string;
  total: number;
  buckets: { start_time_unix_nano: string; total: number; counts: Record<string, number> }[];
}
