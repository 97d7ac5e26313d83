// One pg Pool per bot process for the shared state (config `storage: postgres://...`). Every statement
// the stores send is one round trip and none relies on session state (no prepared-statement names, no
// session advisory locks, no temp tables), so the pool also works behind PgBouncer's transaction pooling.
// The URL's password never reaches a log or an error message: redactUrl() cuts it out.
import pg from 'pg';

/** int8 (bigint, count(*)) as a JS number: ids, epoch seconds and epoch ms all fit in 2^53. */
const INT8 = 20;
const builtin = pg.types.getTypeParser as (oid: number, format?: 'text' | 'binary') => (v: string) => unknown;
const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8 && format !== 'binary' ? (v: string) => Number(v) : builtin(oid, format)) as typeof pg.types.getTypeParser,
};

/** postgres://user:secret@db/x -> postgres://user:***@db/x (also any password= query parameter). */
export function redactUrl(text: string): string {
  return text.replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@').replace(/([?&]password=)[^&\s]*/gi, '$1***');
}

export interface PgOptions {
  url: string;
  /** Connections in this process's pool (default 5). */
  max?: number;
  /** Per-connection application_name (shows in pg_stat_activity): the replica's id. */
  applicationName?: string;
}

export type Pool = pg.Pool;

export function openPool(o: PgOptions): pg.Pool {
  const pool = new pg.Pool({
    connectionString: o.url,
    max: o.max ?? 5,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 30_000,
    // A statement stuck on a lock or a dead server fails instead of hanging a command.
    statement_timeout: 120_000,
    query_timeout: 130_000,
    application_name: (o.applicationName ?? 'gpu-doctor').slice(0, 63),
    types,
  });
  // An idle client that loses its server emits 'error' on the pool; it is dropped and the next query reconnects.
  pool.on('error', () => {});
  return pool;
}

/** A pg error as one line without credentials (the connection string can ride in a message). */
export function pgErrorLine(e: unknown): string {
  const err = e as { message?: string; code?: string };
  return redactUrl(`${err.message ?? String(e)}${err.code ? ` (${err.code})` : ''}`).split('\n')[0];
}

/** Runs `body` in one transaction on one client (BEGIN .. COMMIT, ROLLBACK on any error). */
export async function inTransaction<T>(pool: pg.Pool, body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const out = await body(c);
    await c.query('COMMIT');
    return out;
  } catch (e) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    c.release();
  }
}
