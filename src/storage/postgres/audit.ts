// The audit trail (src/ops/audit.ts) in Postgres: one row per command, from every replica (the replica's id in its own column).
// record() never waits on the database (a chat reply is never held up by it); a failed write is reported
// to onError, never thrown.
import type { AuditEntry, AuditSink } from '../../ops/audit.js';
import { storableEntry } from '../storable-text.js';
import type { Pool } from './connect.js';

export class PgAuditStore implements AuditSink {
  private pending = new Set<Promise<unknown>>();

  constructor(
    private pool: Pool,
    private replica: string,
    private onError: (e: unknown) => void = () => {},
  ) {}

  record(entry: AuditEntry): void {
    const e = storableEntry(entry);
    const p = this.pool
      .query('INSERT INTO audit (ts, platform, username, channel, command, outcome, ms, replica) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)', [
        e.ts,
        e.platform,
        e.user,
        e.channel,
        e.command,
        e.outcome,
        e.ms,
        this.replica,
      ])
      .catch((err: unknown) => this.onError(err))
      .finally(() => this.pending.delete(p));
    this.pending.add(p);
  }

  async recent(limit = 100): Promise<(AuditEntry & { replica: string | null })[]> {
    const r = await this.pool.query<{
      ts: number;
      platform: string;
      username: string;
      channel: string | null;
      command: string;
      outcome: string;
      ms: number;
      replica: string | null;
    }>('SELECT ts, platform, username, channel, command, outcome, ms, replica FROM audit ORDER BY ts DESC, id DESC LIMIT $1', [limit]);
    return r.rows.map((x) => ({
      ts: x.ts,
      platform: x.platform,
      user: x.username,
      channel: x.channel,
      command: x.command,
      outcome: x.outcome,
      ms: x.ms,
      replica: x.replica,
    }));
  }

  /** Waits for the writes in flight (at close). */
  async flush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  close(): void {
    /* the pool is the storage's; flush() first to keep the last rows */
  }
}
