// Threshold alerts over a real PostgreSQL (Debian's postgresql package, started by the test): the posted
// state of an episode is shared through the database, so a bot restarted mid-episode does not post it
// again, nor does a second replica that takes the host over (its own pool, as a second process has it)
// and sees the same card still full. A reading below the threshold clears it for the next episode.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { Reply } from '../../src/core/reply.js';
import { openPool, type Pool } from '../../src/storage/postgres/connect.js';
import { migrate } from '../../src/storage/postgres/migrations.js';
import { PgWatchState } from '../../src/storage/postgres/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { fullCardPoll, MIN, T0 } from '../watch/threshold-polls.js';
import { startPostgres, type PgInstance } from './pg-harness.js';
import { describeWithPostgres } from './pg-suite.js';

describeWithPostgres('Postgres threshold episodes, restart and replicas', 'test/storage/pg-threshold-episodes.test.ts', () => {
  let server: PgInstance;
  let url: string;
  const pools: Pool[] = [];
  const config = parseConfig({
    watch: { enabled: true, alerts: { card_full: {} }, digests: [{ name: 'w', platform: 'console', channel: 'watch', cron: '0 9 * * *' }] },
  });

  beforeAll(async () => {
    server = await startPostgres();
    url = await server.createDatabase('threshold_episodes');
  }, 60_000);

  afterAll(async () => {
    for (const p of pools) await p.end();
    await server?.stop();
  });

  /** One bot process: its own pool, migrated at start as the bot does, posting into `posts`. */
  async function bot(name: string, posts: Reply[]): Promise<WatchRuntime> {
    const pool = openPool({ url, applicationName: name });
    pools.push(pool);
    await migrate(pool);
    const r = new WatchRuntime(new PgWatchState(pool, { replica: name, leaseMs: 5000 }), undefined, undefined, config.watch);
    r.setPoster(async (_target, reply) => void posts.push(reply));
    return r;
  }
  const round = async (r: WatchRuntime, m: number, host: string, usedGiB?: number) => {
    r.observe(fullCardPoll(m, usedGiB, host));
    await r.thresholdAlerts(T0 + m * MIN);
  };

  it('a restart mid-episode does not post the episode again; the next episode after it clears is posted', async () => {
    const posts: Reply[] = [];
    const first = await bot('restart-1', posts);
    for (let m = 0; m <= 30; m++) await round(first, m, 'gpu1');
    expect(posts.map((p) => p.title)).toEqual(['GPU full: gpu1 GPU 1 at 98% of its memory for 30 min']);
    first.stop();
    const second = await bot('restart-2', posts);
    for (let m = 32; m <= 95; m++) await round(second, m, 'gpu1');
    expect(posts).toHaveLength(1);
    await round(second, 96, 'gpu1', 60);
    for (let m = 97; m <= 127; m++) await round(second, m, 'gpu1');
    expect(posts).toHaveLength(2);
    second.stop();
  });

  it('a replica running beside the one that posted, taking the host over, does not post it again', async () => {
    const postsA: Reply[] = [];
    const postsB: Reply[] = [];
    const a = await bot('replica-a', postsA);
    const b = await bot('replica-b', postsB);
    // Both started (and read the store) before A posted; A samples gpu2 until its lease moves to B.
    await b.thresholdAlerts(T0);
    for (let m = 0; m <= 40; m++) await round(a, m, 'gpu2');
    expect(postsA.map((p) => p.title)).toEqual(['GPU full: gpu2 GPU 1 at 98% of its memory for 30 min']);
    for (let m = 41; m <= 100; m++) {
      await a.thresholdAlerts(T0 + m * MIN);
      await round(b, m, 'gpu2');
    }
    expect(postsB).toEqual([]);
    expect(postsA).toHaveLength(1);
    a.stop();
    b.stop();
  });
});
