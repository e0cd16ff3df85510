import { useEffect, useState } from 'preact/hooks';
import { ErrorNote } from '../components/form';
import {
  get,
  type OAuthGrant,
  patch,
  type PasswordLink,
  post,
  remove,
  type TokenInfo,
  type User,
  messageOf,
} from '../lib/api';
import { here } from '../lib/location';
import { me } from '../session';

const TABS = [
  { path: '/settings/connect', label: 'Connect your telemetry', admin: false },
  { path: '/settings/agents', label: 'Connected agents', admin: false },
  { path: '/settings/tokens', label: 'Tokens', admin: true },
  { path: '/settings/users', label: 'Users', admin: true },
];

export function SettingsPage() {
  const isAdmin = me.value?.role === 'admin';
  const path = here.value.path === '/settings' ? '/settings/connect' : here.value.path;
  return (
    <section>
      <h1>Settings</h1>
      <nav class="tabs" aria-label="Settings">
        {TABS.filter((tab) => isAdmin || !tab.admin).map((tab) => (
          <a href={tab.path} aria-current={tab.path === path ? 'page' : undefined}>
            {tab.label}
          </a>
        ))}
      </nav>
      {path === '/settings/connect' && <Connect />}
      {path === '/settings/agents' && <Agents />}
      {path === '/settings/tokens' && (isAdmin ? <Tokens /> : <AdminsOnly />)}
      {path === '/settings/users' && (isAdmin ? <Users /> : <AdminsOnly />)}
    </section>
  );
}

function AdminsOnly() {
  return <p class="note">Only admins manage tokens and users.</p>;
}

