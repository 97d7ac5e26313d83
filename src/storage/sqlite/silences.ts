// `/gpu silence` in SQLite: the registry's database (data_dir/gpu-doctor.sqlite: 0600 in a 0700 folder,
// WAL), a table of its own, so a silence survives a restart. Adding checks the cap and inserts in one
// transaction; cancelling reads and updates in one, so two cancels of one silence end it once.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import type { NewSilence, Silence, SilenceCancel, SilenceStorage } from '../../watch/silences.js';

const DDL = `
CREATE TABLE IF NOT EXISTS watch_silences (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  host TEXT NOT NULL, gpu INTEGER, until_ms INTEGER NOT NULL, created_ms INTEGER NOT NULL,
  by_platform TEXT NOT NULL, by_user TEXT NOT NULL, cancelled_ms INTEGER, cancelled_by TEXT
);
CREATE INDEX IF NOT EXISTS watch_silences_until ON watch_silences (until_ms);`;

/** Ended silences are kept this long (the list shows only those in force), then deleted. */
const KEEP_ENDED_MS = 30 * 24 * 3_600_000;

interface Raw {
  id: number;
  host: string;
  gpu: number | null;
  until_ms: number;
  created_ms: number;
  by_platform: string;
  by_user: string;
  cancelled_ms: number | null;
  cancelled_by: string | null;
}

const row = (r: Raw): Silence => ({
  id: r.id,
  host: r.host,
  gpu: r.gpu,
  untilMs: r.until_ms,
  createdMs: r.created_ms,
  byPlatform: r.by_platform,
  byUser: r.by_user,
  cancelledMs: r.cancelled_ms,
  cancelledBy: r.cancelled_by,
});

export class SilenceStore implements SilenceStorage {
  private db: Database.Database;

  constructor(readonly file: string) {
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('busy_timeout = 5000');
    this.db.exec(DDL);
  }

  /** The registry's database in data_dir (created 0700 / 0600 like the rest of it). */
  static inDataDir(dataDir: string): SilenceStore {
    ensurePrivateDir(dataDir);
    return new SilenceStore(join(dataDir, 'gpu-doctor.sqlite'));
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  add(s: NewSilence, maxActive: number): Silence | null {
    return this.db
      .transaction((): Silence | null => {
        this.db.prepare('DELETE FROM watch_silences WHERE coalesce(cancelled_ms, until_ms) < ?').run(s.createdMs - KEEP_ENDED_MS);
        const { n } = this.db.prepare('SELECT count(*) AS n FROM watch_silences WHERE cancelled_ms IS NULL AND until_ms > ?').get(s.createdMs) as { n: number };
        if (n >= maxActive) return null;
        const r = this.db
          .prepare('INSERT INTO watch_silences (host, gpu, until_ms, created_ms, by_platform, by_user) VALUES (?, ?, ?, ?, ?, ?) RETURNING *')
          .get(s.host, s.gpu, s.untilMs, s.createdMs, s.byPlatform, s.byUser) as Raw;
        return row(r);
      })
      .immediate();
  }

  active(nowMs: number): Silence[] {
    return (this.db.prepare('SELECT * FROM watch_silences WHERE cancelled_ms IS NULL AND until_ms > ? ORDER BY until_ms, id').all(nowMs) as Raw[]).map(row);
  }

  cancel(id: number, by: string, nowMs: number, mayCancel: (s: Silence) => boolean): SilenceCancel {
    return this.db
      .transaction((): SilenceCancel => {
        const r = this.db.prepare('SELECT * FROM watch_silences WHERE id = ? AND cancelled_ms IS NULL AND until_ms > ?').get(id, nowMs) as Raw | undefined;
        if (!r) return { ok: false, reason: 'none' };
        if (!mayCancel(row(r))) return { ok: false, reason: 'denied' };
        this.db.prepare('UPDATE watch_silences SET cancelled_ms = ?, cancelled_by = ? WHERE id = ?').run(nowMs, by, id);
        return { ok: true, silence: row(r) };
      })
      .immediate();
  }
}
