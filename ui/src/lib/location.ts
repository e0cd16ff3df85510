// All UI state lives in the URL, so every view is a link people can share.
// `here` follows the address bar; navigate() changes it without a reload.

import { signal } from '@preact/signals';

export interface Here {
  path: string;
  params: URLSearchParams;
  hash: string;
}

function read(): Here {
  return {
    path: window.location.pathname,
    params: new URLSearchParams(window.location.search),
    hash: window.location.hash,
  };
}

export const here = signal<Here>(read());

window.addEventListener('popstate', () => {
  here.value = read();
});

export function navigate(url: string, replace = false): void {
  if (replace) {
    window.history.replaceState(null, '', url);
  } else {
    window.history.pushState(null, '', url);
  }
  here.value = read();
}

// The current URL with `changes` applied to its query (null removes one).
export function withParams(changes: Record<string, string | null>): string {
  const params = new URLSearchParams(here.value.params);
  for (const [key, value] of Object.entries(changes)) {
    if (value === null) params.delete(key);
    else params.set(key, value);
  }
  const query = params.toString();
  return here.value.path + (query ? `?${query}` : '');
}

// The URL's values of `names` ('' when absent): a search form's fields.
export function paramValues(names: readonly string[]): Record<string, string> {
  const values: Record<string, string> = {};
  for (const name of names) values[name] = here.value.params.get(name) ?? '';
  return values;
}

// A value from the URL fragment ("#token=..."), which never reaches the
// server's logs.
export function fragmentValue(name: string): string | null {
  return new URLSearchParams(here.value.hash.replace(/^#/, '')).get(name);
}
