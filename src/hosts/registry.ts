// The hosts wing's registry and keys port: hosts from the config file plus hosts added at run time (and
// any trusted host keys), what an entry is, and how a stored row is checked before it is used. The store
// survives restarts: src/storage/sqlite/registry.ts (data_dir/gpu-doctor.sqlite) or
// src/storage/postgres/registry.ts (shared by replicas) implements it; src/app.ts picks one.

export const HOST_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
export const USER_NAME = /^[a-z_][a-z0-9_.-]{0,31}$/i;
export const HOST_ADDR = /^[A-Za-z0-9._:-]{1,253}$/;
export const FINGERPRINT = /^SHA256:[A-Za-z0-9+/]{43}=?$/;

export interface HostEntry {
  name: string;
  host: string;
  port?: number;
  user?: string;
  identityFile?: string;
  /** Pinned host key fingerprint (config host_key, or trusted at run time). */
  hostKey?: string;
  /** Where hostKey comes from: a pin in the config file always wins over a trust made in chat. */
  pinnedBy?: 'config' | 'trust';
  origin: 'config' | 'runtime' | 'local';
}

/**
 * What the hosts service needs of a registry: the SQLite one (read directly), or the Postgres one shared by
 * replicas, whose reads come from a snapshot that `refresh` reloads and whose writes return promises.
 */
export interface RegistryStore {
  get(name: string): HostEntry | null;
  list(): HostEntry[];
  isConfigHost(name: string): boolean;
  add(entry: { name: string; host: string; port?: number; user?: string; identityFile?: string; hostKey?: string | null }): HostEntry | Promise<HostEntry>;
  remove(name: string): boolean | Promise<boolean>;
  trust(name: string, fingerprint: string): void | Promise<void>;
  /** Reloads what other replicas wrote (Postgres); absent for SQLite, which is read directly. */
  refresh?(): Promise<void>;
  close(): void | Promise<void>;
}

/** Checks an entry to add, as both registries do (throws with the reason). */
export function checkNewEntry(entry: { name: string; host: string; port?: number; user?: string; hostKey?: string | null }, isConfigHost: boolean): void {
  if (!HOST_NAME.test(entry.name)) throw new Error('invalid host name (letters, digits, . _ -, max 63)');
  if (!HOST_ADDR.test(entry.host)) throw new Error('invalid host address');
  if (entry.user !== undefined && !USER_NAME.test(entry.user)) throw new Error('invalid user name');
  if (entry.port !== undefined && !(Number.isInteger(entry.port) && entry.port >= 1 && entry.port <= 65535)) throw new Error('invalid port');
  if (entry.hostKey && !FINGERPRINT.test(entry.hostKey)) throw new Error('invalid host key fingerprint');
  if (isConfigHost) throw new Error(`${entry.name} is defined in the config file`);
}

export interface Row {
  name: string;
  host: string;
  port: number | null;
  user: string | null;
  identity_file: string | null;
}

/** Hosts already said to be skipped (once each, not at every read). */
const skippedRows = new Set<string>();
function skipRow(name: unknown, why: string): null {
  const shown = JSON.stringify(String(name).slice(0, 64));
  if (!skippedRows.has(shown + why)) {
    skippedRows.add(shown + why);
    process.stderr.write(`registry: host ${shown} skipped: its stored ${why} is not one \`hosts add\` or \`hosts trust\` could have written\n`);
  }
  return null;
}

/** An identity file as `hosts add` stores it: an absolute path (resolved when added), no control characters. */
const IDENTITY_FILE = /^\/[^\u0000-\u001f\u007f]{0,4095}$/;

/**
 * A registry row read back from the database (another replica, or anyone with access to it, may have written
 * it): used only when every field is one `hosts add` accepts and its trusted key is a fingerprint; else null
 * (the host is skipped, and the bot's log says so). A bad stored pin skips the host rather than dropping
 * the pin: the host is never reached unpinned.
 */
export function toEntry(row: Row, hostKey?: string): HostEntry | null {
  if (typeof row.name !== 'string' || !HOST_NAME.test(row.name)) return skipRow(row.name, 'name');
  if (typeof row.host !== 'string' || !HOST_ADDR.test(row.host)) return skipRow(row.name, 'address');
  if (row.port !== null && !(Number.isInteger(row.port) && row.port >= 1 && row.port <= 65535)) return skipRow(row.name, 'port');
  if (row.user !== null && (typeof row.user !== 'string' || !USER_NAME.test(row.user))) return skipRow(row.name, 'user');
  if (row.identity_file !== null && (typeof row.identity_file !== 'string' || !IDENTITY_FILE.test(row.identity_file)))
    return skipRow(row.name, 'identity file');
  if (hostKey !== undefined && (typeof hostKey !== 'string' || !FINGERPRINT.test(hostKey))) return skipRow(row.name, 'host key');
  return {
    name: row.name,
    host: row.host,
    ...(row.port ? { port: row.port } : {}),
    ...(row.user ? { user: row.user } : {}),
    ...(row.identity_file ? { identityFile: row.identity_file } : {}),
    ...(hostKey ? { hostKey, pinnedBy: 'trust' as const } : {}),
    origin: 'runtime',
  };
}

/**
 * A config host with its pin: host_key from the config file wins; a chat trust fills in only without one. A
 * stored trust that is no fingerprint skips the host (null), as for a registry row.
 */
export function withConfigPin(h: HostEntry, trusted: string | undefined): HostEntry | null {
  if (h.hostKey) return { ...h, pinnedBy: 'config' };
  if (trusted !== undefined && (typeof trusted !== 'string' || !FINGERPRINT.test(trusted))) return skipRow(h.name, 'host key');
  return trusted ? { ...h, hostKey: trusted, pinnedBy: 'trust' } : { ...h };
}
