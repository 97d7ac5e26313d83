// The host registry and trusted host keys in Postgres, shared by every replica. Reads are answered from
// a snapshot of the two small tables, reloaded by refresh() (the hosts service calls it before every
// command and sampler round), so a host added or trusted through one replica is seen by the next command
// on any other. Each write is one transaction on the server; a replica killed mid-write leaves it either
// done or not done.
import { checkNewEntry, FINGERPRINT, HOST_NAME, toEntry, withConfigPin, type HostEntry, type RegistryStore, type Row } from '../../hosts/registry.js';
import { inTransaction, type Pool } from './connect.js';

interface PgRow {
  name: string;
  host: string;
  port: number | null;
  username: string | null;
  identity_file: string | null;
}

export class PgHostRegistry implements RegistryStore {
  private configHosts: Map<string, HostEntry>;
  private rows = new Map<string, Row>();
  private keys = new Map<string, string>();

  constructor(
    private pool: Pool,
    configHosts: HostEntry[],
  ) {
    this.configHosts = new Map(configHosts.map((h) => [h.name, h]));
  }

  async refresh(): Promise<void> {
    const [hosts, keys] = await Promise.all([
      this.pool.query<PgRow>('SELECT name, host, port, username, identity_file FROM registry_hosts ORDER BY name'),
      this.pool.query<{ name: string; fingerprint: string }>('SELECT name, fingerprint FROM host_keys'),
    ]);
    this.rows = new Map(hosts.rows.map((r) => [r.name, { name: r.name, host: r.host, port: r.port, user: r.username, identity_file: r.identity_file }]));
    this.keys = new Map(keys.rows.map((r) => [r.name, r.fingerprint]));
  }

  get(name: string): HostEntry | null {
    if (typeof name !== 'string' || !HOST_NAME.test(name)) return null;
    const fromConfig = this.configHosts.get(name);
    if (fromConfig) return withConfigPin(fromConfig, this.keys.get(name));
    const row = this.rows.get(name);
    return row ? toEntry(row, this.keys.get(name)) : null;
  }

  list(): HostEntry[] {
    const all = [...this.configHosts.values()].map((h) => withConfigPin(h, this.keys.get(h.name)));
    for (const row of this.rows.values()) if (!this.configHosts.has(row.name)) all.push(toEntry(row, this.keys.get(row.name)));
    const out = all.filter((h): h is HostEntry => h !== null);
    return out;
  }

  isConfigHost(name: string): boolean {
    return this.configHosts.has(name);
  }

  async add(entry: { name: string; host: string; port?: number; user?: string; identityFile?: string; hostKey?: string | null }): Promise<HostEntry> {
    checkNewEntry(entry, this.configHosts.has(entry.name));
    const now = new Date().toISOString();
    await inTransaction(this.pool, async (c) => {
      const r = await c.query(
        'INSERT INTO registry_hosts (name, host, port, username, identity_file, added_at) VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (name) DO NOTHING',
        [entry.name, entry.host, entry.port ?? null, entry.user ?? null, entry.identityFile ?? null, now],
      );
      if (r.rowCount !== 1) throw new Error(`${entry.name} already exists`);
      if (entry.hostKey)
        await c.query(
          'INSERT INTO host_keys (name, fingerprint, trusted_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, trusted_at = excluded.trusted_at',
          [entry.name, entry.hostKey, now],
        );
    });
    await this.refresh();
    return this.get(entry.name)!;
  }

  async remove(name: string): Promise<boolean> {
    if (!HOST_NAME.test(name)) return false;
    if (this.configHosts.has(name)) throw new Error(`${name} is defined in the config file; remove it there`);
    const n = await inTransaction(this.pool, async (c) => {
      const r = await c.query('DELETE FROM registry_hosts WHERE name = $1', [name]);
      if (r.rowCount) await c.query('DELETE FROM host_keys WHERE name = $1', [name]);
      return r.rowCount ?? 0;
    });
    await this.refresh();
    return n > 0;
  }

  async trust(name: string, fingerprint: string): Promise<void> {
    if (!FINGERPRINT.test(fingerprint)) throw new Error('invalid fingerprint');
    await this.pool.query(
      'INSERT INTO host_keys (name, fingerprint, trusted_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO UPDATE SET fingerprint = excluded.fingerprint, trusted_at = excluded.trusted_at',
      [name, fingerprint, new Date().toISOString()],
    );
    await this.refresh();
  }

  close(): void {
    /* the pool is the storage's, closed with it */
  }
}
