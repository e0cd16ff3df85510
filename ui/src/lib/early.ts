// The first request of the page being opened, started as the app starts
// (beside the sign-in check and the page's chunk) rather than once the
// page renders after both: the services and trace pages ask for what
// `startEarly` asked for, and lib/api.ts's `get` hands them the answer in
// flight. Without a session the answer is a 401 nobody takes.

import { getEarly } from './api';
import { rangeParams } from './format';

// The services page's request for `range` at `nowMs` (whole minutes, so
// the same a moment later).
export function servicesPath(range: string, nowMs: number): string | null {
  const query = rangeParams(range, nowMs);
  return query ? `/api/v1/services?${query}` : null;
}

// The trace page's request for a trace, in its compact form.
export function tracePath(traceId: string): string {
  return `/api/v1/traces/${traceId}?format=columns`;
}

export const TRACE_PATH = /^\/traces\/([0-9a-fA-F]{32})$/;

// Starts the request of the page at `path` with `params`, if it has one
// to start; returns which page that was ('services', 'trace' or null).
export function startEarly(path: string, params: URLSearchParams): 'services' | 'trace' | null {
  if (path === '/services') {
    const services = servicesPath(params.get('range') ?? 'now-1h', Date.now());
    if (services) getEarly(services);
    return 'services';
  }
  const trace = TRACE_PATH.exec(path);
  if (trace) {
    getEarly(tracePath(trace[1].toLowerCase()));
    return 'trace';
  }
  return null;
}
