// Claims from `/gpu whoami UNIXUSER`: a chat user says "alice on the hosts is me"; an admin approves it.
// Kept in the registry's database (data_dir/gpu-doctor.sqlite: 0600 in a 0700 folder, WAL), in a table
// of their own, so a mapping survives restarts and needs no leak watch. Every change is one statement
// or one transaction: two admins approving at once leave one active mapping.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import type { ClaimPlatform, ClaimRow, ClaimState, ClaimStorage } from '../../owners/claims.js';

const DDL = `
CREATE TABLE IF NOT EXISTS owner_claims (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  unix_user TEXT NOT NULL, host TEXT, platform TEXT NOT NULL, user_id TEXT NOT NULL, display_name TEXT,
  state TEXT NOT NULL, created_ms INTEGER NOT NULL, decided_ms INTEGER, decided_by TEXT
);
CREATE INDEX IF NOT EXISTS owner_claims_state ON owner_claims (state, unix_user);`;

interface Raw {
  id: number;
  unix_user: string;
  host: string | null;
  platform: string;
  user_id: string;
  display_name: string | null;
  state: string;
  created_ms: number;
  decided_ms: number | null;
  decided_by: string | null;
}

const row = (r: Raw): ClaimRow => ({
  id: r.id,
  unixUser: r.unix_user,
  host: r.host,
  platform: r.platform as ClaimPlatform,
  userId: r.user_id,
  name: r.display_name,
  state: r.state as ClaimState,
  createdMs: r.created_ms,
  decidedMs: r.decided_ms,
  decidedBy: r.decided_by,
});

export class ClaimStore implements ClaimStorage {
  private db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(DDL);
  }

  /** The registry's database in data_dir (created 0700 / 0600 like the rest of it). */
  static inDataDir(dataDir: string): ClaimStore {
    ensurePrivateDir(dataDir);
    return new ClaimStore(join(dataDir, 'gpu-doctor.sqlite'));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  get(id: number): ClaimRow | null {
    const r = this.db.prepare('SELECT * FROM owner_claims WHERE id = ?').get(id) as Raw | undefined;
    return r ? row(r) : null;
  }

  /** A pending claim; the same person claiming the same name again gets the one they have. */
  addPending(
    c: { unixUser: string; host: string | null; platform: ClaimPlatform; userId: string; name?: string | null },
    now = Date.now(),
  ): { claim: ClaimRow; existed: boolean } {
    return this.db.transaction(() => {
      const same = this.db
        .prepare(
          "SELECT * FROM owner_claims WHERE state IN ('pending', 'active') AND unix_user = ? AND host IS ? AND platform = ? AND user_id = ? ORDER BY id DESC LIMIT 1",
        )
        .get(c.unixUser, c.host, c.platform, c.userId) as Raw | undefined;
      if (same && (same.state === 'active' || !c.name || c.name === same.display_name)) return { claim: row(same), existed: true };
      // Asked again with another name: the pending claim takes it (an admin has not seen the old one yet).
      if (same) {
        this.db.prepare('UPDATE owner_claims SET display_name = ? WHERE id = ?').run(c.name, same.id);
        return { claim: this.get(same.id)!, existed: true };
      }
      const info = this.db
        .prepare("INSERT INTO owner_claims (unix_user, host, platform, user_id, display_name, state, created_ms) VALUES (?, ?, ?, ?, ?, 'pending', ?)")
        .run(c.unixUser, c.host, c.platform, c.userId, c.name ?? null, now);
      return { claim: this.get(Number(info.lastInsertRowid))!, existed: false };
    })();
  }

  /** Pending claims of one chat user (to cap them). */
  pendingOf(platform: ClaimPlatform, userId: string): ClaimRow[] {
    return (
      this.db.prepare("SELECT * FROM owner_claims WHERE state = 'pending' AND platform = ? AND user_id = ? ORDER BY id").all(platform, userId) as Raw[]
    ).map(row);
  }

  pending(): ClaimRow[] {
    return (this.db.prepare("SELECT * FROM owner_claims WHERE state = 'pending' ORDER BY id").all() as Raw[]).map(row);
  }

  active(): ClaimRow[] {
    return (this.db.prepare("SELECT * FROM owner_claims WHERE state = 'active' ORDER BY id").all() as Raw[]).map(row);
  }

  /** Claims (pending or active) of one chat user. */
  of(platform: ClaimPlatform, userId: string): ClaimRow[] {
    return (
      this.db
        .prepare("SELECT * FROM owner_claims WHERE state IN ('pending', 'active') AND platform = ? AND user_id = ? ORDER BY id")
        .all(platform, userId) as Raw[]
    ).map(row);
  }

  /**
   * Approves a pending claim: it becomes the active mapping of that unix user (and host scope) on its
   * platform; one active before it is replaced. Null when the id is not pending.
   */
  approve(id: number, by: string, now = Date.now()): { claim: ClaimRow; replaced: ClaimRow | null } | null {
    return this.db.transaction(() => {
      const c = this.get(id);
      if (!c || c.state !== 'pending') return null;
      const prev = this.db
        .prepare("SELECT * FROM owner_claims WHERE state = 'active' AND unix_user = ? AND host IS ? AND platform = ?")
        .get(c.unixUser, c.host, c.platform) as Raw | undefined;
      if (prev) this.db.prepare("UPDATE owner_claims SET state = 'replaced', decided_ms = ?, decided_by = ? WHERE id = ?").run(now, by, prev.id);
      this.db.prepare("UPDATE owner_claims SET state = 'active', decided_ms = ?, decided_by = ? WHERE id = ? AND state = 'pending'").run(now, by, id);
      return { claim: this.get(id)!, replaced: prev ? row(prev) : null };
    })();
  }

  /** Rejects a pending claim (or ends an active one). Null when the id is neither. */
  reject(id: number, by: string, now = Date.now()): ClaimRow | null {
    const n = this.db
      .prepare("UPDATE owner_claims SET state = 'rejected', decided_ms = ?, decided_by = ? WHERE id = ? AND state IN ('pending', 'active')")
      .run(now, by, id).changes;
    return n ? this.get(id) : null;
  }
}
