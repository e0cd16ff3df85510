// Light and dark themes: the OS's choice unless the person picks one
// (kept in localStorage).

import { signal } from '@preact/signals';

export type ThemeChoice = 'system' | 'light' | 'dark';

function stored(): ThemeChoice {
  const value = window.localStorage.getItem('strata.theme');
  return value === 'light' || value === 'dark' ? value : 'system';
}

export const theme = signal<ThemeChoice>(stored());
// Bumped when the OS switches between light and dark, so what draws with
// the theme's colours (charts) draws again.
export const osScheme = signal(0);
window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
  osScheme.value += 1;
});

export function applyTheme(choice: ThemeChoice): void {
  theme.value = choice;
  if (choice === 'system') {
    window.localStorage.removeItem('strata.theme');
    delete document.documentElement.dataset.theme;
  } else {
    window.localStorage.setItem('strata.theme', choice);
    document.documentElement.dataset.theme = choice;
  }
}

applyTheme(theme.value);
