import { useEffect } from 'preact/hooks';
import { lazyPage } from './components/lazy';
import { Shortcuts, shortcutsOpen } from './components/shortcuts';
import { TimePicker } from './components/time_picker';
import { startEarly, TRACE_PATH } from './lib/early';
import { here, navigate, withParams } from './lib/location';
import { applyTheme, theme, type ThemeChoice } from './lib/theme';
import { LogsPage } from './pages/logs';
import { PasswordPage } from './pages/password';
import { SavedPage } from './pages/saved';
import { ServicePage } from './pages/service';
import { SqlPage } from './pages/sql';
import { ServicesPage } from './pages/services';
import { SettingsPage } from './pages/settings';
import { TracesPage } from './pages/traces';
import { SetupPage } from './pages/setup';
import { SignInPage } from './pages/signin';
import { loadMe, me, signOut } from './session';

// Pages in chunks of their own, fetched when first opened.
const MapPage = lazyPage(() => import('./pages/map').then((m) => m.MapPage));
const MetricsPage = lazyPage(() => import('./pages/metrics').then((m) => m.MetricsPage));
const TracePage = lazyPage(() => import('./pages/trace').then((m) => m.TracePage));

const NAV: [string, string][] = [
  ['/services', 'Services'],
  ['/map', 'Map'],
  ['/traces', 'Traces'],
  ['/logs', 'Logs'],
  ['/metrics-explorer', 'Metrics'],
  ['/sql', 'SQL'],
  ['/saved', 'Saved'],
  ['/settings', 'Settings'],
];

// Whether the nav link `href` names the current page or one under it.
function current(href: string): boolean {
  const path = here.value.path;
  return path === href || path.startsWith(`${href}/`);
}

function Header() {
  const user = me.value;
  // The time range and zone go with the person from page to page.
  const kept = new URLSearchParams();
  for (const name of ['range', 'tz']) {
    const value = here.value.params.get(name);
    if (value) kept.set(name, value);
  }
  const carried = kept.size > 0 ? `?${kept}` : '';
  return (
    <header class="top">
      <a class="brand" href="/services">
        strata
      </a>
      <nav aria-label="Pages">
        {NAV.map(([href, label]) => (
          <a href={href + carried} aria-current={current(href) ? 'page' : undefined}>
            {label}
          </a>
        ))}
      </nav>
      <TimePicker />
      <label class="theme">
        <span>Theme</span>
        <select
          value={theme.value}
          onChange={(event) => applyTheme((event.target as HTMLSelectElement).value as ThemeChoice)}
        >
          <option value="system">System</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
      </label>
      <button type="button" class="shortcuts-button" aria-label="Keyboard shortcuts" title="Keyboard shortcuts (?)" onClick={() => (shortcutsOpen.value = true)}>
        ?
      </button>
      {user && (
        <div class="user">
          <span title={user.email}>
            {user.name} <span class="role">({user.role})</span>
          </span>
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </div>
      )}
    </header>
  );
}

// Pages that work without an account.
const PUBLIC: Record<string, () => preact.JSX.Element> = {
  '/signin': SignInPage,
  '/setup': SetupPage,
  '/password': PasswordPage,
};

// What the app asks for before its first render: who is signed in, and
// the first request and chunk of the page being opened (lib/early.ts),
// all at once rather than one after another.
export function startRequests() {
  void loadMe();
  if (startEarly(window.location.pathname, new URLSearchParams(window.location.search)) === 'trace') {
    TracePage.preload();
  }
}

export function App() {
  // Links inside the app change the URL without a reload.
  useEffect(() => {
    const onClick = (event: MouseEvent) => {
      const anchor = (event.target as Element).closest('a');
      if (!anchor || !anchor.hasAttribute('href') || anchor.hasAttribute('download')) return;
      // An SVG link (the service map's nodes) has no origin or pathname.
      const href = anchor instanceof SVGAElement ? anchor.href.baseVal : anchor.href;
      const target = anchor instanceof SVGAElement ? anchor.target.baseVal : anchor.target;
      const url = new URL(href, window.location.href);
      if (url.origin !== window.location.origin || target) return;
      if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
      event.preventDefault();
      navigate(url.pathname + url.search + url.hash);
    };
    document.addEventListener('click', onClick);
    return () => document.removeEventListener('click', onClick);
  }, []);

  const path = here.value.path;
  const Public = PUBLIC[path];
  if (Public) return <Public />;
  if (me.value === undefined) return <p class="loading">Loading…</p>;
  if (me.value === null) {
    navigate(`/signin?next=${encodeURIComponent(path + window.location.search)}`, true);
    return null;
  }
  if (path === '/') {
    navigate('/services', true);
    return null;
  }
  return (
    <>
      <Header />
      <Shortcuts />
      <main class="page">
        {path === '/services' ? (
          <ServicesPage />
        ) : path.startsWith('/services/') && path.length > '/services/'.length ? (
          <ServicePage name={decodeURIComponent(path.slice('/services/'.length))} />
        ) : path === '/map' ? (
          <MapPage />
        ) : path === '/metrics-explorer' ? (
          <MetricsPage />
        ) : path === '/saved' ? (
          <SavedPage />
        ) : path === '/sql' ? (
          <SqlPage />
        ) : path === '/logs' ? (
          <LogsPage />
        ) : path === '/traces' ? (
          <TracesPage />
        ) : TRACE_PATH.test(path) ? (
          <TracePage traceId={path.slice('/traces/'.length).toLowerCase()} />
        ) : path === '/settings' || path.startsWith('/settings/') ? (
          <SettingsPage />
        ) : (
          <section>
            <h1>Not found</h1>
            <p>
              There is no page at <code>{path}</code>. <a href="/services">Go to services</a>.
            </p>
          </section>
        )}
      </main>
    </>
  );
}
