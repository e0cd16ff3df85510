// A page in its own chunk, fetched the first time it is shown (the
// service map and metrics pages carry libraries the first page should
// not: dagre, d3-force, the heatmap).

import type { FunctionComponent } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { messageOf } from '../lib/api';

// `preload` starts fetching the chunk before the page is first shown
// (main.tsx, for the page being opened).
export function lazyPage<P extends object>(
  load: () => Promise<FunctionComponent<P>>,
): FunctionComponent<P> & { preload: () => void } {
  let loaded: FunctionComponent<P> | null = null;
  let loading: Promise<FunctionComponent<P>> | null = null;
  const start = () => {
    if (!loading) {
      loading = load();
      loading.catch(() => {
        loading = null;  // tried again when next shown
      });
    }
    return loading;
  };
  const LazyPage = function LazyPage(props: P) {
    const [Page, setPage] = useState<FunctionComponent<P> | null>(() => loaded);
    const [error, setError] = useState<string | null>(null);
    useEffect(() => {
      if (Page) return;
      start()
        .then((component) => {
          loaded = component;
          setPage(() => component);
        })
        .catch((caught) => setError(messageOf(caught)));
    }, []);
    if (error) {
      return (
        <p class="error" role="alert">
          Could not load this page ({error}); reload to try again.
        </p>
      );
    }
    return Page ? <Page {...props} /> : <p class="loading">Loading…</p>;
  };
  return Object.assign(LazyPage, { preload: () => void start() });
}
