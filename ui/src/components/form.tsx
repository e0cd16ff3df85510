// Small form pieces shared by the sign-in pages.

import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { messageOf } from '../lib/api';

export function Field(props: {
  label: string;
  type?: 'text' | 'email' | 'password';
  name: string;
  value: string;
  autocomplete?: string;
  onInput: (value: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        // Preact's types tie `role` to each input type separately; the
        // three types allowed here take the same attributes.
        type={(props.type ?? 'text') as 'text'}
        name={props.name}
        value={props.value}
        autocomplete={props.autocomplete}
        required
        onInput={(event) => props.onInput((event.target as HTMLInputElement).value)}
      />
    </label>
  );
}

export function Card(props: { title: string; children: ComponentChildren }) {
  return (
    <main class="card-page">
      <section class="card" aria-labelledby="card-title">
        <h1 id="card-title">{props.title}</h1>
        {props.children}
      </section>
    </main>
  );
}

export function ErrorNote(props: { message: string | null }) {
  if (!props.message) return null;
  return (
    <p class="error" role="alert">
      {props.message}
    </p>
  );
}

// A form's submit handler around `action`: busy while it runs, and the
// failure's message (or `describe`'s reading of it) as the error.
export function useSubmit(action: () => Promise<void>, describe: (caught: unknown) => string = messageOf) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (caught) {
      setError(describe(caught));
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, submit };
}
