// Early alerts are posted once per process (host + GPU + pid + start time) to each watch channel, and to
// the owner where the channel has dm_owners, recorded in the watch's reported-state record (the real
// SQLite store): a second round, a second watch over the same store (a restart) and a failed post never
// post again; a new process of a reused pid is a new alert.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PostTarget } from '../../src/core/services.js';
import type { Reply } from '../../src/core/reply.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { EarlyWatch, postEarlyAlerts, type EarlyAlert, type EarlyChannel } from '../../src/watch/early-alert.js';
import { toMs } from '../../src/watch/series.js';
import type { Sample } from '../../src/watch/types.js';
import { buildSamples, prng, trainingProcess } from './generator.js';

const T0 = Date.parse('2026-11-20T08:00:00Z');
const MIN = 60_000;
const LEAK = 7680;

/** Alice's job leaking 7.5 GiB/h on GPU 0 of gpu1 from T0 (an hour from full), as a watch sees it round by round. */
function leakRounds(pid = 4242, startMin = -60): { ms: number; samples: Sample[] }[] {
  const rnd = prng(pid);
  const proc = trainingProcess(
    { gpu: 0, pid, user: 'alice', command: 'python train.py', toMs: T0 + 10 * 60 * MIN },
    { baseMiB: 40000, startMs: T0 + startMin * MIN, leak: { slopeMiBPerHour: LEAK, startMs: T0, blockMiB: 20 } },
    rnd,
  );
  const out: { ms: number; samples: Sample[] }[] = [];
  for (const s of buildSamples({ host: 'gpu1', t0: T0, hours: 0.5, gpuTotalMiB: 40000 + 350 + LEAK, procs: [proc] }, rnd)) {
    const ms = toMs(s.ts);
    if (out.length && out[out.length - 1].ms === ms) out[out.length - 1].samples.push(s);
    else out.push({ ms, samples: [s] });
  }
  return out;
}

const channels: EarlyChannel[] = [
  { name: 'daily', platform: 'slack', channel: 'CWATCH', dm_owners: true },
  { name: 'ops', platform: 'discord', channel: '900000000000000004' },
];
/** As `owners:` in the config maps alice (the config's own parse adds nothing to these fields). */
const owners = () => new OwnerDirectory({ alice: { name: 'Alice Liddell', slack: 'UALICE001', discord: '323456789012345678' } }, null);

describe('early alerts: posted once per process', () => {
  const closers: (() => void)[] = [];
  afterEach(() => {
    for (const c of closers.splice(0)) c();
  });

  /** Every round through a watch, posting what it finds as the runtime does; the posts made. */
  async function watchAndPost(store: WatchStore, rounds: { ms: number; samples: Sample[] }[], post: (t: PostTarget, r: Reply) => Promise<void>) {
    const rules = await loadRuleBase();
    const watch = new EarlyWatch();
    const found: EarlyAlert[] = [];
    for (const r of rounds) {
      watch.add(r.samples);
      const alerts = await watch.checkYielding(r.ms);
      found.push(...alerts);
      await postEarlyAlerts(alerts, { channels, post, reported: store, rules, owners: owners(), withinHours: 1 }, r.ms);
      for (const a of alerts) watch.markAlerted(a.key);
    }
    return found;
  }

  it('one post to each channel and one owner message where the channel asked for them; none again after a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-early-post-'));
    const store = WatchStore.inDataDir(dir);
    closers.push(() => store.close());
    const posts: { target: PostTarget; reply: Reply }[] = [];
    const post = (target: PostTarget, reply: Reply) => {
      posts.push({ target, reply });
      return Promise.resolve();
    };
    const rounds = leakRounds();
    expect(await watchAndPost(store, rounds, post)).toHaveLength(1);
    expect(posts.map((p) => [p.target.platform, p.target.channel, p.target.kind ?? 'channel'])).toEqual([
      ['slack', 'CWATCH', 'channel'],
      ['slack', 'UALICE001', 'dm'],
      ['discord', '900000000000000004', 'channel'],
    ]);
    expect(posts[0].reply.title).toMatch(/^Early leak alert: gpu1 GPU 0 full in \d+ min$/);
    expect(JSON.stringify(posts[0].reply)).toContain('Fix: ');
    // Kept where the digests keep what they reported, by host, GPU, pid and start time.
    expect([...store.reported('daily').keys()]).toEqual([`early|gpu1|0|4242|${(T0 - 60 * MIN) / 1000}`]);

    // A restart: a new watch over the same store finds the leak again and posts nothing.
    const again: Reply[] = [];
    expect(await watchAndPost(store, rounds, (_t, r) => Promise.resolve(void again.push(r)))).toHaveLength(1);
    expect(again).toEqual([]);
    store.close();
    const reopened = WatchStore.inDataDir(dir);
    closers.push(() => reopened.close());
    expect(await watchAndPost(reopened, rounds, (_t, r) => Promise.resolve(void again.push(r)))).toHaveLength(1);
    expect(again).toEqual([]);
  });

  it('a failed post is not retried into a second one; a reused pid with a new start time is a new alert', async () => {
    const store = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-early-post-')));
    closers.push(() => store.close());
    let calls = 0;
    const failing = () => {
      calls++;
      return Promise.reject(new Error('channel_not_found'));
    };
    await watchAndPost(store, leakRounds(), failing);
    await watchAndPost(store, leakRounds(), failing);
    expect(calls).toBe(3); // the first time only: two channels and the owner
    const posted: PostTarget[] = [];
    await watchAndPost(store, leakRounds(4242, -5), (t) => Promise.resolve(void posted.push(t)));
    expect(posted.filter((t) => t.kind !== 'dm')).toHaveLength(2);
  });
});
