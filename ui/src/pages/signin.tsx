import { useEffect, useState } from 'preact/hooks';
import { Card, ErrorNote, Field, useSubmit } from '../components/form';
import { ApiError, get, post, type User, messageOf } from '../lib/api';
import { here, navigate } from '../lib/location';
import { afterSignIn, me } from '../session';

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [setupNeeded, setSetupNeeded] = useState(false);

  useEffect(() => {
    get<{ setup_needed: boolean }>('/api/v1/auth/setup')
      .then((answer) => setSetupNeeded(answer.setup_needed))
      .catch(() => setSetupNeeded(false));
  }, []);

  const { busy, error, submit } = useSubmit(
    async () => {
      me.value = await post<User>('/api/v1/auth/login', { email, password });
      const next = afterSignIn(here.value.params.get('next'));
      // The OAuth consent page (docs/mcp.md) is the server's, not the app's.
      if (next.startsWith('/oauth/')) window.location.assign(next);
      else navigate(next, true);
    },
    (caught) =>
      caught instanceof ApiError && caught.status === 429
        ? `Too many failed attempts. Try again in ${caught.retryAfterSeconds ?? 1} s.`
        : messageOf(caught),
  );

  return (
    <Card title="Sign in to strata">
      {setupNeeded && (
        <p class="note">
          No account exists yet. Open the setup link <code>strata serve</code> printed when it
          started (a restart prints a new one), or run <code>strata user create</code>.
        </p>
      )}
      <form onSubmit={submit}>
        <Field label="Email" type="email" name="email" autocomplete="username" value={email} onInput={setEmail} />
        <Field
          label="Password"
          type="password"
          name="password"
          autocomplete="current-password"
          value={password}
          onInput={setPassword}
        />
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </Card>
  );
}