// A list the page shows from `path`'s `field`, and act(), which runs a
// change and reloads the list (a failure becomes the error shown).
function useList<T>(path: string, field: string) {
  const [items, setItems] = useState<T[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    get<Record<string, T[]>>(path)
      .then((answer) => setItems(answer[field]))
      .catch((caught) => setError(messageOf(caught)));
  useEffect(() => void load(), []);
  const act = async (change: () => Promise<unknown>) => {
    setError(null);
    try {
      await change();
      await load();
    } catch (caught) {
      setError(messageOf(caught));
    }
  };
  return { items, error, act };
}

function when(time: string | null): string {
  return time === null ? '–' : new Date(time).toLocaleString();
}

// Copyable settings for SDKs and the Collector.
function Connect() {
  const host = window.location.hostname;
  return (
    <div>
      <p>
        Send OTLP to this server with an <strong>ingest</strong> token (the first boot printed one;
        admins create more under Tokens). With an OpenTelemetry SDK, set:
      </p>
      <pre aria-label="SDK environment variables">
        {`export OTEL_EXPORTER_OTLP_ENDPOINT=http://${host}:4318
export OTEL_EXPORTER_OTLP_HEADERS=Authorization=Bearer%20<ingest token>
# or over gRPC:
export OTEL_EXPORTER_OTLP_PROTOCOL=grpc
export OTEL_EXPORTER_OTLP_ENDPOINT=http://${host}:4317`}
      </pre>
      <p>From an OpenTelemetry Collector:</p>
      <pre aria-label="Collector exporter">
        {`exporters:
  otlphttp/strata:
    endpoint: http://${host}:4318
    headers:
      Authorization: Bearer <ingest token>
service:
  pipelines:
    traces: { exporters: [otlphttp/strata] }
    logs: { exporters: [otlphttp/strata] }
    metrics: { exporters: [otlphttp/strata] }`}
      </pre>
    </div>
  );
}

// The MCP clients the signed-in user allowed on the OAuth consent page
// (docs/mcp.md, "Authorization"), each revocable.
function Agents() {
  const { items: grants, error, act } = useList<OAuthGrant>('/api/v1/auth/me/oauth-grants', 'grants');

  async function revoke(grant: OAuthGrant) {
    const question = `Revoke the access of "${grant.client_name}"? Its tokens stop working at once; it has to ask you again.`;
    if (!window.confirm(question)) return;
    await act(() => remove(`/api/v1/auth/me/oauth-grants/${grant.id}`));
  }

  return (
    <div>
      <p>
        Agents (MCP clients) you allowed to read this server's telemetry as you. Revoking one refuses its tokens at
        once.
      </p>
      <ErrorNote message={error} />
      {grants && grants.length === 0 && <p class="note">No agent has access.</p>}
      {grants && grants.length > 0 && (
        <table class="data" aria-label="Connected agents">
          <thead>
            <tr>
              <th scope="col">Agent</th>
              <th scope="col">Resource</th>
              <th scope="col">Allowed</th>
              <th scope="col">Last token issued</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {grants.map((grant) => (
              <tr key={grant.id}>
                <th scope="row">{grant.client_name}</th>
                <td>{grant.resource}</td>
                <td>{when(grant.created_at)}</td>
                <td>{when(grant.last_issued_at)}</td>
                <td>
                  <button type="button" aria-label={`Revoke ${grant.client_name}`} onClick={() => void revoke(grant)}>
                    Revoke
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function Tokens() {
  const { items: tokens, error, act } = useList<TokenInfo>('/api/v1/tokens', 'tokens');
  const [name, setName] = useState('');
  const [scope, setScope] = useState<TokenInfo['scope']>('ingest');
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);

  async function create(event: Event) {
    event.preventDefault();
    await act(async () => {
      setCreated(await post<{ name: string; token: string }>('/api/v1/tokens', { name, scope }));
      setName('');
    });
  }

  async function revoke(token: TokenInfo) {
    if (!window.confirm(`Revoke "${token.name}"? Clients using it are refused within a second.`)) return;
    await act(() => remove(`/api/v1/tokens/${token.id}`));
  }

  return (
    <div>
      <form class="inline" onSubmit={create}>
        <label>
          <span>Name</span>
          <input name="token-name" value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <span>Scope</span>
          <select value={scope} onChange={(e) => setScope((e.target as HTMLSelectElement).value as TokenInfo['scope'])}>
            <option value="ingest">ingest (send telemetry)</option>
            <option value="read">read (query)</option>
            <option value="admin">admin (everything)</option>
          </select>
        </label>
        <button type="submit">Create token</button>
      </form>
      {created && (
        <div class="created" role="status">
          <p>
            Token <strong>{created.name}</strong>: copy it now, it is not shown again.
          </p>
          <pre aria-label="New token">{created.token}</pre>
        </div>
      )}
      <ErrorNote message={error} />
      {tokens && (
        <table class="data" aria-label="Tokens">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Scope</th>
              <th scope="col">Created</th>
              <th scope="col">Last used</th>
              <th scope="col">Revoked</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {tokens.map((token) => (
              <tr key={token.id}>
                <th scope="row">{token.name}</th>
                <td>{token.scope}</td>
                <td>{when(token.created_at)}</td>
                <td>{when(token.last_used_at)}</td>
                <td>{when(token.revoked_at)}</td>
                <td>
                  {token.revoked_at === null && (
                    <button type="button" onClick={() => void revoke(token)}>
                      Revoke
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function Users() {
  const { items: users, error, act } = useList<User>('/api/v1/users', 'users');
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [role, setRole] = useState<User['role']>('viewer');
  const [link, setLink] = useState<{ email: string; link: PasswordLink } | null>(null);

  async function create(event: Event) {
    event.preventDefault();
    await act(async () => {
      const answer = await post<{ user: User; password_link: PasswordLink }>('/api/v1/users', {
        email,
        name,
        role,
      });
      setLink({ email: answer.user.email, link: answer.password_link });
      setEmail('');
      setName('');
    });
  }

  return (
    <div>
      <form class="inline" onSubmit={create}>
        <label>
          <span>Email</span>
          <input type="email" name="user-email" value={email} required onInput={(e) => setEmail((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <span>Name</span>
          <input name="user-name" value={name} required onInput={(e) => setName((e.target as HTMLInputElement).value)} />
        </label>
        <label>
          <span>Role</span>
          <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value as User['role'])}>
            <option value="viewer">viewer</option>
            <option value="operator">operator</option>
            <option value="admin">admin</option>
          </select>
        </label>
        <button type="submit">Add user</button>
      </form>
      {link && (
        <div class="created" role="status">
          <p>
            Give <strong>{link.email}</strong> this link to set a password (it works once, until{' '}
            {when(link.link.expires_at)}):
          </p>
          <pre aria-label="Password link">{link.link.url}</pre>
        </div>
      )}
      <ErrorNote message={error} />
      {users && (
        <table class="data" aria-label="Users">
          <thead>
            <tr>
              <th scope="col">Email</th>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Status</th>
              <th scope="col">Last sign-in</th>
              <th scope="col"><span class="visually-hidden">Actions</span></th>
            </tr>
          </thead>
          <tbody>
            {users.map((user) => (
              <tr key={user.id}>
                <th scope="row">{user.email}</th>
                <td>{user.name}</td>
                <td>
                  <select
                    aria-label={`Role of ${user.email}`}
                    value={user.role}
                    onChange={(e) =>
                      void act(() => patch(`/api/v1/users/${user.id}`, { role: (e.target as HTMLSelectElement).value }))
                    }
                  >
                    <option value="viewer">viewer</option>
                    <option value="operator">operator</option>
                    <option value="admin">admin</option>
                  </select>
                </td>
                <td>{!user.active ? 'deactivated' : user.has_password ? 'active' : 'invited'}</td>
                <td>{when(user.last_sign_in_at)}</td>
                <td class="actions">
                  <button
                    type="button"
                    onClick={() =>
                      void act(async () => {
                        const answer = await post<{ password_link: PasswordLink }>(
                          `/api/v1/users/${user.id}/password-link`,
                          {},
                        );
                        setLink({ email: user.email, link: answer.password_link });
                      })
                    }
                  >
                    Password link
                  </button>
                  <button
                    type="button"
                    onClick={() => void act(() => patch(`/api/v1/users/${user.id}`, { active: !user.active }))}
                  >
                    {user.active ? 'Deactivate' : 'Activate'}
                  </button>
                  <button
                    type="button"
                    onClick={() => {
                      if (window.confirm(`Delete ${user.email} and their saved queries?`)) {
                        void act(() => remove(`/api/v1/users/${user.id}`));
                      }
                    }}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
