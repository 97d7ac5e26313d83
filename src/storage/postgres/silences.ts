// `/gpu silence` in Postgres, shared by replicas: a silence set through one replica quiets the alerts of
// the replica that samples the host, and is listed and cancelled through either. The cap on silences in
// force is checked under a transaction-scoped advisory lock (two adds at once on two replicas cannot both
// pass it); a cancel updates only a row still in force, so two cancels of one silence end it once.
import type { NewSilence, Silence, SilenceCancel, SilenceStorage } from '../../watch/silences.js';
import { inTransaction, type Pool } from './connect.js';

/** Ended silences are kept this long (the list shows only those in force), then deleted. */
const KEEP_ENDED_MS = 30 * 24 * 3_600_000;

interface Raw {
  id: number | string;
  host: string;
  gpu: number | null;
  until_ms: number | string;
  created_ms: number | string;
  by_platform: string;
  by_user: string;
  cancelled_ms: number | string | null;
  cancelled_by: string | null;
}

const row = (r: Raw): Silence => ({
  id: Number(r.id),
  host: r.host,
  gpu: r.gpu === null ? null : Number(r.gpu),
  untilMs: Number(r.until_ms),
  createdMs: Number(r.created_ms),
  byPlatform: r.by_platform,
  byUser: r.by_user,
  cancelledMs: r.cancelled_ms === null ? null : Number(r.cancelled_ms),
  cancelledBy: r.cancelled_by,
});

export class PgSilenceStore implements SilenceStorage {
  constructor(private pool: Pool) {}

  async add(s: NewSilence, maxActive: number): Promise<Silence | null> {
    return inTransaction(this.pool, async (q) => {
      await q.query("SELECT pg_advisory_xact_lock(hashtext('gpu-doctor watch_silences'))");
      await q.query('DELETE FROM watch_silences WHERE coalesce(cancelled_ms, until_ms) < $1', [s.createdMs - KEEP_ENDED_MS]);
      const n = (await q.query<{ n: string }>('SELECT count(*) AS n FROM watch_silences WHERE cancelled_ms IS NULL AND until_ms > $1', [s.createdMs])).rows[0];
      if (Number(n.n) >= maxActive) return null;
      const r = await q.query<Raw>(
        'INSERT INTO watch_silences (host, gpu, until_ms, created_ms, by_platform, by_user) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *',
        [s.host, s.gpu, s.untilMs, s.createdMs, s.byPlatform, s.byUser],
      );
      return row(r.rows[0]);
    });
  }

  async active(nowMs: number): Promise<Silence[]> {
    const r = await this.pool.query<Raw>('SELECT * FROM watch_silences WHERE cancelled_ms IS NULL AND until_ms > $1 ORDER BY until_ms, id', [nowMs]);
    return r.rows.map(row);
  }

  async cancel(id: number, by: string, nowMs: number, mayCancel: (s: Silence) => boolean): Promise<SilenceCancel> {
    return inTransaction(this.pool, async (q) => {
      const r = (await q.query<Raw>('SELECT * FROM watch_silences WHERE id = $1 AND cancelled_ms IS NULL AND until_ms > $2 FOR UPDATE', [id, nowMs])).rows[0];
      if (!r) return { ok: false, reason: 'none' } as const;
      if (!mayCancel(row(r))) return { ok: false, reason: 'denied' } as const;
      await q.query('UPDATE watch_silences SET cancelled_ms = $1, cancelled_by = $2 WHERE id = $3', [nowMs, by, id]);
      return { ok: true, silence: row(r) } as const;
    });
  }
}
