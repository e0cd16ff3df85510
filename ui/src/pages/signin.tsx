import { useEffect, useState } from 'preact/hooks';
import { Card, ErrorNote, Field } from '../components/form';
import { ApiError, get, post, type User } from '../lib/api';
import { here, navigate } from '../lib/location';
import { afterSignIn, me } from '../session';

export function SignInPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [setupNeeded, setSetupNeeded] = useState(false);

  useEffect(() => {
    get<{ setup_needed: boolean }>('/api/v1/auth/setup')
      .then((answer) => setSetupNeeded(answer.setup_needed))
      .catch(() => setSetupNeeded(false));
  }, []);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      me.value = await post<User>('/api/v1/auth/login', { email, password });
      navigate(afterSignIn(here.value.params.get('next')), true);
    } catch (caught) {
      if (caught instanceof ApiError && caught.status === 429) {
        setError(`Too many failed attempts. Try again in ${caught.retryAfterSeconds ?? 1} s.`);
      } else {
        setError(caught instanceof Error ? caught.message : String(caught));
      }
    } finally {
      setBusy(false);
    }
  }

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
