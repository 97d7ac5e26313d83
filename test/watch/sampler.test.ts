// The sampler end to end: real sshd hosts (fake nvidia-smi/ps from the real fixtures), the real SSH
// pool, a real SQLite store. One exec per host per poll; a failing host leaves a gap, never a zero.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import { STATUS_COMMAND } from '../../src/hosts/remote-commands.js';
import { SourcedHostsService } from '../../src/hosts/service.js';
import { sampleOnce } from '../../src/watch/sampler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { ProcessSample, Sample } from '../../src/watch/types.js';
import { freePort, makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { withSqliteRegistry } from '../storage/sqlite-stores.js';

describeWithSshd('sampler over real sshd into a real store', 'test/watch/sampler.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-sampler-'));
  let a: SshdInstance;
  let svc: SourcedHostsService;
  let store: WatchStore;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    a = await startSshd(join(root, 'a'), key.pub, { data: 'h200' });
    const config = parseConfig({
      data_dir: join(root, 'data'),
      ssh: { identity_file: key.keyFile, connect_timeout_ms: 2000, exec_timeout_ms: 4000 },
      hosts: [
        { name: 'gpu-a', host: '127.0.0.1', port: a.port, host_key: a.fingerprint },
        { name: 'down', host: '127.0.0.1', port: await freePort(), host_key: a.fingerprint },
      ],
    });
    svc = new SourcedHostsService(withSqliteRegistry({ config, baseDir: root, agent: null }));
    store = WatchStore.inDataDir(join(root, 'data'));
  });

  afterAll(async () => {
    store?.close();
    await svc?.close();
    await a?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('writes per-process, per-GPU and host RAM samples from one exec per host; the dead host writes nothing', async () => {
    const now = Date.parse('2026-11-22T09:00:00Z');
    const r = await sampleOnce(svc, store, now);
    expect(r).toMatchObject({ ok: 1, failed: 1 });
    const audit = readFileSync(a.auditLog, 'utf8').split('\n').filter(Boolean);
    expect(audit).toEqual([STATUS_COMMAND]);

    const samples = [...store.samplesSince(0)];
    expect(samples.every((s) => s.host === 'gpu-a')).toBe(true);
    const procs = samples.filter((s): s is ProcessSample => !('kind' in s && s.kind === 'host') && s.pid !== undefined);
    // 8 processes on the 8x H200 fixture; 7 visible to ps (owner and start time known), the 8th is
    // in a container: without a start time a reused pid could not be told apart, so it is not a series.
    expect(procs).toHaveLength(7);
    const first = procs.find((p) => p.pid === 1328667)!;
    expect(first).toMatchObject({ gpu: 0, user: 'alice', processMiB: 130004, gpuTotalMiB: 143771, gpuUsedMiB: 84474 });
    expect(first.command).toContain('vllm.entrypoints');
    // ps said etimes 3600 for it: started an hour before the poll.
    expect(first.processStart).toBe(now - 3600_000); // samplesSince gives epoch ms
    const hostRam = samples.filter((s) => 'kind' in s && s.kind === 'host');
    expect(hostRam).toEqual([expect.objectContaining({ memTotalBytes: expect.any(Number), memAvailableBytes: expect.any(Number) })]);
    // The 8th GPU has only the container's process: it is kept as a GPU-level sample.
    expect(samples.some((s) => !('kind' in s && s.kind === 'host') && s.pid === undefined && s.gpu === 7)).toBe(true);
  });

  it('keeps one series per process across polls although "poll time - etimes" wobbles', async () => {
    // The fake host's ps always says etimes 3600 for pid 1328667, so a later poll's estimate of its
    // start moves by exactly the time between polls.
    const t0 = Date.parse('2026-11-22T09:00:00Z'); // the first test's poll
    const starts = () => store.db.prepare('SELECT DISTINCT start FROM procs WHERE pid = 1328667').pluck().all() as number[];
    await sampleOnce(svc, store, t0 + 1300); // 1.3 s of wobble (exec latency, whole-second etimes): same process
    expect(starts()).toEqual([(t0 - 3600_000) / 1000]);
    expect(store.db.prepare('SELECT count(*) FROM samples WHERE pid = 1328667').pluck().get()).toBe(2);
    await sampleOnce(svc, store, t0 + 61_000); // 61 s off: beyond the slack, a new process on a reused pid
    expect(starts()).toHaveLength(2);
  });
});

describe('paced inserts', () => {
  it('write the same rows as one transaction, in host-aligned chunks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gpu-doctor-paced-'));
    try {
      const poll: Sample[] = [];
      for (let h = 0; h < 40; h++)
        for (let g = 0; g < 8; g++)
          for (let p = 0; p < 2; p++)
            poll.push({
              ts: '2026-11-22T09:00:00Z',
              host: `n${h}`,
              gpu: g,
              gpuTotalMiB: 81559,
              gpuUsedMiB: 30000,
              utilizationPct: 90,
              pid: 1000 + g * 2 + p,
              processStart: '2026-11-22T08:00:00Z',
              user: 'u',
              command: 'python t.py',
              processMiB: 14000 + p,
            });
      const one = new WatchStore(join(dir, 'one.sqlite'));
      const paced = new WatchStore(join(dir, 'paced.sqlite'));
      one.insert(poll);
      let turns = 0;
      const ticker = setInterval(() => turns++, 0);
      await paced.insertPaced(poll, 50);
      clearInterval(ticker);
      const rows = (s: WatchStore) => s.db.prepare('SELECT * FROM samples ORDER BY 1, 2, 3, 4').raw(true).all();
      expect(rows(paced)).toEqual(rows(one));
      expect(rows(one).length).toBeGreaterThan(640);
      // 640 samples in chunks of >= 50 ending at host boundaries (16 per host): 10 chunks, 9 yields.
      expect(turns).toBeGreaterThan(0);
      one.close();
      paced.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
