// The keyboard shortcuts (lib/shortcuts.ts) and their `?` overlay: a modal
// <dialog>, which keeps focus inside and closes on Esc by itself.

import { signal } from '@preact/signals';
import { useEffect, useRef } from 'preact/hooks';
import { navigate } from '../lib/location';
import { SHORTCUTS, shortcutFor, typing } from '../lib/shortcuts';
import { applyTheme } from '../lib/theme';

// Whether the overlay is open (the header's `?` button opens it too).
export const shortcutsOpen = signal(false);

export function Shortcuts() {
  const dialog = useRef<HTMLDialogElement>(null);
  const open = shortcutsOpen.value;
  const setOpen = (value: boolean) => (shortcutsOpen.value = value);

  useEffect(() => {
    let previous: string | null = null;
    let prefixTimer = 0;
    const onKey = (event: KeyboardEvent) => {
      if (event.defaultPrevented || dialog.current?.open) return;
      if (typing(event.target as HTMLInputElement | null, event)) return;
      const action = shortcutFor(previous, event.key);
      previous = null;
      window.clearTimeout(prefixTimer);
      if (!action) return;
      event.preventDefault();
      switch (action.kind) {
        case 'prefix':
          previous = 'g';
          // A `g` alone is forgotten after a second and a half.
          prefixTimer = window.setTimeout(() => (previous = null), 1500);
          break;
        case 'go':
          navigate(action.path);
          break;
        case 'focus-search': {
          const field = document.querySelector<HTMLElement>(
            'main form[role="search"] input, main input[type="search"], main input:not([type="hidden"]), main .cm-content',
          );
          field?.focus();
          break;
        }
        case 'toggle-theme': {
          const dark = document.documentElement.dataset.theme === 'dark' ||
            (!document.documentElement.dataset.theme && window.matchMedia('(prefers-color-scheme: dark)').matches);
          applyTheme(dark ? 'light' : 'dark');
          break;
        }
        case 'help':
          setOpen(true);
          break;
      }
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      window.clearTimeout(prefixTimer);
    };
  }, []);

  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (open && !element.open) element.showModal();
    if (!open && element.open) element.close();
  }, [open]);

  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title" onClose={() => setOpen(false)}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      {open && (
        <table class="shortcut-list" aria-label="Keyboard shortcuts">
          <tbody>
            {SHORTCUTS.map(([keys, what]) => (
              <tr>
                <th scope="row">
                  {keys.split(' ').map((key) => (
                    <kbd>{key}</kbd>
                  ))}
                </th>
                <td>{what}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  );
}
