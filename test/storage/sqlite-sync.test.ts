// The SQLite stores written on the bot's own thread (the audit trail at every command, feedback at every
// paste, claims, silences) commit in WAL mode without an fsync each (synchronous = NORMAL, as the watch
// store and the host registry already do): with fsync a row cost 6 ms at p50 and 49 ms at p99 on this
// machine's busy disk, and every ack waited that long (bench:acks). WAL keeps the file consistent.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { ClaimStore } from '../../src/storage/sqlite/claims.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { SilenceStore } from '../../src/storage/sqlite/silences.js';

const dir = mkdtempSync(join(tmpdir(), 'gd-sqlite-sync-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The store's own connection (private: PRAGMA synchronous is per connection, not in the file). */
type Pragmas = { db: { pragma(p: string, o: { simple: true }): unknown } };
const pragma = (store: object, p: string) => (store as Pragmas).db.pragma(p, { simple: true });

describe('SQLite stores on the bot thread', () => {
  const stores: [string, object & { close(): unknown }][] = [
    ['audit', AuditStore.inDataDir(join(dir, 'a'))],
    ['feedback', FeedbackStore.inDataDir(join(dir, 'f'))],
    ['claims', ClaimStore.inDataDir(join(dir, 'c'))],
    ['silences', SilenceStore.inDataDir(join(dir, 's'))],
  ];
  afterAll(() => stores.forEach(([, s]) => s.close()));

  it.each(stores)('%s commits in WAL mode without an fsync per commit', (_, store) => {
    expect(pragma(store, 'journal_mode')).toBe('wal');
    // 1 = NORMAL (2 = FULL, the default: an fsync at every commit).
    expect(pragma(store, 'synchronous')).toBe(1);
  });
});
