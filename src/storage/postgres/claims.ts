// `/gpu whoami` claims in Postgres, shared by replicas: a claim made through one replica is listed,
// approved or rejected through the other, and every replica's owner map (src/owners/directory.ts, read
// again before each command and digest) names the person. The same operations as the SQLite ClaimStore.
// Two admins approving at once on two replicas leave one active mapping: a claim is locked (FOR UPDATE)
// while it is decided, and a partial unique index allows one active row per unix user, host scope and
// platform (the approval that loses the race is tried again, and replaces the winner's).
import type { ClaimPlatform, ClaimRow, ClaimState, ClaimStorage } from '../../owners/claims.js';
import { inTransaction, type Pool } from './connect.js';

interface Raw {
  id: number | string;
  unix_user: string;
  host: string | null;
  platform: string;
  user_id: string;
  display_name: string | null;
  state: string;
  created_ms: number | string;
  decided_ms: number | string | null;
  decided_by: string | null;
}

const row = (r: Raw): ClaimRow => ({
  id: Number(r.id),
  unixUser: r.unix_user,
  host: r.host,
  platform: r.platform as ClaimPlatform,
  userId: r.user_id,
  name: r.display_name,
  state: r.state as ClaimState,
  createdMs: Number(r.created_ms),
  decidedMs: r.decided_ms === null ? null : Number(r.decided_ms),
  decidedBy: r.decided_by,
});

const UNIQUE_VIOLATION = '23505';

export class PgClaimStore implements ClaimStorage {
  constructor(private pool: Pool) {}

  async get(id: number): Promise<ClaimRow | null> {
    const r = await this.pool.query<Raw>('SELECT * FROM owner_claims WHERE id = $1', [id]);
    return r.rows[0] ? row(r.rows[0]) : null;
  }

  async addPending(
    c: { unixUser: string; host: string | null; platform: ClaimPlatform; userId: string; name?: string | null },
    now = Date.now(),
  ): Promise<{ claim: ClaimRow; existed: boolean }> {
    return inTransaction(this.pool, async (q) => {
      // One chat user's claims are made one at a time (the same claim sent to both replicas is one row).
      await q.query("SELECT pg_advisory_xact_lock(hashtext('gpu-doctor claim ' || $1 || ' ' || $2))", [c.platform, c.userId]);
      const same = (
        await q.query<Raw>(
          `SELECT * FROM owner_claims WHERE state IN ('pending', 'active') AND unix_user = $1 AND host IS NOT DISTINCT FROM $2 AND platform = $3 AND user_id = $4
           ORDER BY id DESC LIMIT 1`,
          [c.unixUser, c.host, c.platform, c.userId],
        )
      ).rows[0];
      if (same && (same.state === 'active' || !c.name || c.name === same.display_name)) return { claim: row(same), existed: true };
      // Asked again with another name: the pending claim takes it (an admin has not seen the old one yet).
      if (same) {
        const u = await q.query<Raw>('UPDATE owner_claims SET display_name = $1 WHERE id = $2 RETURNING *', [c.name, same.id]);
        return { claim: row(u.rows[0]), existed: true };
      }
      const ins = await q.query<Raw>(
        "INSERT INTO owner_claims (unix_user, host, platform, user_id, display_name, state, created_ms) VALUES ($1, $2, $3, $4, $5, 'pending', $6) RETURNING *",
        [c.unixUser, c.host, c.platform, c.userId, c.name ?? null, now],
      );
      return { claim: row(ins.rows[0]), existed: false };
    });
  }

  async pendingOf(platform: ClaimPlatform, userId: string): Promise<ClaimRow[]> {
    const r = await this.pool.query<Raw>("SELECT * FROM owner_claims WHERE state = 'pending' AND platform = $1 AND user_id = $2 ORDER BY id", [
      platform,
      userId,
    ]);
    return r.rows.map(row);
  }

  async pending(): Promise<ClaimRow[]> {
    return (await this.pool.query<Raw>("SELECT * FROM owner_claims WHERE state = 'pending' ORDER BY id")).rows.map(row);
  }

  async active(): Promise<ClaimRow[]> {
    return (await this.pool.query<Raw>("SELECT * FROM owner_claims WHERE state = 'active' ORDER BY id")).rows.map(row);
  }

  async of(platform: ClaimPlatform, userId: string): Promise<ClaimRow[]> {
    const r = await this.pool.query<Raw>("SELECT * FROM owner_claims WHERE state IN ('pending', 'active') AND platform = $1 AND user_id = $2 ORDER BY id", [
      platform,
      userId,
    ]);
    return r.rows.map(row);
  }

  /** As the SQLite store: the pending claim becomes the active mapping; one active before it is replaced. Null when not pending. */
  async approve(id: number, by: string, now = Date.now()): Promise<{ claim: ClaimRow; replaced: ClaimRow | null } | null> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.approveOnce(id, by, now);
      } catch (e) {
        // Another replica made another claim for the same unix user active meanwhile: once more, replacing it.
        if ((e as { code?: string }).code !== UNIQUE_VIOLATION || attempt >= 2) throw e;
      }
    }
  }

  private approveOnce(id: number, by: string, now: number): Promise<{ claim: ClaimRow; replaced: ClaimRow | null } | null> {
    return inTransaction(this.pool, async (q) => {
      const c = (await q.query<Raw>('SELECT * FROM owner_claims WHERE id = $1 FOR UPDATE', [id])).rows[0];
      if (!c || c.state !== 'pending') return null;
      const prev = (
        await q.query<Raw>(
          "SELECT * FROM owner_claims WHERE state = 'active' AND unix_user = $1 AND host IS NOT DISTINCT FROM $2 AND platform = $3 FOR UPDATE",
          [c.unix_user, c.host, c.platform],
        )
      ).rows[0];
      if (prev) await q.query("UPDATE owner_claims SET state = 'replaced', decided_ms = $1, decided_by = $2 WHERE id = $3", [now, by, prev.id]);
      const done = await q.query<Raw>("UPDATE owner_claims SET state = 'active', decided_ms = $1, decided_by = $2 WHERE id = $3 RETURNING *", [now, by, id]);
      return { claim: row(done.rows[0]), replaced: prev ? row(prev) : null };
    });
  }

  /** Rejects a pending claim (or ends an active one). Null when the id is neither. */
  async reject(id: number, by: string, now = Date.now()): Promise<ClaimRow | null> {
    const r = await this.pool.query<Raw>(
      "UPDATE owner_claims SET state = 'rejected', decided_ms = $1, decided_by = $2 WHERE id = $3 AND state IN ('pending', 'active') RETURNING *",
      [now, by, id],
    );
    return r.rows[0] ? row(r.rows[0]) : null;
  }

  close(): void {
    /* the pool is the storage's, closed with it */
  }
}
