// Who is signed in. `me` is undefined while the first answer is awaited,
// null when nobody is.

import { signal } from '@preact/signals';
import { ApiError, get, post, type User } from './lib/api';
import { navigate } from './lib/location';

export const me = signal<User | null | undefined>(undefined);

export async function loadMe(): Promise<void> {
  try {
    me.value = await get<User>('/api/v1/auth/me');
  } catch (error) {
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      me.value = null;
    } else {
      throw error;
    }
  }
}

export async function signOut(): Promise<void> {
  try {
    await post('/api/v1/auth/logout', {});
  } finally {
    me.value = null;
    navigate('/signin');
  }
}

// Where to go after signing in: the page that sent the person to sign in.
export function afterSignIn(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') ? next : '/services';
}
