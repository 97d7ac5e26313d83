// The audit trail: every command run (who, where, what, when, outcome, how long) in SQLite under data_dir.
import Database from '../storage/sqlite-driver.js';
import { ensurePrivateDir, ensurePrivateFile } from '../core/private-files.js';
import { join } from 'node:path';
import { storableText } from '../storage/storable-text.js';

export interface AuditEntry {
  ts: number;
  platform: string;
  user: string;
  channel: string | null;
  command: string;
  outcome: string;
  ms: number;
}

/** The longest command line kept in an audit row. */
export const AUDIT_COMMAND_CHARS = 200;

/**
 * An entry as both audit stores keep it: the command cut to AUDIT_COMMAND_CHARS, and NUL or a lone surrogate
 * in any text replaced (a command typed with a NUL byte would otherwise lose its row in Postgres).
 */
export function storableEntry(e: AuditEntry): AuditEntry {
  return {
    ...e,
    platform: storableText(e.platform),
    user: storableText(e.user),
    channel: storableText(e.channel),
    command: storableText(e.command.slice(0, AUDIT_COMMAND_CHARS)),
    outcome: storableText(e.outcome),
  };
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
    this.insert.run(storableEntry(e));
  }

  recent(limit = 100): AuditEntry[] {
    return this.db.prepare('SELECT * FROM audit ORDER BY ts DESC, rowid DESC LIMIT ?').all(limit) as AuditEntry[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
