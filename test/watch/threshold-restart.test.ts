// Threshold alerts across a restart (SQLite): the posted state of an episode is kept in the watch's
// store (data_dir/watch.sqlite), so a bot restarted while a card stays full does not post it again; once
// a reading shows the card no longer full, the next episode is posted as usual.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { parseConfig } from '../../src/config.js';
import type { Reply } from '../../src/core/reply.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { fullCardPoll, MIN, T0 } from './threshold-polls.js';

describe('threshold alerts across a restart (SQLite)', () => {
  const running: WatchRuntime[] = [];
  afterEach(() => {
    for (const r of running.splice(0)) r.stop();
  });

  it('a card full before and after a restart is posted once; after it clears, the next episode is posted', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'gd-threshold-restart-'));
    const config = parseConfig({
      data_dir: dataDir,
      watch: { enabled: true, alerts: { card_full: {} }, digests: [{ name: 'w', platform: 'console', channel: 'watch', cron: '0 9 * * *' }] },
    });
    const posts: Reply[] = [];
    const start = (): WatchRuntime => {
      const r = new WatchRuntime(WatchStore.inDataDir(dataDir), undefined, undefined, config.watch);
      r.setPoster(async (_target, reply) => void posts.push(reply));
      running.push(r);
      return r;
    };
    const round = async (r: WatchRuntime, m: number, usedGiB?: number) => {
      r.observe(fullCardPoll(m, usedGiB));
      await r.thresholdAlerts(T0 + m * MIN);
    };

    let bot = start();
    for (let m = 0; m <= 30; m++) await round(bot, m);
    expect(posts.map((p) => p.title)).toEqual(['GPU full: gpu1 GPU 1 at 98% of its memory for 30 min']);

    // Restarted mid-episode (over the same data_dir): the card stays full for another hour.
    bot.stop();
    running.length = 0;
    bot = start();
    for (let m = 32; m <= 95; m++) await round(bot, m);
    expect(posts).toHaveLength(1);

    // A reading below the threshold ends the episode; a new one is posted after its 30 minutes.
    await round(bot, 96, 60);
    for (let m = 97; m <= 127; m++) await round(bot, m);
    expect(posts.map((p) => p.title)).toEqual(['GPU full: gpu1 GPU 1 at 98% of its memory for 30 min', 'GPU full: gpu1 GPU 1 at 98% of its memory for 30 min']);
  });
});
