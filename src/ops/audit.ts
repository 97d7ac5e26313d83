// The audit trail's port: every command run (who, where, what, when, outcome, how long) goes to a sink.
// src/storage/sqlite/audit.ts (data_dir/audit.sqlite) and src/storage/postgres/audit.ts (shared by
// replicas, the replica's id in its own column) implement it.

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

/** Where audit rows go; record() returns at once (no reply waits on the database). */
export interface AuditSink {
  record(entry: AuditEntry): void;
  close(): void;
}
