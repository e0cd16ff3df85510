// Just enough of a browser for lib/theme and components/chart's cssVar
// under node: localStorage, matchMedia, a body to append probes to and a
// getComputedStyle that resolves each variable from `themeColours` under
// the current data-theme and counts its calls. Imported before the modules
// that read `window` when they load.

export const themeColours: Record<string, Record<string, string>> = {
  light: { '--bg': 'rgb(255, 255, 255)', '--fg': 'rgb(17, 20, 24)' },
  dark: { '--bg': 'rgb(13, 17, 23)', '--fg': 'rgb(240, 243, 246)' },
};
export const styleReads = { count: 0 };

const storage = new Map<string, string>();
const dataset: Record<string, string | undefined> = {};
const g = globalThis as Record<string, unknown>;
g.window = {
  localStorage: {
    getItem: (k: string) => storage.get(k) ?? null,
    setItem: (k: string, v: string) => storage.set(k, v),
    removeItem: (k: string) => storage.delete(k),
  },
  matchMedia: () => ({ addEventListener: () => {} }),
};
g.document = {
  documentElement: { dataset },
  body: { appendChild: () => {} },
  createElement: () => ({ style: {} as Record<string, string>, remove: () => {} }),
};
g.getComputedStyle = (probe: { style: { color: string } }) => {
  styleReads.count += 1;
  const name = /var\((--[a-z]+)\)/.exec(probe.style.color)?.[1] ?? '';
  return { color: themeColours[dataset.theme ?? 'light'][name] ?? 'rgb(136, 136, 136)' };
};
