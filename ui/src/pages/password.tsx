import { useState } from 'preact/hooks';
import { Card, ErrorNote, Field, useSubmit } from '../components/form';
import { post, type User } from '../lib/api';
import { fragmentValue, navigate } from '../lib/location';
import { me } from '../session';

// Where a one-time password link (from an admin or `strata user`) leads.
export function PasswordPage() {
  const token = fragmentValue('token');
  const [password, setPassword] = useState('');
  const { busy, error, submit } = useSubmit(async () => {
    me.value = await post<User>('/api/v1/auth/password', { token, password });
    navigate('/services', true);
  });

  return (
    <Card title="Set your password">
      {!token ? (
        <p class="note">Open the whole link you were given; it ends in #token=….</p>
      ) : (
        <form onSubmit={submit}>
          <Field
            label="New password (at least 12 characters)"
            type="password"
            name="password"
            autocomplete="new-password"
            value={password}
            onInput={setPassword}
          />
          <ErrorNote message={error} />
          <button type="submit" disabled={busy}>
            {busy ? 'Saving…' : 'Set password and sign in'}
          </button>
        </form>
      )}
    </Card>
  );
}
