// The audit trail: every command run (who, where, what, when, outcome, how long) in SQLite under data_dir.
import Database from 'better-sqlite3';
import { ensurePrivateDir, ensurePrivateFile } from '../core/private-files.js';
import { join } from 'node:path';

export interface AuditEntry {
  ts: number;
  platform: string;
  user: string;
  channel: string | null;
  command: string;
  outcome: string;
  ms: number;
}

export class AuditStore {
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
    this.insert.run({ ...e, command: e.command.slice(0, 200) });
  }

  recent(limit = 100): AuditEntry[] {
    return this.db.prepare('SELECT * FROM audit ORDER BY ts DESC, rowid DESC LIMIT ?').all(limit) as AuditEntry[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
