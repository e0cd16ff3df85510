import { useState } from 'preact/hooks';
import { Card, ErrorNote, Field, useSubmit } from '../components/form';
import { ApiError, post, type User, messageOf } from '../lib/api';
import { fragmentValue, navigate } from '../lib/location';
import { me } from '../session';

// The first-boot page: the one-time link strata serve prints opens it, with
// the token in the fragment (never sent to the server's logs).
export function SetupPage() {
  const token = fragmentValue('token');
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [password, setPassword] = useState('');
  const { busy, error, submit } = useSubmit(
    async () => {
      me.value = await post<User>('/api/v1/auth/setup', { token, email, name, password });
      navigate('/services', true);
    },
    (caught) =>
      caught instanceof ApiError && caught.status === 410
        ? 'Setup is already done: an account exists. Sign in instead.'
        : messageOf(caught),
  );

  if (!token) {
    return (
      <Card title="Set up strata">
        <p class="note">
          This page needs the one-time setup link that <code>strata serve</code> printed when it
          started with no account. Open that link as it is (it ends in <code>#token=…</code>).
        </p>
        <a href="/signin">Sign in</a>
      </Card>
    );
  }
  return (
    <Card title="Create the first admin">
      <p class="note">This account can add people, tokens and settings later.</p>
      <form onSubmit={submit}>
        <Field label="Email" type="email" name="email" autocomplete="username" value={email} onInput={setEmail} />
        <Field label="Name" name="name" autocomplete="name" value={name} onInput={setName} />
        <Field
          label="Password (at least 12 characters)"
          type="password"
          name="password"
          autocomplete="new-password"
          value={password}
          onInput={setPassword}
        />
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Creating…' : 'Create admin and sign in'}
        </button>
      </form>
    </Card>
  );
}
