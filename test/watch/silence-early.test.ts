// A silenced host gets no early alert either: alice's job leaking 7.5 GiB/h (an hour from full) on a
// silenced GPU is not posted while the silence lasts, and is posted once after it is cancelled, as long
// as it still rises. The runtime's own round path (observe, then the early check) over the SQLite stores.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { Reply } from '../../src/core/reply.js';
import type { PostTarget } from '../../src/core/services.js';
import { SilenceStore } from '../../src/storage/sqlite/silences.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { toMs } from '../../src/watch/series.js';
import type { Sample } from '../../src/watch/types.js';
import { buildSamples, prng, trainingProcess } from './generator.js';

const MIN = 60_000;
const LEAK = 7680;

/** The leak of test/watch/early-alert-post.test.ts, from `t0`, round by round. */
function leakRounds(t0: number): { ms: number; samples: Sample[] }[] {
  const rnd = prng(4242);
  const proc = trainingProcess(
    { gpu: 0, pid: 4242, user: 'alice', command: 'python train.py', toMs: t0 + 10 * 60 * MIN },
    { baseMiB: 40000, startMs: t0 - 60 * MIN, leak: { slopeMiBPerHour: LEAK, startMs: t0, blockMiB: 20 } },
    rnd,
  );
  const out: { ms: number; samples: Sample[] }[] = [];
  for (const s of buildSamples({ host: 'gpu1', t0, hours: 0.5, gpuTotalMiB: 40000 + 350 + LEAK, procs: [proc] }, rnd)) {
    const ms = toMs(s.ts);
    if (out.length && out[out.length - 1].ms === ms) out[out.length - 1].samples.push(s);
    else out.push({ ms, samples: [s] });
  }
  return out;
}

describe('silences and early alerts', () => {
  it('no early alert for a silenced host; after the cancel, the still-rising leak is posted once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-silence-early-'));
    const config = parseConfig({
      data_dir: dir,
      watch: { enabled: true, digests: [{ name: 'daily', platform: 'slack', channel: 'CWATCH', cron: '0 9 * * *' }] },
    });
    const runtime = new WatchRuntime(WatchStore.inDataDir(dir), undefined, undefined, config.watch);
    runtime.setSilences(SilenceStore.inDataDir(dir));
    const posts: [PostTarget, Reply][] = [];
    runtime.setPoster((target, reply) => Promise.resolve(void posts.push([target, reply])));
    try {
      const t0 = Date.now();
      const admin = { platform: 'slack', userId: 'UADMIN01', isAdmin: true };
      const added = await runtime.silences!.add({ host: 'gpu1', gpu: null, durationMs: 3_600_000 }, admin, t0 - MIN);
      expect(added.ok).toBe(true);
      const rounds = leakRounds(t0);
      for (const r of rounds.slice(0, 15)) {
        runtime.observe(r.samples);
        await runtime.earlyAlerts(r.ms);
      }
      expect(posts).toEqual([]);
      await runtime.silences!.cancel((added as { silence: { id: number } }).silence.id, admin, rounds[15].ms);
      for (const r of rounds.slice(15)) {
        runtime.observe(r.samples);
        await runtime.earlyAlerts(r.ms);
      }
      expect(posts.map(([t, r]) => [t.channel, r.title.replace(/\d+ min$/, 'N min')])).toEqual([['CWATCH', 'Early leak alert: gpu1 GPU 0 full in N min']]);
    } finally {
      runtime.stop();
    }
  });
});
