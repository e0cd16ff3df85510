// Saved queries (docs/api.md, "Saved queries"): what a page saves, and the
// link that opens one again.

export type SavedKind = 'traces' | 'logs' | 'metrics' | 'sql';

export interface SavedQuery {
  id: number;
  owner: string;
  name: string;
  kind: SavedKind;
  parameters: Record<string, unknown>;
  time_range: string;
  shared: boolean;
  created_at: string;
  updated_at: string;
}

export const PAGE_OF: Record<SavedKind, string> = {
  traces: '/traces',
  logs: '/logs',
  metrics: '/metrics-explorer',
  sql: '/sql',
};

// A page's URL query as a saved query's parameters: everything but the
// time range, which is saved on its own.
export function parametersOf(params: URLSearchParams): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of params) if (key !== 'range') out[key] = value;
  return out;
}

// The page a saved query opens: its kind's page with its parameters and
// its time range in the query. Null for a kind this UI does not know.
export function savedQueryUrl(saved: Pick<SavedQuery, 'kind' | 'parameters' | 'time_range'>): string | null {
  const page = PAGE_OF[saved.kind];
  if (!page) return null;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(saved.parameters ?? {})) {
    if (key === 'range' || value === null || value === undefined) continue;
    params.set(key, typeof value === 'string' ? value : JSON.stringify(value));
  }
  if (saved.time_range) params.set('range', saved.time_range);
  const query = params.toString();
  return query ? `${page}?${query}` : page;
}

// Who may share: operators and admins (viewers keep private queries).
export function mayShare(role: string | undefined): boolean {
  return role === 'operator' || role === 'admin';
}
