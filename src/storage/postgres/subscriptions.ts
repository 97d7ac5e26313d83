// `/gpu notify` subscriptions in Postgres, shared by replicas (the SubscriptionStorage port of
// src/fleet/subscriptions.ts): the same operations as the SQLite store's, async. A subscription made
// through one replica is listed and cancelled through any; closing is one UPDATE guarded by state =
// 'open', so of two replicas closing one subscription at once exactly one sends its message.
import {
  KEEP_CLOSED_SUBSCRIPTIONS,
  SUBSCRIPTION_NOTE_CHARS,
  type SubscriptionRow,
  type SubscriptionState,
  type SubscriptionStorage,
} from '../../fleet/subscriptions.js';
import type { Pool } from './connect.js';

type Owner = { platform: string; userId: string };

export class PgSubscriptionStore implements SubscriptionStorage {
  constructor(private pool: Pool) {}

  async addSubscription(s: Omit<SubscriptionRow, 'id' | 'state' | 'closedMs' | 'note'>): Promise<SubscriptionRow> {
    const r = await this.pool.query<{ id: number }>(
      'INSERT INTO notify_subscriptions (platform, user_id, size_mib, size, count, shared, created_ms, expires_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id',
      [s.platform, s.userId, s.sizeMiB, s.size, s.count, s.shared, s.createdMs, s.expiresMs],
    );
    return { ...s, id: r.rows[0].id, state: 'open', closedMs: null, note: null };
  }

  async openSubscriptions(owner?: Owner): Promise<SubscriptionRow[]> {
    const r = owner
      ? await this.pool.query("SELECT * FROM notify_subscriptions WHERE state = 'open' AND platform = $1 AND user_id = $2 ORDER BY id", [
          owner.platform,
          owner.userId,
        ])
      : await this.pool.query("SELECT * FROM notify_subscriptions WHERE state = 'open' ORDER BY id");
    return r.rows.map(subscriptionRow);
  }

  async subscription(id: number): Promise<SubscriptionRow | null> {
    const r = await this.pool.query('SELECT * FROM notify_subscriptions WHERE id = $1', [id]);
    return r.rows[0] ? subscriptionRow(r.rows[0] as Record<string, unknown>) : null;
  }

  async closeSubscription(id: number, state: Exclude<SubscriptionState, 'open'>, nowMs: number, note: string | null = null, owner?: Owner): Promise<boolean> {
    const r = owner
      ? await this.pool.query(
          "UPDATE notify_subscriptions SET state = $1, closed_ms = $2, note = $3 WHERE id = $4 AND state = 'open' AND platform = $5 AND user_id = $6",
          [state, nowMs, note, id, owner.platform, owner.userId],
        )
      : await this.pool.query("UPDATE notify_subscriptions SET state = $1, closed_ms = $2, note = $3 WHERE id = $4 AND state = 'open'", [
          state,
          nowMs,
          note,
          id,
        ]);
    if (r.rowCount !== 1) return false;
    // As the SQLite store: the user's newest KEEP_CLOSED_SUBSCRIPTIONS closed ones are kept, older ones deleted.
    await this.pool.query(
      `DELETE FROM notify_subscriptions d USING notify_subscriptions s
       WHERE s.id = $1 AND d.platform = s.platform AND d.user_id = s.user_id AND d.state <> 'open'
         AND d.id NOT IN (SELECT c.id FROM notify_subscriptions c WHERE c.platform = s.platform AND c.user_id = s.user_id AND c.state <> 'open'
                          ORDER BY c.id DESC LIMIT $2)`,
      [id, KEEP_CLOSED_SUBSCRIPTIONS],
    );
    return true;
  }

  async noteSubscription(id: number, note: string): Promise<void> {
    await this.pool.query('UPDATE notify_subscriptions SET note = $1 WHERE id = $2', [note.slice(0, SUBSCRIPTION_NOTE_CHARS), id]);
  }
}

function subscriptionRow(r: Record<string, unknown>): SubscriptionRow {
  return {
    id: r.id as number,
    platform: r.platform as string,
    userId: r.user_id as string,
    sizeMiB: r.size_mib as number,
    size: r.size as string,
    count: r.count as number,
    shared: r.shared === true,
    createdMs: r.created_ms as number,
    expiresMs: r.expires_ms as number,
    state: r.state as SubscriptionState,
    closedMs: (r.closed_ms as number | null) ?? null,
    note: (r.note as string | null) ?? null,
  };
}
