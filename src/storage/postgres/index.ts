// Postgres storage as the app uses it: one pool, the migrations applied at start, and the stores that
// replicas share (registry and keys, leak watch, audit, feedback votes, whoami claims). Opened by src/app.ts when the config's `storage:` names Postgres.
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import type { HostEntry } from '../../hosts/registry.js';
import { PgAuditStore } from './audit.js';
import { PgClaimStore } from './claims.js';
import { openPool, pgErrorLine, type Pool } from './connect.js';
import { PgFeedbackStore, type PgFeedbackOptions } from './feedback.js';
import { migrate } from './migrations.js';
import { PgHostRegistry } from './registry.js';
import { PgWatchState } from './watch.js';

export interface SharedStorage {
  readonly pool: Pool;
  /** This process's id among the replicas: holder of its leases and claims, and the audit rows' replica. */
  readonly replica: string;
  readonly watch: PgWatchState;
  registry(configHosts: HostEntry[]): PgHostRegistry;
  audit(onError?: (e: unknown) => void): PgAuditStore;
  /** 👍 / 👎 on diagnoses (kept log files in this replica's `logsDir`). */
  feedback(o: PgFeedbackOptions): PgFeedbackStore;
  /** `/gpu whoami` claims. */
  claims(): PgClaimStore;
  close(): Promise<void>;
}

/** GPU_DOCTOR_REPLICA names this replica; else host name, pid and a random suffix (unique per process). */
export function replicaId(env: NodeJS.ProcessEnv = process.env): string {
  const named = env.GPU_DOCTOR_REPLICA?.trim();
  if (named && /^[A-Za-z0-9._:-]{1,100}$/.test(named)) return named;
  return `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}`;
}

export async function openSharedStorage(o: { url: string; leaseMs: number; poolMax: number }, env: NodeJS.ProcessEnv = process.env): Promise<SharedStorage> {
  const replica = replicaId(env);
  const pool = openPool({ url: o.url, max: o.poolMax, applicationName: `gpu-doctor ${replica}` });
  try {
    await migrate(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    // The cause is left off on purpose: a pg error can quote the connection string; only the redacted line goes on.
    // eslint-disable-next-line preserve-caught-error
    throw new Error(`storage: Postgres: ${pgErrorLine(e)}`);
  }
  const watch = new PgWatchState(pool, { replica, leaseMs: o.leaseMs });
  let closed = false;
  return {
    pool,
    replica,
    watch,
    registry: (configHosts) => new PgHostRegistry(pool, configHosts),
    audit: (onError) => new PgAuditStore(pool, replica, onError),
    feedback: (fo) => new PgFeedbackStore(pool, fo),
    claims: () => new PgClaimStore(pool),
    async close() {
      if (closed) return;
      closed = true;
      await pool.end();
    },
  };
}
