// Issue 22 item 7: one host's impossible value (memory.used 99999999999 MiB, a GPU index of 15 digits, a
// 10-digit pid its ps lists too) once failed the round's single INSERT into Postgres: no host got samples
// and the `/gpu notify` check was skipped. The bot as `createApp` builds it from a config file (Postgres
// storage, a real PostgreSQL; two real sshd hosts whose fake nvidia-smi / ps print the rows), the sampler
// round and its notify check as the bot runs them.
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import type { PostTarget } from '../../src/core/services.js';
import type { Reply } from '../../src/core/reply.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

describeWithSshd('a host with out-of-range values on Postgres', 'test/storage/pg-sample-ranges.test.ts', () => {
  describeWithPostgres('a host with out-of-range values on Postgres', 'test/storage/pg-sample-ranges.test.ts', () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-pg-ranges-'));
    let server: PgInstance;
    let db: pg.Pool;
    let good: SshdInstance;
    let bad: SshdInstance;
    let app: App | null = null;
    const posted: [PostTarget, Reply][] = [];
    const q = async <T extends pg.QueryResultRow>(sql: string, args: unknown[] = []) => (await db.query<T>(sql, args)).rows;
    const ctx = (): CommandContext => ({ platform: 'slack', userId: 'UCAROL01', isAdmin: false, services: app!.services });

    beforeAll(async () => {
      server = await startPostgres();
      const url = await server.createDatabase('ranges');
      db = new pg.Pool({ connectionString: url, max: 2 });
      const key = makeClientKey(join(root, 'client'));
      good = await startSshd(join(root, 'good'), key.pub, { skipShellRc: true, data: 'h200' });
      bad = await startSshd(join(root, 'bad'), key.pub, { skipShellRc: true, data: 'h100' });
      // Next to the H100's good row (GPU 0): a GPU with memory.used 99999999999 MiB, one with a 15-digit
      // index, and on GPU 0 a process whose pid (10 digits) ps lists too, so it has a start time to store.
      const uuid0 = 'GPU-00000000-0000-0000-0000-000000000000';
      appendFileSync(join(bad.dir, 'gpu.csv'), '1, GPU-11111111-0000-0000-0000-000000000001, NVIDIA H100 80GB HBM3, 99999999999, 81559, 0, 30\n');
      appendFileSync(join(bad.dir, 'gpu.csv'), '123456789012345, GPU-22222222-0000-0000-0000-000000000002, NVIDIA H100 80GB HBM3, 100, 81559, 0, 30\n');
      appendFileSync(join(bad.dir, 'apps.csv'), `${uuid0}, 9999999999, 100, python\n`);
      appendFileSync(join(bad.dir, 'ps.txt'), `9999999999 mallory        120 python train.py\n`);
      const configFile = join(root, 'config.yaml');
      writeFileSync(
        configFile,
        [
          `data_dir: ${join(root, 'data')}`,
          'storage:',
          `  url: ${url}`,
          'ssh:',
          `  identity_file: ${key.keyFile}`,
          `  known_hosts: ${join(root, 'known_hosts')}`,
          '  connect_timeout_ms: 10000',
          '  exec_timeout_ms: 20000',
          'hosts:',
          `  - { name: gpu-good, host: 127.0.0.1, port: ${good.port}, host_key: "${good.fingerprint}" }`,
          `  - { name: gpu-bad, host: 127.0.0.1, port: ${bad.port}, host_key: "${bad.fingerprint}" }`,
          'watch:',
          '  enabled: true',
          '  sample_interval_s: 3600', // rounds are driven by the test; the bot's own first round still runs
          '',
        ].join('\n'),
      );
      app = await createApp(configFile);
      (app.services.watch as WatchRuntime).setPoster(async (target, reply) => void posted.push([target, reply]));
    }, 180_000);

    afterAll(async () => {
      await app?.close();
      await db?.end();
      await good?.stop();
      await bad?.stop();
      await server?.stop();
      rmSync(root, { recursive: true, force: true });
    });

    it('the good rows of both hosts are stored, the bad ones left out and named, and the notify check runs', async () => {
      // 40G fits where someone else's process runs (--shared) on the H200s: the check sends it at once.
      const sub = await app!.registry.dispatch('/gpu notify 40G --shared', ctx());
      expect(sub.outcome).toBe('ok');
      const sampler = (app!.services.watch as WatchRuntime).sampler!;
      const t0 = Date.now();
      // One round after the one the bot may have started itself.
      while (!(await sampler.tick())) {
        if (Date.now() - t0 > 60_000) throw new Error('the sampler never became free for a round');
        await new Promise((r) => setTimeout(r, 50));
      }
      const stored = await q<{ name: string; gpu: number; pid: number }>(
        'SELECT DISTINCT h.name, s.gpu, s.pid FROM watch_samples s JOIN watch_hosts h ON h.id = s.host_id WHERE s.gpu >= 0 ORDER BY 1, 2, 3',
      );
      const gpus = (host: string) => [...new Set(stored.filter((r) => r.name === host).map((r) => r.gpu))];
      expect(gpus('gpu-good')).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
      expect(gpus('gpu-bad')).toEqual([0]);
      expect(stored.filter((r) => r.name === 'gpu-bad').map((r) => r.pid)).not.toContain(9999999999);
      // Host RAM rows of both (gpu -1).
      expect((await q<{ n: number }>('SELECT count(DISTINCT host_id)::int AS n FROM watch_samples WHERE gpu = -1'))[0].n).toBe(2);
      // The notify check ran on this round: its one message went out.
      const dms = posted.filter(([t]) => t.kind === 'dm' && t.channel === 'UCAROL01');
      expect(dms).toHaveLength(1);
      expect(renderText(dms[0][1])).toMatch(/fits now on gpu-good GPU/);
      // Status names what it left out.
      const status = renderText((await app!.registry.dispatch('/gpu status gpu-bad', ctx())).reply);
      expect(status).toContain('Left out a row of nvidia-smi output (GPU 1): memory.used 99999999999 MiB is outside 0..16777216 MiB.');
      expect(status).toContain('Left out a row of nvidia-smi output (GPU 123456789012345): index 123456789012345 is outside 0..1023.');
      expect(status).toContain('Left out a row of nvidia-smi output (pid 9999999999): pid 9999999999 is outside 1..4194304.');
    }, 180_000);
  });
});
