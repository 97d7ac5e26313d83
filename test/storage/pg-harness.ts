// A real PostgreSQL server for the storage tests (Debian's `postgresql` package): initdb into a temp
// folder, postgres listening on a free 127.0.0.1 port with its socket in that folder, stopped (immediate
// shutdown) and removed by stop(). initdb refuses to run as root: as root the folder is given to the
// `postgres` user and both run through runuser. Kept out of vitest's imports so the benchmark can use it.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort } from '../hosts/sshd-harness.js';

const candidates = [
  '/usr/lib/postgresql/17/bin',
  '/usr/lib/postgresql/16/bin',
  '/usr/lib/postgresql/15/bin',
  '/usr/lib/postgresql/14/bin',
  '/usr/local/bin',
  '/usr/bin',
];
/** The folder holding initdb and postgres, or null where PostgreSQL is not installed. */
export const PG_BIN = candidates.find((d) => existsSync(join(d, 'initdb')) && existsSync(join(d, 'postgres'))) ?? null;

export interface PgInstance {
  /** postgres://gd@127.0.0.1:PORT/postgres (trust auth: no password). */
  url: string;
  port: number;
  dir: string;
  /** A fresh database on this server (each test file or case its own). */
  createDatabase(name: string): Promise<string>;
  stop(): Promise<void>;
}

function asPostgres(): { prefix: string[]; uid?: number; gid?: number } {
  if (process.getuid?.() !== 0) return { prefix: [] };
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { prefix: ['runuser', '-u', 'postgres', '--'], uid, gid };
}

export async function startPostgres(o: { settings?: Record<string, string> } = {}): Promise<PgInstance> {
  if (!PG_BIN) throw new Error('PostgreSQL is not installed (apt-get install -y postgresql)');
  const dir = mkdtempSync(join(tmpdir(), 'gd-pg-'));
  const who = asPostgres();
  if (who.uid !== undefined) chownSync(dir, who.uid, who.gid ?? who.uid);
  const data = join(dir, 'data');
  const run = (bin: string, args: string[]) => {
    const [cmd, ...rest] = [...who.prefix, join(PG_BIN, bin), ...args];
    return execFileSync(cmd, rest, { stdio: ['ignore', 'pipe', 'pipe'], timeout: 120_000 });
  };
  run('initdb', ['-D', data, '-U', 'gd', '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const settings = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    fsync: 'off',
    synchronous_commit: 'off',
    full_page_writes: 'off',
    max_connections: '100',
    shared_buffers: '128MB',
    ...o.settings,
  };
  const args = ['-D', data, '-p', String(port), ...Object.entries(settings).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const [cmd, ...rest] = [...who.prefix, join(PG_BIN, 'postgres'), ...args];
  const proc: ChildProcess = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr!.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = `postgres://gd@127.0.0.1:${port}/postgres`;
  const t0 = Date.now();
  for (;;) {
    const c = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.end();
      break;
    } catch {
      await c.end().catch(() => undefined);
      if (proc.exitCode !== null || Date.now() - t0 > 30_000) {
        proc.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`postgres did not start: ${log.slice(-1000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    port,
    dir,
    async createDatabase(name) {
      const c = new pg.Client({ connectionString: url });
      await c.connect();
      try {
        await c.query(`CREATE DATABASE "${name.replace(/[^a-z0-9_]/g, '_')}"`);
      } finally {
        await c.end();
      }
      return `postgres://gd@127.0.0.1:${port}/${name.replace(/[^a-z0-9_]/g, '_')}`;
    },
    async stop() {
      // Immediate shutdown (SIGQUIT to the postmaster), then the folder goes.
      try {
        const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
        if (pid > 0) process.kill(pid, 'SIGQUIT');
      } catch {
        proc.kill('SIGQUIT');
      }
      const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** pgbouncer's binary, or null where it is not installed. */
export const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer', '/usr/local/bin/pgbouncer'].find((p) => existsSync(p)) ?? null;

/**
 * PgBouncer in front of a test server, in transaction pooling (a server connection is a client's only for
 * one transaction): what the stores must work behind. Runs as the postgres user when we are root (it
 * refuses root too). Startup parameters pg sends that PgBouncer does not track are ignored.
 */
export async function startPgBouncer(server: PgInstance, o: { poolSize?: number } = {}): Promise<{ url(db: string): string; stop(): Promise<void> }> {
  if (!PGBOUNCER) throw new Error('pgbouncer is not installed (apt-get install -y pgbouncer)');
  const dir = mkdtempSync(join(tmpdir(), 'gd-pgb-'));
  const who = asPostgres();
  const port = await freePort();
  writeFileSync(join(dir, 'userlist.txt'), '"gd" ""\n');
  writeFileSync(
    join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=127.0.0.1 port=${server.port}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'userlist.txt')}`,
      'pool_mode = transaction',
      `default_pool_size = ${o.poolSize ?? 2}`,
      'max_client_conn = 200',
      'ignore_startup_parameters = extra_float_digits,statement_timeout,options',
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      `pidfile = ${join(dir, 'pgbouncer.pid')}`,
      '',
    ].join('\n'),
  );
  if (who.uid !== undefined) for (const f of ['', 'userlist.txt', 'pgbouncer.ini']) chownSync(join(dir, f), who.uid, who.gid ?? who.uid);
  const [cmd, ...rest] = [...who.prefix, PGBOUNCER, join(dir, 'pgbouncer.ini')];
  const proc = spawn(cmd, rest, { stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  proc.stderr.on('data', (d: Buffer) => (log = (log + d.toString()).slice(-4000)));
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  const url = (db: string) => `postgres://gd@127.0.0.1:${port}/${db}`;
  const t0 = Date.now();
  for (;;) {
    const c = new pg.Client({ connectionString: url('postgres'), connectionTimeoutMillis: 2000 });
    try {
      await c.connect();
      await c.query('SELECT 1');
      await c.end();
      break;
    } catch {
      await c.end().catch(() => undefined);
      if (proc.exitCode !== null || Date.now() - t0 > 20_000) {
        proc.kill('SIGKILL');
        rmSync(dir, { recursive: true, force: true });
        throw new Error(`pgbouncer did not start: ${log.slice(-1000)}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url,
    async stop() {
      // SIGINT to pgbouncer itself (runuser, when root, does not pass it on), then the folder goes.
      try {
        process.kill(Number(readFileSync(join(dir, 'pgbouncer.pid'), 'utf8').trim()), 'SIGINT');
      } catch {
        proc.kill('SIGINT');
      }
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
