// The host registry: hosts from the config file plus hosts added at run time, the latter (and any
// trusted host keys) persisted in SQLite (WAL) under data_dir so they survive restarts. Each write
// is one transaction: a kill -9 in the middle leaves the database as it was before or after.
import Database from '../storage/sqlite-driver.js';
import { ensurePrivateDir, ensurePrivateFile } from '../core/private-files.js';
import { join } from 'node:path';

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
 * What the hosts service needs of a registry: this SQLite one, or the Postgres one shared by replicas
 * (src/storage/postgres/registry.ts), whose reads come from a snapshot that `refresh` reloads and whose
 * writes return promises.
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

export class HostRegistry implements RegistryStore {
  private db: Database.Database;
  private configHosts: Map<string, HostEntry>;

  constructor(dataDir: string, configHosts: HostEntry[]) {
    ensurePrivateDir(dataDir);
    this.db = new Database(ensurePrivateFile(join(dataDir, 'gpu-doctor.sqlite')));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS hosts (
        name TEXT PRIMARY KEY, host TEXT NOT NULL, port INTEGER, user TEXT, identity_file TEXT, added_at TEXT NOT NULL
      );
      CREATE TABLE IF NOT EXISTS host_keys (
        name TEXT PRIMARY KEY, fingerprint TEXT NOT NULL, trusted_at TEXT NOT NULL
      );`);
    this.configHosts = new Map(configHosts.map((h) => [h.name, h]));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /** Null for a name that fails validation or is not registered: hostile names are just unknown. */
  get(name: string): HostEntry | null {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) return null;
    const fromConfig = this.configHosts.get(name);
    const trusted = this.db.prepare('SELECT fingerprint FROM host_keys WHERE name = ?').get(name) as { fingerprint: string } | undefined;
    if (fromConfig) return withConfigPin(fromConfig, trusted?.fingerprint);
    const row = this.db.prepare('SELECT * FROM hosts WHERE name = ?').get(name) as Row | undefined;
    return row ? toEntry(row, trusted?.fingerprint) : null;
  }

  list(): HostEntry[] {
    const keys = new Map(
      (this.db.prepare('SELECT name, fingerprint FROM host_keys').all() as { name: string; fingerprint: string }[]).map((r) => [r.name, r.fingerprint]),
    );
    const out = [...this.configHosts.values()].map((h) => withConfigPin(h, keys.get(h.name)));
    for (const row of this.db.prepare('SELECT * FROM hosts ORDER BY name').all() as Row[]) {
      if (!this.configHosts.has(row.name)) out.push(toEntry(row, keys.get(row.name)));
    }
    return out.filter((h): h is HostEntry => h !== null);
  }

  isConfigHost(name: string): boolean {
    return this.configHosts.has(name);
  }

  add(entry: { name: string; host: string; port?: number; user?: string; identityFile?: string; hostKey?: string | null }): HostEntry {
    checkNewEntry(entry, this.configHosts.has(entry.name));
    const now = new Date().toISOString();
    this.db.transaction(() => {
      const exists = this.db.prepare('SELECT 1 FROM hosts WHERE name = ?').get(entry.name);
      if (exists) throw new Error(`${entry.name} already exists`);
      this.db
        .prepare('INSERT INTO hosts (name, host, port, user, identity_file, added_at) VALUES (?, ?, ?, ?, ?, ?)')
        .run(entry.name, entry.host, entry.port ?? null, entry.user ?? null, entry.identityFile ?? null, now);
      if (entry.hostKey)
        this.db.prepare('INSERT OR REPLACE INTO host_keys (name, fingerprint, trusted_at) VALUES (?, ?, ?)').run(entry.name, entry.hostKey, now);
    })();
    return this.get(entry.name)!;
  }

  remove(name: string): boolean {
    if (!HOST_NAME.test(name)) return false;
    if (this.configHosts.has(name)) throw new Error(`${name} is defined in the config file; remove it there`);
    return this.db.transaction(() => {
      const n = this.db.prepare('DELETE FROM hosts WHERE name = ?').run(name).changes;
      if (n) this.db.prepare('DELETE FROM host_keys WHERE name = ?').run(name);
      return n > 0;
    })();
  }

  trust(name: string, fingerprint: string): void {
    if (!FINGERPRINT.test(fingerprint)) throw new Error('invalid fingerprint');
    this.db.prepare('INSERT OR REPLACE INTO host_keys (name, fingerprint, trusted_at) VALUES (?, ?, ?)').run(name, fingerprint, new Date().toISOString());
  }

  integrityOk(): boolean {
    return (this.db.pragma('integrity_check', { simple: true }) as string) === 'ok';
  }
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
