// Threshold alerts (watch.alerts) through the real Slack app (fake Web API) and discord.js (fake REST and
// gateway) as startChatAdapters wires them: a GPU held idle and a full card are posted once per episode to
// each watch channel and to the holder's owner where dm_owners; a busy GPU, a short dip, a gap in the
// samples and a card that clears and fills again behave as the rules say. The config's `watch.alerts` is
// read by parseConfig (each rule off unless named).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { allCommands } from '../../commands/index.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { ThresholdWatch } from '../../src/watch/threshold-alerts.js';
import type { Sample } from '../../src/watch/types.js';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { FakeSlack } from '../adapters/fake-slack.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const MIN = 60_000;
const T0 = Date.parse('2026-11-20T08:00:00Z');
const G = 1024;
const ALICE_SLACK = 'UALICE001';
const ALICE_DISCORD = '323456789012345678';

/** One poll of gpu1: GPU 0 holds `idle` MiB for alice's notebook at `util0` %, GPU 1 is bob's training job at `used1` MiB of 80 GiB. */
function poll(minute: number, o: { util0?: number | null; idle?: number; used1?: number } = {}): Sample[] {
  const ts = T0 + minute * MIN;
  const idle = o.idle ?? 30 * G;
  return [
    {
      ts,
      host: 'gpu1',
      gpu: 0,
      gpuTotalMiB: 80 * G,
      gpuUsedMiB: idle + 500,
      utilizationPct: o.util0 === undefined ? 0 : o.util0,
      pid: 4242,
      processStart: T0 - 3_600_000,
      user: 'alice',
      command: 'python -m ipykernel_launcher',
      processMiB: idle,
    },
    {
      ts,
      host: 'gpu1',
      gpu: 1,
      gpuTotalMiB: 80 * G,
      gpuUsedMiB: o.used1 ?? 78 * G,
      utilizationPct: 95,
      pid: 777,
      processStart: T0 - 7_200_000,
      user: 'bob',
      command: 'torchrun train.py',
      processMiB: (o.used1 ?? 78 * G) - 500,
    },
    { ts, host: 'gpu1', kind: 'host', memTotalBytes: 2 ** 40, memAvailableBytes: 2 ** 39 },
  ];
}

describe('watch.alerts in the config', () => {
  it('each rule is off unless named; a named rule takes the defaults (1 GiB at 0% for 60 min, 95% for 30 min)', () => {
    expect(parseConfig({}).watch.alerts).toEqual({});
    expect(parseConfig({ watch: { enabled: true } }).watch.alerts).toEqual({});
    expect(parseConfig({ watch: { alerts: { idle_held: {}, card_full: {} } } }).watch.alerts).toEqual({
      idle_held: { min_gib: 1, max_util_pct: 0, minutes: 60 },
      card_full: { pct: 95, minutes: 30 },
    });
    expect(() => parseConfig({ watch: { alerts: { card_full: { pct: 120 } } } })).toThrow(/card_full/);
    expect(() => parseConfig({ watch: { alerts: { idle: {} } } })).toThrow();
  });
});

describe('episodes', () => {
  const cfg = { idle_held: { min_gib: 1, max_util_pct: 0, minutes: 60 }, card_full: { pct: 95, minutes: 30 } };

  it('a busy GPU, a GPU under the threshold and an idle stretch broken by one busy poll are not alerted', () => {
    const w = new ThresholdWatch(cfg, 3 * MIN);
    for (let m = 0; m <= 90; m++) {
      w.add(poll(m, { util0: m === 45 ? 30 : 0, used1: 70 * G }));
      expect(w.due(T0 + m * MIN)).toEqual([]);
    }
    const busy = new ThresholdWatch(cfg, 3 * MIN);
    for (let m = 0; m <= 90; m++) busy.add(poll(m, { util0: 40, idle: 512, used1: 70 * G }));
    expect(busy.due(T0 + 90 * MIN)).toEqual([]);
  });

  it('an unreported utilisation neither extends nor breaks an idle stretch; a gap in the samples breaks it', () => {
    const w = new ThresholdWatch({ idle_held: cfg.idle_held }, 3 * MIN);
    for (let m = 0; m <= 61; m++) w.add(poll(m, { util0: m >= 20 && m < 30 ? null : 0 }));
    expect(w.due(T0 + 61 * MIN).map((a) => [a.rule, a.gpu, Math.round(a.minutes)])).toEqual([['idle_held', 0, 61]]);
    const gap = new ThresholdWatch({ idle_held: cfg.idle_held }, 3 * MIN);
    for (let m = 0; m <= 70; m++) if (m < 30 || m > 40) gap.add(poll(m));
    expect(gap.due(T0 + 70 * MIN)).toEqual([]);
  });
});

