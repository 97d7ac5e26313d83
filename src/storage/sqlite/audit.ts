// The audit trail (src/ops/audit.ts) in SQLite under data_dir (audit.sqlite, 0600): one row per command run.
import Database from '../sqlite-driver.js';
import { join } from 'node:path';
import { ensurePrivateDir, ensurePrivateFile } from '../../core/private-files.js';
import type { AuditEntry, AuditSink } from '../../ops/audit.js';
import { storableEntry } from '../storable-text.js';

export class AuditStore implements AuditSink {
  private db: Database.Database;
  private insert: Database.Statement;

  constructor(file: string) {
    this.db = new Database(ensurePrivateFile(file));
    this.db.pragma('journal_mode = WAL');
    this.db.exec(`CREATE TABLE IF NOT EXISTS audit (
      ts INTEGER NOT NULL, platform TEXT NOT NULL, user TEXT NOT NULL, channel TEXT,
      command TEXT NOT NULL, outcome TEXT NOT NULL, ms REAL NOT NULL)`);
    this.insert = this.db.prepare(
      'INSERT INTO audit (ts, platform, user, channel, command, outcome, ms) VALUES (@ts, @platform, @user, @channel, @command, @outcome, @ms)',
    );
  }

  static inDataDir(dataDir: string): AuditStore {
    ensurePrivateDir(dataDir);
    return new AuditStore(join(dataDir, 'audit.sqlite'));
  }

  record(e: AuditEntry): void {
    this.insert.run(storableEntry(e));
  }

  recent(limit = 100): AuditEntry[] {
    return this.db.prepare('SELECT * FROM audit ORDER BY ts DESC, rowid DESC LIMIT ?').all(limit) as AuditEntry[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
