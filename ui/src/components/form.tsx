// Small form pieces shared by the sign-in pages.

import type { ComponentChildren } from 'preact';

export function Field(props: {
  label: string;
  type?: string;
  name: string;
  value: string;
  autocomplete?: string;
  onInput: (value: string) => void;
}) {
  return (
    <label class="field">
      <span>{props.label}</span>
      <input
        type={props.type ?? 'text'}
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
