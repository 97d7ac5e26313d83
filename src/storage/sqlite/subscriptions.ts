// `/gpu notify` subscriptions in SQLite (the SubscriptionStorage port of src/fleet/subscriptions.ts): the
// leak watch's database (data_dir/watch.sqlite, 0600 in a 0700 folder, WAL), where they have always
// been, on a connection of their own. Open until the one message is sent (a fit appeared, or it expired)
// or its owner cancels it. The state changes from 'open' exactly once (an UPDATE guarded by state =
// 'open'), so a message is never sent twice, across restarts too.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import {
  KEEP_CLOSED_SUBSCRIPTIONS,
  SUBSCRIPTION_NOTE_CHARS,
  type SubscriptionRow,
  type SubscriptionState,
  type SubscriptionStorage,
} from '../../fleet/subscriptions.js';

/** Created, or migrated when subscriptions_version in watch_meta differs (the watch store's own meta table). */
const SUBSCRIPTIONS_VERSION = 1;
const SUBSCRIPTIONS_DDL = `CREATE TABLE IF NOT EXISTS notify_subscriptions (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  platform TEXT NOT NULL, user_id TEXT NOT NULL,
  size_mib INTEGER NOT NULL, size TEXT NOT NULL, count INTEGER NOT NULL, shared INTEGER NOT NULL,
  created_ms INTEGER NOT NULL, expires_ms INTEGER NOT NULL,
  state TEXT NOT NULL DEFAULT 'open', closed_ms INTEGER, note TEXT
);
CREATE INDEX IF NOT EXISTS notify_subscriptions_open ON notify_subscriptions (state, platform, user_id);`;

type Owner = { platform: string; userId: string };

export class SubscriptionStore implements SubscriptionStorage {
  private db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = NORMAL');
    // The watch store writes this file on its own connection: wait for its transaction, do not fail.
    this.db.pragma('busy_timeout = 5000');
    this.db.exec('CREATE TABLE IF NOT EXISTS watch_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)');
    const v = (this.db.prepare("SELECT value FROM watch_meta WHERE key = 'subscriptions_version'").get() as { value: number } | undefined)?.value;
    if (v !== SUBSCRIPTIONS_VERSION)
      this.db.transaction(() => {
        this.db.exec(SUBSCRIPTIONS_DDL);
        this.db.prepare("INSERT OR REPLACE INTO watch_meta VALUES ('subscriptions_version', ?)").run(SUBSCRIPTIONS_VERSION);
      })();
  }

  /** The leak watch's database in data_dir (created 0700 / 0600 like the rest of it). */
  static inDataDir(dataDir: string): SubscriptionStore {
    ensurePrivateDir(dataDir);
    return new SubscriptionStore(join(dataDir, 'watch.sqlite'));
  }

  addSubscription(s: Omit<SubscriptionRow, 'id' | 'state' | 'closedMs' | 'note'>): SubscriptionRow {
    const r = this.db
      .prepare('INSERT INTO notify_subscriptions (platform, user_id, size_mib, size, count, shared, created_ms, expires_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(s.platform, s.userId, s.sizeMiB, s.size, s.count, s.shared ? 1 : 0, s.createdMs, s.expiresMs);
    return { ...s, id: Number(r.lastInsertRowid), state: 'open', closedMs: null, note: null };
  }

  /** Open subscriptions, oldest first: all of them, or one user's. */
  openSubscriptions(owner?: Owner): SubscriptionRow[] {
    const rows = (
      owner
        ? this.db
            .prepare("SELECT * FROM notify_subscriptions WHERE state = 'open' AND platform = ? AND user_id = ? ORDER BY id")
            .all(owner.platform, owner.userId)
        : this.db.prepare("SELECT * FROM notify_subscriptions WHERE state = 'open' ORDER BY id").all()
    ) as Record<string, unknown>[];
    return rows.map(subscriptionRow);
  }

  subscription(id: number): SubscriptionRow | null {
    const r = this.db.prepare('SELECT * FROM notify_subscriptions WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    return r ? subscriptionRow(r) : null;
  }

  /**
   * Closes an open subscription (only its owner's, when `owner` is given). True when this call closed
   * it: the one caller that may then send its message.
   */
  closeSubscription(id: number, state: Exclude<SubscriptionState, 'open'>, nowMs: number, note: string | null = null, owner?: Owner): boolean {
    const r = owner
      ? this.db
          .prepare("UPDATE notify_subscriptions SET state = ?, closed_ms = ?, note = ? WHERE id = ? AND state = 'open' AND platform = ? AND user_id = ?")
          .run(state, nowMs, note, id, owner.platform, owner.userId)
      : this.db.prepare("UPDATE notify_subscriptions SET state = ?, closed_ms = ?, note = ? WHERE id = ? AND state = 'open'").run(state, nowMs, note, id);
    if (r.changes !== 1) return false;
    this.db
      .prepare(
        `DELETE FROM notify_subscriptions WHERE state <> 'open' AND (platform, user_id) = (SELECT platform, user_id FROM notify_subscriptions WHERE id = ?)
         AND id NOT IN (SELECT c.id FROM notify_subscriptions c, notify_subscriptions s WHERE s.id = ? AND c.platform = s.platform AND c.user_id = s.user_id
                        AND c.state <> 'open' ORDER BY c.id DESC LIMIT ?)`,
      )
      .run(id, id, KEEP_CLOSED_SUBSCRIPTIONS);
    return true;
  }

  /** A note on a closed subscription (why its message could not be sent). */
  noteSubscription(id: number, note: string): void {
    this.db.prepare('UPDATE notify_subscriptions SET note = ? WHERE id = ?').run(note.slice(0, SUBSCRIPTION_NOTE_CHARS), id);
  }

  close(): void {
    if (this.db.open) this.db.close();
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
    shared: r.shared === 1,
    createdMs: r.created_ms as number,
    expiresMs: r.expires_ms as number,
    state: r.state as SubscriptionState,
    closedMs: (r.closed_ms as number | null) ?? null,
    note: (r.note as string | null) ?? null,
  };
}
