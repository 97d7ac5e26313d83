// The host registry and trusted host keys in SQLite (WAL) under data_dir (gpu-doctor.sqlite), the hosts
// wing's port (src/hosts/registry.ts): hosts added at run time survive restarts. Each write is one
// transaction: a kill -9 in the middle leaves the database as it was before or after.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import { checkNewEntry, FINGERPRINT, HOST_NAME, toEntry, withConfigPin, type HostEntry, type RegistryStore, type Row } from '../../hosts/registry.js';

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
