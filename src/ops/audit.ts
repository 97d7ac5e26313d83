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

/** Rows that may wait for their write; past this a row is dropped and counted (memory stays bounded). */
export const AUDIT_QUEUE_MAX = 10_000;

/**
 * Rows waiting to be written, written in order a macrotask after the first of them was recorded, all
 * of them in one batch: a synchronous database (SQLite) writes after the reply that recorded the row
 * has gone, and a burst costs one transaction. A full queue drops a row, never blocks; the drops are
 * counted and said in one line when the queue is next written. `flush()` writes what waits at once
 * (a reader before it reads, close).
 */
export class AuditQueue {
  private rows: AuditEntry[] = [];
  private scheduled: NodeJS.Immediate | undefined;
  private dropped = 0;

  constructor(
    private write: (rows: AuditEntry[]) => void,
    private onProblem: (message: string) => void,
    private max = AUDIT_QUEUE_MAX,
  ) {}

  record(entry: AuditEntry): void {
    if (this.rows.length >= this.max) {
      this.dropped++;
      return;
    }
    this.rows.push(entry);
    this.scheduled ??= setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const rows = this.rows;
    this.rows = [];
    if (this.dropped) {
      this.onProblem(`${this.dropped} audit rows dropped: more than ${this.max} waited to be written`);
      this.dropped = 0;
    }
    if (!rows.length) return;
    try {
      this.write(rows);
    } catch (e) {
      this.onProblem(`${rows.length} audit rows not written: ${(e as Error).message}`);
    }
  }
}
