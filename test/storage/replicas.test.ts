// Two replicas of the real bot (`bin/gpu-doctor bot`, two processes, console chat: scheduled digests print
// to stdout) on one real PostgreSQL, sampling one real sshd host: each digest slot is posted once across
// both; a replica killed with SIGKILL mid-digest leaves its slot to the other, which posts it once its
// claim expires; sampling moves to the survivor within one lease; a host added and trusted and a `/gpu
// notify` subscription made through one replica are seen by the other and survive the kill; a 👎 and a
// `/gpu whoami` approval answered by the other replica than the one that made the diagnosis or claim.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

const ROOT = resolve(import.meta.dirname, '../..');
const LEASE_S = 3;
const DIGEST = 'fast';

class Replica {
  out = '';
  err = '';
  readonly proc: ChildProcess;
  readonly exited: Promise<void>;
  constructor(
    readonly name: string,
    configFile: string,
  ) {
    this.proc = spawn(join(ROOT, 'bin/gpu-doctor'), ['bot', '--config', configFile], {
      cwd: ROOT,
      env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', GPU_DOCTOR_REPLICA: name, LANG: 'C', LC_ALL: '' },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    this.proc.stdout!.on('data', (d: Buffer) => (this.out += d.toString()));
    this.proc.stderr!.on('data', (d: Buffer) => (this.err = (this.err + d.toString()).slice(-4000)));
    this.exited = new Promise((r) => this.proc.once('exit', () => r()));
  }

  /** Scheduled digests this replica printed. */
  get posts(): number {
    return this.out.split(`[digest ${DIGEST}]`).length - 1;
  }

  /** Sends a command line and waits for its answer to match. */
  async ask(line: string, want: RegExp, timeoutMs = 30_000): Promise<string> {
    const mark = this.out.length;
    this.proc.stdin!.write(line + '\n');
    await until(
      () => want.test(this.out.slice(mark)),
      timeoutMs,
      () => `${this.name}: no ${want} after ${line}:\n${this.out.slice(mark)}\n${this.err}`,
    );
    return this.out.slice(mark);
  }

  async kill(): Promise<void> {
    this.proc.kill('SIGKILL');
    await this.exited;
  }

  async stop(): Promise<void> {
    if (this.proc.exitCode !== null || this.proc.signalCode !== null) return;
    this.proc.stdin!.end();
    const t = setTimeout(() => this.proc.kill('SIGKILL'), 15_000);
    await this.exited;
    clearTimeout(t);
  }
}

async function until(ok: () => boolean | Promise<boolean>, timeoutMs: number, what: () => string): Promise<void> {
  const t0 = Date.now();
  while (!(await ok())) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out: ${what()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describeWithSshd('two replicas on one Postgres', 'test/storage/replicas.test.ts', () => {
  describeWithPostgres('two replicas on one Postgres', 'test/storage/replicas.test.ts', () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-replicas-'));
    let server: PgInstance;
    let db: pg.Pool;
    let sshd: SshdInstance;
    let configFile: (name: string) => string;
    const replicas: Replica[] = [];
    const start = (name: string) => {
      const r = new Replica(name, configFile(name));
      replicas.push(r);
      return r;
    };
    const q = async <T extends pg.QueryResultRow>(sql: string, args: unknown[] = []) => (await db.query<T>(sql, args)).rows;
    const postedSlots = async () =>
      (await q<{ n: number }>(`SELECT count(*)::int AS n FROM digest_runs WHERE schedule = $1 AND state = 'posted'`, [DIGEST]))[0].n;

    beforeAll(async () => {
      server = await startPostgres();
      const url = await server.createDatabase('replicas');
      db = new pg.Pool({ connectionString: url, max: 2 });
      const key = makeClientKey(join(root, 'client'));
      sshd = await startSshd(join(root, 'sshd'), key.pub, { skipShellRc: true, data: 'h100' });
      configFile = (name) => {
        const file = join(root, `${name}.yaml`);
        writeFileSync(
          file,
          [
            `data_dir: ${join(root, `data-${name}`)}`,
            'storage:',
            `  url: ${url}`,
            `  lease_s: ${LEASE_S}`,
            'ssh:',
            `  identity_file: ${key.keyFile}`,
            `  known_hosts: ${join(root, 'known_hosts')}`,
            '  connect_timeout_ms: 5000',
            '  exec_timeout_ms: 5000',
            'hosts:',
            `  - { name: gpu-a, host: 127.0.0.1, port: ${sshd.port}, host_key: "${sshd.fingerprint}" }`,
            'watch:',
            '  enabled: true',
            '  sample_interval_s: 10',
            '  digests:',
            `    - { name: ${DIGEST}, platform: console, channel: ops, cron: "*/4 * * * * *" }`,
            '',
          ].join('\n'),
        );
        return file;
      };
    }, 120_000);

    afterAll(async () => {
      await Promise.all(replicas.map((r) => r.stop()));
      await db?.end();
      await sshd?.stop();
      await server?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it('registry, trust, subscriptions, feedback votes and whoami claims made on one replica are seen by the other', async () => {
      const a = start('A');
      const b = start('B');
      await a.ask('/gpu hosts list', /gpu-a/);
      await b.ask('/gpu hosts list', /gpu-a/);
      await a.ask(`/gpu hosts add late root@127.0.0.1:${sshd.port}`, /added late/);
      expect(await b.ask('/gpu hosts list', /late/)).toContain('late');
      await b.ask(`/gpu hosts trust late ${sshd.fingerprint}`, /trusted the host key of late/);
      await a.ask('/gpu status late', /H100/);
      // The CLI on a replica's machine reads and writes the same registry.
      const cli = (...args: string[]) =>
        execFileSync(join(ROOT, 'bin/gpu-doctor'), [...args, '--config', configFile('A')], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(cli('hosts', 'list')).toContain(sshd.fingerprint);
      cli('hosts', 'add', 'by-cli', `root@127.0.0.1:${sshd.port}`);
      await b.ask('/gpu hosts list', /by-cli/);
      await b.ask('/gpu hosts remove by-cli', /removed|Removed/);
      expect(cli('hosts', 'list')).not.toContain('by-cli');
      await a.ask('/gpu notify 500G', /Notify #\d+/);
      expect(await b.ask('/gpu notify list', /500G/)).toMatch(/500G/);
      // A diagnosis made by A gets its 👎 through B; `gpu-doctor feedback list` on A's machine counts it.
      await a.ask('RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB\n.', /cuda_oom/);
      await b.ask('/feedback down', /Recorded 👎 for rule cuda-oom/);
      expect(JSON.parse(cli('feedback', 'list', '--json')).rules).toContainEqual(expect.objectContaining({ rule: 'cuda-oom', down: 1 }));
      // A /gpu whoami claim made through A is approved through B, and A's next command sees it.
      const claim = /Claim #(\d+): alice is me/.exec(await a.ask('/gpu whoami alice', /Claim #\d+: alice is me/))!;
      await b.ask(`/gpu whoami approve ${claim[1]}`, /approved: alice/);
      await a.ask('/gpu whoami', new RegExp(`approved \\(#${claim[1]}\\)`));
    }, 120_000);

    it('each digest slot is posted once across both replicas', async () => {
      const [a, b] = replicas;
      const since = Date.now();
      await until(
        async () =>
          (await q<{ n: number }>(`SELECT count(*)::int AS n FROM digest_runs WHERE schedule = $1 AND state = 'posted' AND slot > $2`, [DIGEST, since]))[0].n >=
          3,
        40_000,
        () => `fewer than 3 slots posted:\n${a.err}\n${b.err}`,
      );
      // Every slot: one row (its key), posted by one replica, printed once.
      await until(
        async () => a.posts + b.posts === (await postedSlots()),
        5_000,
        () => `posts ${a.posts}+${b.posts} != slots`,
      );
      const rows = await q<{ state: string; attempts: number }>(`SELECT state, attempts FROM digest_runs WHERE schedule = $1 AND slot > $2`, [DIGEST, since]);
      expect(rows.every((r) => r.attempts === 1 && (r.state === 'posted' || r.state === 'claimed'))).toBe(true);
    }, 60_000);

    it('a replica killed with SIGKILL mid-digest: its slot is posted once, by the other, after the claim expires; nothing made through it is lost', async () => {
      // Enough samples that computing a digest takes a while: the kill lands between the claim and the post.
      const seed = new PgWatchState(db, { replica: 'seed', leaseMs: 1000 });
      await seed.insert([{ ts: Date.now(), host: 'seed-host', gpu: 0, gpuTotalMiB: 81559, gpuUsedMiB: 1000, utilizationPct: 50 }]);
      const hostId = (await q<{ id: number }>("SELECT id FROM watch_hosts WHERE name = 'seed-host'"))[0].id;
      const now = Math.floor(Date.now() / 1000);
      const rows: [number, number, number, number, number, number | null, number | null][] = [];
      for (let m = 0; m < 24 * 60; m++)
        for (let g = 0; g < 8; g++) {
          rows.push([now - 86400 + m * 60, hostId, g, 0, 81559, 30000, 90]);
          for (let p = 0; p < 16; p++) rows.push([now - 86400 + m * 60, hostId, g, 1000 + g * 100 + p, now - 90000, 2000 + (p === 3 ? m : 0), null]);
        }
      await seed.writeRows(rows);
      const before = await postedSlots();
      // Whichever replica claims the next slot is killed while it computes the digest.
      let held: { slot: number; holder: string } | undefined;
      await until(
        async () => {
          held = (await q<{ slot: number; holder: string }>(`SELECT slot, holder FROM digest_runs WHERE schedule = $1 AND state = 'claimed'`, [DIGEST]))[0];
          return held !== undefined;
        },
        30_000,
        () => 'no slot was claimed',
      );
      const victim = replicas.find((r) => r.name === held!.holder)!;
      const survivor = replicas.find((r) => r.name !== held!.holder && r.proc.exitCode === null && r.proc.signalCode === null)!;
      const printedBefore = victim.posts;
      await victim.kill();
      const killedAt = Date.now();
      const killedDuring = (await q<{ state: string }>('SELECT state FROM digest_runs WHERE schedule = $1 AND slot = $2', [DIGEST, held!.slot]))[0].state;
      expect(killedDuring).toBe('claimed');
      // The survivor takes the slot over once the claim expires, and posts it once.
      await until(
        async () => (await q<{ state: string }>('SELECT state FROM digest_runs WHERE schedule = $1 AND slot = $2', [DIGEST, held!.slot]))[0].state === 'posted',
        LEASE_S * 1000 + 20_000,
        () => `slot ${held!.slot} was never posted:\n${survivor.err}`,
      );
      const row = (
        await q<{ holder: string; attempts: number }>('SELECT holder, attempts FROM digest_runs WHERE schedule = $1 AND slot = $2', [DIGEST, held!.slot])
      )[0];
      expect(row).toEqual({ holder: survivor.name, attempts: 2 });
      expect(Date.now() - killedAt).toBeGreaterThanOrEqual(0);
      // Never twice: every posted slot printed exactly once, the victim's last print being before the kill.
      expect(victim.posts).toBe(printedBefore);
      await until(
        async () => replicas.reduce((n, r) => n + r.posts, 0) === (await postedSlots()),
        10_000,
        () => 'posts and posted slots differ',
      );
      expect(await postedSlots()).toBeGreaterThan(before);
      // Nothing made through either replica is lost: a fresh replica sees the host, its trust and the subscription.
      const c = start('C');
      expect(await c.ask('/gpu hosts list', /late/)).toContain(sshd.fingerprint);
      expect(await c.ask('/gpu notify list', /500G/)).toMatch(/500G/);
    }, 120_000);

    it('sampling: one replica samples a host at a time; when it is killed the survivor samples it within one lease', async () => {
      const alive = () => replicas.filter((r) => r.proc.exitCode === null && r.proc.signalCode === null);
      await until(
        async () => (await q('SELECT holder FROM sample_leases WHERE host = $1 AND expires_at > now()', ['gpu-a'])).length === 1,
        20_000,
        () => 'no lease',
      );
      const holder = (await q<{ holder: string }>('SELECT holder FROM sample_leases WHERE host = $1', ['gpu-a']))[0].holder;
      const victim = alive().find((r) => r.name === holder)!;
      const survivor = alive().find((r) => r.name !== holder)!;
      expect(victim).toBeDefined();
      expect(survivor).toBeDefined();
      const hostId = (await q<{ id: number }>("SELECT id FROM watch_hosts WHERE name = 'gpu-a'"))[0].id;
      // One holder: over 21 s, gpu-a is sampled in about two 10 s rounds (two replicas each sampling would make four or more).
      await new Promise((r) => setTimeout(r, 21_000));
      const recent = await q<{ n: number }>('SELECT count(DISTINCT ts)::int AS n FROM watch_samples WHERE host_id = $1 AND ts > $2', [
        hostId,
        Math.floor(Date.now() / 1000) - 21,
      ]);
      expect(recent[0].n).toBeGreaterThanOrEqual(1);
      expect(recent[0].n).toBeLessThanOrEqual(3);
      await victim.kill();
      const killedS = Math.floor(Date.now() / 1000);
      const t0 = Date.now();
      // The lease moves within one lease (its expiry) plus one renewal period (a third of a lease).
      await until(
        async () => (await q<{ holder: string }>('SELECT holder FROM sample_leases WHERE host = $1', ['gpu-a']))[0].holder === survivor.name,
        LEASE_S * 1000 + 15_000,
        () => `the lease never moved:\n${survivor.err}`,
      );
      const leaseMovedMs = Date.now() - t0;
      expect(leaseMovedMs).toBeLessThan(LEASE_S * 1000 + (LEASE_S * 1000) / 3 + 2000);
      // Then the host is sampled at once (a newly held host does not wait for the next 10 s round).
      await until(
        async () => (await q('SELECT 1 FROM watch_samples WHERE host_id = $1 AND ts > $2 LIMIT 1', [hostId, killedS])).length === 1,
        LEASE_S * 1000 + 15_000,
        () => `no sample of gpu-a after the kill:\n${survivor.err}`,
      );
      const resumedMs = Date.now() - t0;
      // Before the next 10 s round could have come: the round that took the lease sampled it.
      expect(resumedMs).toBeLessThan(leaseMovedMs + 8000);
      console.log(
        `sampling: lease moved to ${survivor.name} ${leaseMovedMs} ms and a sample came ${resumedMs} ms after ${victim.name} was killed (lease ${LEASE_S} s)`,
      );
    }, 90_000);
  });
});
