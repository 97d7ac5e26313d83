// The early alert end to end: the bot as `createApp` builds it from a config file (hosts service over a real
// OpenSSH sshd, leak watch store and sampler), the real Slack app (fake Web API) and discord.js (fake REST
// and gateway) started as `gpu-doctor bot` starts them, and a host whose fake nvidia-smi / ps replay the
// real 8x H200 reading with GPU 0's process growing 7.5 GiB/h, an hour from full, one reading per
// sampler round (test/hosts/replay-readings.ts). One post to each watch channel, one direct message to
// the owner on each platform, nothing more in the rounds after; `/gpu watch` says how long it has sampled.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { createApp, type App } from '../../src/app.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { FakeSlack } from '../adapters/fake-slack.js';
import { h200After, replay, type Reading } from '../hosts/replay-readings.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';

const SECRET = 'test-signing-secret-0123456789';
const ALICE_SLACK = 'UALICE001';
const ALICE_DISCORD = '323456789012345678';
const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const MIN = 60_000;
/** 7.5 GiB/h: 128 MiB a minute, reserved in 20 MiB segments. */
const grownBy = (round: number) => 20 * Math.floor((128 * round) / 20);

/**
 * The captured H200 reading at sampler round `round`: GPU 0's process (alice's pid 1328667) has grown by
 * grownBy(round), its card as full as an hour of the leak leaves room for; every process a minute older.
 */
function readingAt(round: number): Reading {
  const base = h200After();
  const gpuLines = base.gpuCsv.trim().split('\n');
  const cells = gpuLines[0].split(', ');
  const uuid = cells[1];
  const total = Number(cells[4]);
  cells[3] = String(total - 7680 + grownBy(round));
  gpuLines[0] = cells.join(', ');
  const appsLines = base.appsCsv
    .trim()
    .split('\n')
    .map((line) => {
      const c = line.split(', ');
      if (c[0] === uuid) c[2] = String(Number(c[2]) + grownBy(round));
      return c.join(', ');
    });
  const psLines = base.psTxt
    .trim()
    .split('\n')
    .map((line) =>
      line.replace(/^(\s*\d+\s+\S+\s+)(\d+)/, (_, head: string, etimes: string) => head + String(Number(etimes) + 60 * round).padStart(etimes.length)),
    );
  return { gpuCsv: gpuLines.join('\n') + '\n', appsCsv: appsLines.join('\n') + '\n', psTxt: psLines.join('\n') + '\n' };
}

describeWithSshd('early alert over a real sshd host whose GPU 0 process grows 7.5 GiB/h', 'test/watch/early-alert-e2e.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-early-'));
  const configFile = join(root, 'config.yaml');
  let a: SshdInstance;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let app: App | null = null;
  let bots: RunningBots | null = null;

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    a = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    replay(a.dir, readingAt(0));
    slack = await new FakeSlack().start();
    discord = await new FakeDiscord().start();
    writeFileSync(
      configFile,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 5000',
        '  exec_timeout_ms: 5000',
        'hosts:',
        `  - { name: gpu-a, host: 127.0.0.1, port: ${a.port}, host_key: "${a.fingerprint}" }`,
        'owners:',
        `  alice: { name: Alice Liddell, slack: ${ALICE_SLACK}, discord: "${ALICE_DISCORD}" }`,
        'locale:',
        `  channels: { "${CHANNEL_ID}": zh }`,
        'watch:',
        '  enabled: true',
        '  sample_interval_s: 3600', // rounds are driven by the test; the bot's own first round still runs
        '  digests:',
        '    - { name: slack-watch, platform: slack, channel: CWATCH, cron: "0 9 * * *", dm_owners: true }',
        `    - { name: discord-watch, platform: discord, channel: "${CHANNEL_ID}", cron: "0 9 * * *", dm_owners: true }`,
        '',
      ].join('\n'),
    );
    app = await createApp(configFile);
    bots = await startChatAdapters(
      app,
      {
        SLACK_BOT_TOKEN: 'xoxb-test-token',
        SLACK_SIGNING_SECRET: SECRET,
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
    await app?.close();
    await slack?.close();
    await discord?.close();
    await a?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const sampler = () => (app!.services.watch as WatchRuntime).sampler!;
  /** One sampler round (with its after-round checks) at `now`, after the one the bot may have started itself. */
  const round = async (now: number) => {
    const t0 = Date.now();
    while (!(await sampler().tick(now))) {
      if (Date.now() - t0 > 30_000) throw new Error('the sampler never became free for a round');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const slackTo = (channel: string) => slack.of('chat.postMessage').filter((c) => c.body.channel === channel);
  const early = (text: string) => /Early leak alert|泄漏预警/.test(text);
  const discordPosts = (channel: string) => discord.of(new RegExp(`^/channels/${channel}/messages$`), 'POST').filter((c) => early(JSON.stringify(c.body)));

  it('posts once to the Slack and Discord watch channels and once to the owner on each, within 10 rounds of samples', async () => {
    // Rounds a minute apart from a minute after the bot's own first round.
    const t0 = Date.now() + 2 * MIN;
    let firstAt = -1;
    for (let i = 0; i < 15; i++) {
      replay(a.dir, readingAt(i));
      await round(t0 + i * MIN);
      if (firstAt < 0 && slackTo('CWATCH').some((c) => early(JSON.stringify(c.body)))) firstAt = i;
    }
    expect(firstAt).toBeGreaterThanOrEqual(7); // 8 minutes of samples at least
    expect(firstAt).toBeLessThanOrEqual(10); // within 10 minutes of samples

    const channel = slackTo('CWATCH').filter((c) => early(JSON.stringify(c.body)));
    expect(channel).toHaveLength(1);
    const text = unescapeSlack(JSON.stringify(channel[0].body.blocks)) + channel[0].body.text;
    expect(text).toMatch(/Early leak alert: gpu-a GPU 0 full in \d+ min/);
    expect(text).toMatch(/rises [6-9]\.\d GiB\/h/);
    expect(text).toMatch(/The watch has sampled this process for \d+ min/);
    expect(text).toContain('Fix: ');
    // The channel opted in to owner messages: she is written as a mention there.
    expect(text).toContain(`<@${ALICE_SLACK}> (alice)`);
    const dm = slackTo(ALICE_SLACK);
    expect(dm).toHaveLength(1);
    expect(unescapeSlack(JSON.stringify(dm[0].body.blocks))).toContain('Fix: ');

    // Discord: the channel's language is zh; the owner's DM goes through the DM channel.
    const posts = discordPosts(CHANNEL_ID);
    expect(posts).toHaveLength(1);
    expect(JSON.stringify(posts[0].body)).toContain('泄漏预警：gpu-a GPU 0');
    expect(discordPosts(DM_CHANNEL_ID)).toHaveLength(1);
    const opened = discord.of(/^\/users\/@me\/channels$/, 'POST').map((c) => (c.body as { recipient_id?: string }).recipient_id);
    expect(opened).toContain(ALICE_DISCORD);

    // `/gpu watch` says how long the host has been sampled and when a finding becomes possible.
    const watch = await app!.registry.dispatch('/gpu watch gpu-a', { platform: 'slack', userId: ALICE_SLACK, isAdmin: false, services: app!.services });
    expect(renderText(watch.reply)).toMatch(/Sampled for \d+ min\. Early alert .* possible now\. Digest findings .* possible in \d+ min\./);
  });
});
