// The audit trail (src/ops/audit.ts) in SQLite under data_dir (audit.sqlite, 0600): one row per command run.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import { AuditQueue, type AuditEntry, type AuditSink } from '../../ops/audit.js';
import { storableEntry } from '../storable-text.js';

export class AuditStore implements AuditSink {
  private db: Database.Database;
  private insert: Database.Statement;
  /** Rows are written a macrotask after they are recorded, in order, a burst in one transaction. */
  private queue: AuditQueue;

  constructor(file: string, onError: (e: unknown) => void = () => {}, queueMax?: number) {
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS audit (
      ts INTEGER NOT NULL, platform TEXT NOT NULL, user TEXT NOT NULL, channel TEXT,
      command TEXT NOT NULL, outcome TEXT NOT NULL, ms REAL NOT NULL)`);
    this.insert = this.db.prepare(
      'INSERT INTO audit (ts, platform, user, channel, command, outcome, ms) VALUES (@ts, @platform, @user, @channel, @command, @outcome, @ms)',
    );
    const insertAll = this.db.transaction((rows: AuditEntry[]) => {
      for (const row of rows) this.insert.run(storableEntry(row));
    });
    this.queue = new AuditQueue(insertAll, (message) => onError(new Error(message)), queueMax);
  }

  static inDataDir(dataDir: string, onError?: (e: unknown) => void): AuditStore {
    ensurePrivateDir(dataDir);
    return new AuditStore(join(dataDir, 'audit.sqlite'), onError);
  }

  record(e: AuditEntry): void {
    this.queue.record(e);
  }

  /** The newest rows, those still waiting in the queue included. */
  recent(limit = 100): AuditEntry[] {
    this.queue.flush();
    return this.db.prepare('SELECT * FROM audit ORDER BY ts DESC, rowid DESC LIMIT ?').all(limit) as AuditEntry[];
  }

  close(): void {
    if (!this.db.open) return;
    this.queue.flush(); // nothing recorded is lost at a clean stop
    this.db.close();
  }
}