describe('threshold alerts through Slack and Discord', () => {
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let bots: RunningBots | null = null;
  let runtime: WatchRuntime;

  beforeAll(async () => {
    slack = await new FakeSlack().start();
    discord = await new FakeDiscord().start();
    const dataDir = mkdtempSync(join(tmpdir(), 'gd-threshold-'));
    const config = parseConfig({
      data_dir: dataDir,
      watch: {
        enabled: true,
        alerts: { idle_held: { min_gib: 8 }, card_full: {} },
        digests: [
          { name: 'slack-watch', platform: 'slack', channel: 'CWATCH', cron: '0 9 * * *', dm_owners: true },
          { name: 'discord-watch', platform: 'discord', channel: CHANNEL_ID, cron: '0 9 * * *', dm_owners: true },
        ],
      },
    });
    runtime = new WatchRuntime(WatchStore.inDataDir(dataDir), undefined, undefined, config.watch);
    runtime.setOwners(new OwnerDirectory({ alice: { name: 'Alice Liddell', slack: ALICE_SLACK, discord: ALICE_DISCORD } }, null));
    const app = {
      loaded: { config, file: null, baseDir: dataDir },
      audit: sqliteAudit(config, dataDir),
      services: { rules: await loadRuleBase(), watch: runtime },
      registry: new CommandRegistry(allCommands()),
      async close() {},
    };
    bots = await startChatAdapters(
      app,
      {
        SLACK_BOT_TOKEN: 'xoxb-test-token',
        SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789',
        SLACK_API_URL: `${slack.base}/api/`,
        PORT: '0',
        DISCORD_TOKEN: 'fake.discord.token.0123456789',
        DISCORD_API_URL: `${discord.base}/api`,
      },
      silent,
    );
  });

  afterAll(async () => {
    await bots?.stop();
    runtime?.stop();
    await slack?.close();
    await discord?.close();
  });

  const slackTo = (channel: string, re: RegExp) =>
    slack.of('chat.postMessage').filter((c) => c.body.channel === channel && re.test(unescapeSlack(JSON.stringify(c.body.blocks)) + String(c.body.text)));
  const discordTo = (channel: string, re: RegExp) =>
    discord.of(new RegExp(`^/channels/${channel}/messages$`), 'POST').filter((c) => re.test(JSON.stringify(c.body)));
  const IDLE = /Idle GPU memory: gpu1 GPU 0/;
  const FULL = /GPU full: gpu1 GPU 1 at 98% of its memory/;

  it('posts each episode once to each channel and the idle holder to her owner; again only after the condition cleared', async () => {
    const round = async (m: number, o?: Parameters<typeof poll>[1]) => {
      runtime.thresholds.add(poll(m, o));
      await runtime.thresholdAlerts(T0 + m * MIN);
    };
    for (let m = 0; m <= 29; m++) await round(m);
    expect(slackTo('CWATCH', /GPU full|Idle GPU/)).toEqual([]);
    await round(30);
    expect(slackTo('CWATCH', FULL)).toHaveLength(1);
    for (let m = 31; m <= 59; m++) await round(m);
    expect(slackTo('CWATCH', IDLE)).toEqual([]);
    await round(60);
    for (let m = 61; m <= 90; m++) await round(m);
    expect(slackTo('CWATCH', IDLE)).toHaveLength(1);
    expect(slackTo('CWATCH', FULL)).toHaveLength(1);
    const text = unescapeSlack(JSON.stringify(slackTo('CWATCH', IDLE)[0].body.blocks));
    expect(text).toContain('30.5 GiB at 0% utilisation for 60 min');
    expect(text).toContain('/gpu silence gpu1 0 2h');
    expect(text).toContain('Alice Liddell (alice)');
    // Alice is the idle holder's owner; bob has no mapping: one owner message each platform.
    expect(slackTo(ALICE_SLACK, IDLE)).toHaveLength(1);
    expect(slackTo(ALICE_SLACK, FULL)).toEqual([]);
    // Discord's channel and her DM there.
    expect(discordTo(CHANNEL_ID, /Idle GPU memory/)).toHaveLength(1);
    expect(discordTo(CHANNEL_ID, /GPU full/)).toHaveLength(1);
    expect(discordTo(DM_CHANNEL_ID, /Idle GPU memory/)).toHaveLength(1);

    // GPU 1 drops below 95% (a checkpoint freed memory), then fills again for 30 min: a new episode, a second post.
    await round(91, { used1: 60 * G });
    for (let m = 92; m <= 122; m++) await round(m);
    expect(slackTo('CWATCH', FULL)).toHaveLength(2);
    expect(slackTo('CWATCH', IDLE)).toHaveLength(1);
  });
});
