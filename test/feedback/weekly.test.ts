// The weekly feedback list (config `feedback.weekly`): the bot as `gpu-doctor bot` builds it (createApp from a
// config file, startChatAdapters against the fake Slack Web API and the fake Discord REST + gateway) posts the
// week's votes and kept logs to the admins' channel once, catches up a week missed while it was down, and a
// restart does not post it again; a leak digest's channel never gets a kept log's id, line or file; a week
// with nothing to report is one short line. The config refuses a weekly channel a digest also posts to.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createApp, type App } from '../../src/app.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { renderText } from '../../src/adapters/console/render.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { ConfigError, loadConfig, parseConfig } from '../../src/config.js';
import { FEEDBACK_WEEKLY_NAME } from '../../src/core/config.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';
import { excerptOf, feedbackWeeklyPost, weeklyFeedbackReply } from '../../src/feedback/weekly.js';
import { DigestScheduler, type DigestConfig } from '../../src/watch/scheduler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { FakeSlack } from '../adapters/fake-slack.js';
import { SECRET_LINES, SECRETS } from './secrets.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const DAY = 86_400_000;
const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
/** A log no rule matches, carrying secrets and a home path. */
const UNMATCHED = [
  'Traceback (most recent call last):',
  '  File "/home/alice/proj/train.py", line 10, in <module>',
  ...SECRET_LINES.map((l) => `    # ${l}`),
  'ValueError: the config has no field "lr_sched" (HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345)',
].join('\n');
const SLACK_ENV = (fake: FakeSlack) => ({
  SLACK_BOT_TOKEN: 'xoxb-test-token',
  SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789',
  SLACK_API_URL: `${fake.base}/api/`,
  PORT: '0',
});
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A week of feedback in a data dir: an unmatched log, a cuda-oom voted 👎 (both kept) and one voted 👍. */
function seed(data: string, now = Date.now()): { unmatched: string; down: string; up: string } {
  const store = FeedbackStore.inDataDir(data, { keepLogs: true });
  try {
    const unmatched = store.record({ platform: 'slack', userId: 'U0ASKER01', channelId: 'CML', rule: null, category: null, log: UNMATCHED }, now - 2 * DAY);
    const down = store.record(
      { platform: 'slack', userId: 'U0ASKER01', channelId: 'CML', rule: 'cuda-oom', category: 'cuda_oom', log: `${SECRET_LINES.join('\n')}\n${OOM}` },
      now - DAY,
    );
    store.vote({ id: down, platform: 'slack', userId: 'U0VOTER01', vote: 'down' }, now - DAY);
    const up = store.record({ platform: 'slack', userId: 'U0ASKER02', channelId: 'CML', rule: 'cuda-oom', category: 'cuda_oom', log: OOM }, now - DAY);
    store.vote({ id: up, platform: 'slack', userId: 'U0VOTER01', vote: 'up' }, now - DAY);
    return { unmatched, down, up };
  } finally {
    store.close();
  }
}

/** What digest_runs holds for a schedule; `set` rewrites it (the bot last posted then). */
function lastRun(data: string, name: string, set?: number): number | null {
  const w = WatchStore.inDataDir(data);
  try {
    if (set !== undefined) w.setLastRun(name, set);
    return w.lastRun(name);
  } finally {
    w.close();
  }
}

function configFile(root: string, yaml: string): string {
  const file = join(root, 'gpu-doctor.yaml');
  writeFileSync(file, `data_dir: ${join(root, 'data')}\n${yaml}`);
  return file;
}

describe('the weekly feedback list in the admins’ channel, through the bot', () => {
  let bots: RunningBots | null = null;
  let app: App | null = null;
  const closers: (() => Promise<void> | void)[] = [];
  async function stopBot() {
    await bots?.stop();
    await app?.close();
    bots = null;
    app = null;
  }
  async function startBot(config: string, env: Record<string, string>) {
    app = await createApp(config);
    bots = await startChatAdapters(app, env, silent);
  }
  afterEach(async () => {
    await stopBot();
    for (const c of closers.splice(0).reverse()) await c();
  });

  it('Slack, watch off: first start posts nothing; a week missed while down is posted once; a restart does not post it again', async () => {
    const slack = await new FakeSlack().start();
    closers.push(() => slack.close());
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-'));
    const data = join(root, 'data');
    const ids = seed(data);
    const config = configFile(root, 'feedback:\n  keep_logs: true\n  weekly:\n    platform: slack\n    channel: CADMIN\n    cron: "0 9 * * 1"\n');

    // First start: nothing was missed, the schedule is remembered.
    await startBot(config, SLACK_ENV(slack));
    await sleep(500);
    expect(slack.of('chat.postMessage')).toHaveLength(0);
    const first = lastRun(data, FEEDBACK_WEEKLY_NAME);
    expect(first).toBeGreaterThan(Date.now() - 60_000);
    await stopBot();

    // The bot was down over a Monday 09:00 (it last posted 8 days ago): posted once on start.
    lastRun(data, FEEDBACK_WEEKLY_NAME, Date.now() - 8 * DAY);
    await startBot(config, SLACK_ENV(slack));
    const [call] = await slack.waitFor('chat.postMessage');
    expect(call.body.channel).toBe('CADMIN');
    const text = unescapeSlack(JSON.stringify(call.body.blocks));
    expect(text).toContain('Feedback this week');
    expect(text).toContain('Votes per rule');
    expect(text).toMatch(/cuda-oom +2 +1 +1/);
    expect(text).toMatch(/\(no rule\) +1 +0 +0/);
    // The kept logs: the unmatched one and the 👎 one, by id, with one redacted line each and the CLI line.
    expect(text).toContain('Kept logs (2)');
    expect(text).toContain(ids.unmatched);
    expect(text).toContain(ids.down);
    expect(text).not.toContain(ids.up);
    expect(text).toContain('ValueError: the config has no field');
    expect(text).toContain('(HF_TOKEN=<hf token>)');
    expect(text).toContain('RuntimeError: CUDA out of memory. Tried to allocate 16.00 MiB');
    expect(text).toMatch(new RegExp(`gpu-doctor knowledge new RULE-ID --from ${join(data, 'feedback-logs')}/\\d{8}-unmatched-${ids.unmatched}\\.log`));
    expect(text).toMatch(new RegExp(`gpu-doctor knowledge new RULE-ID --from ${join(data, 'feedback-logs')}/\\d{8}-cuda-oom-${ids.down}\\.log`));
    for (const s of SECRETS) expect(text, s).not.toContain(s);
    const caughtUp = lastRun(data, FEEDBACK_WEEKLY_NAME)!;
    expect(caughtUp).toBeGreaterThan(first!);
    await stopBot();

    // Restarted right after: the week was posted, nothing again.
    await startBot(config, SLACK_ENV(slack));
    await sleep(1000);
    expect(slack.of('chat.postMessage')).toHaveLength(1);
    expect(lastRun(data, FEEDBACK_WEEKLY_NAME)).toBe(caughtUp);
  }, 60_000);

  it('Slack, watch on: one more schedule of the digests’ scheduler; the digest’s channel gets no kept log, the admins’ channel does; no double post after a restart', async () => {
    const slack = await new FakeSlack().start();
    closers.push(() => slack.close());
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-watch-'));
    const data = join(root, 'data');
    const ids = seed(data);
    const config = configFile(
      root,
      [
        'hosts: []',
        'watch:',
        '  enabled: true',
        '  sample_interval_s: 3600',
        '  digests:',
        '    - { name: daily, platform: slack, channel: CTEAM, cron: "0 9 * * *" }',
        'feedback:',
        '  keep_logs: true',
        '  weekly: { platform: slack, channel: CADMIN }',
        '',
      ].join('\n'),
    );
    lastRun(data, 'daily', Date.now() - 8 * DAY);
    lastRun(data, FEEDBACK_WEEKLY_NAME, Date.now() - 8 * DAY);
    await startBot(config, SLACK_ENV(slack));
    const posts = await slack.waitFor('chat.postMessage', 2, 20_000);
    const to = (channel: string) => posts.filter((p) => p.body.channel === channel).map((p) => unescapeSlack(JSON.stringify(p.body.blocks)));
    expect(to('CTEAM')).toHaveLength(1);
    expect(to('CADMIN')).toHaveLength(1);
    const [team] = to('CTEAM');
    const [admins] = to('CADMIN');
    expect(team).toMatch(/Leak watch digest|No memory leaks/);
    for (const leak of [ids.unmatched, ids.down, 'feedback-logs', 'knowledge new', 'ValueError', 'Kept logs']) expect(team).not.toContain(leak);
    expect(admins).toContain(ids.unmatched);
    expect(admins).toContain('ValueError: the config has no field');
    await stopBot();

    await startBot(config, SLACK_ENV(slack));
    await sleep(1500);
    expect(slack.of('chat.postMessage')).toHaveLength(2);
  }, 60_000);

  it('Discord, nothing to report: the week missed while down is one short line in the admins’ channel', async () => {
    const discord = await new FakeDiscord().start();
    closers.push(() => discord.close());
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-discord-'));
    const data = join(root, 'data');
    const config = configFile(root, `feedback:\n  weekly: { platform: discord, channel: "${CHANNEL_ID}", cron: "0 9 * * 1", timezone: Europe/Berlin }\n`);
    lastRun(data, FEEDBACK_WEEKLY_NAME, Date.now() - 8 * DAY);
    await startBot(config, { DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${discord.base}/api` });
    const [sent] = await discord.waitFor(new RegExp(`^/channels/${CHANNEL_ID}/messages$`), 1, 10000, 'POST');
    const embed = JSON.stringify((sent.body as { embeds?: unknown }).embeds);
    expect(embed).toContain('Feedback this week');
    expect(embed).toContain('No feedback this week: no 👍 / 👎 and no log that matched no rule (0 diagnoses).');
    expect(embed).not.toContain('Votes per rule');
  }, 60_000);
});

describe('the weekly schedule', () => {
  const weekly = (store: FeedbackStore) => feedbackWeeklyPost(store, { platform: 'console', channel: 'admins', cron: '0 9 * * 1', timezone: 'Europe/Berlin' });

  it('is caught up once after a Monday 09:00 missed while down, never twice across restarts, alongside a digest', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-sched-'));
    const feedback = FeedbackStore.inDataDir(dir, { keepLogs: true });
    const posts: string[] = [];
    const post = async (d: DigestConfig) => void posts.push(d.name);
    const daily: DigestConfig = { name: 'daily', platform: 'console', channel: 'team', cron: '0 9 * * *', timezone: 'Europe/Berlin' };
    const restart = async (at: string) => {
      const store = WatchStore.inDataDir(dir);
      const s = new DigestScheduler(store, [daily], post, undefined);
      s.add(weekly(feedback));
      const caught = await s.start(Date.parse(at));
      s.stop();
      store.close();
      return caught;
    };
    expect(await restart('2026-11-22T12:00:00Z')).toEqual([]); // a Sunday: first start
    expect(await restart('2026-11-23T07:30:00Z')).toEqual([]); // Monday 08:30 Berlin: not yet
    expect(await restart('2026-11-23T09:00:00Z')).toEqual(['daily', FEEDBACK_WEEKLY_NAME]); // 10:00 Berlin: both once
    expect(await restart('2026-11-23T15:00:00Z')).toEqual([]);
    expect(await restart('2026-11-25T09:00:00Z')).toEqual(['daily']); // Wednesday: the daily only
    expect(posts).toEqual(['daily', FEEDBACK_WEEKLY_NAME, 'daily']);
    feedback.close();
  });

  it('the reply in Chinese for a zh admin channel; days in the schedule’s time zone; a log line redacted again', () => {
    const now = Date.parse('2026-11-23T08:00:00Z');
    const dir = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-zh-'));
    const ids = seed(dir, now);
    const store = FeedbackStore.inDataDir(dir, { keepLogs: true });
    const reply = weeklyFeedbackReply(store.report(7, now), now, { keptLogsDir: store.logsDir, locale: 'zh', timeZone: 'Asia/Shanghai' });
    store.close();
    const text = renderText(reply);
    expect(text).toContain('本周反馈（2026-11-16 – 2026-11-23）');
    expect(text).toContain('保存的日志（2）');
    expect(text).toContain(ids.unmatched);
    expect(text).toContain('（无规则）');
    expect(text).not.toContain('Kept logs');
    expect(excerptOf('Traceback (most recent call last):\n  File "/home/bob/x.py"\nKeyError: token=abc123def /home/bob/x\x1b[31m')).toBe(
      'KeyError: token=<redacted> /home/<user>/x',
    );
    expect(excerptOf('just one line from /Users/carol\tand\u0007a bell')).toBe('just one line from /Users/<user> anda bell');
    expect(excerptOf(`step 1\nNCCL WARN connect failed to 10.0.0.7\n${'x'.repeat(300)}`)).toBe('NCCL WARN connect failed to <ip>');
    expect(excerptOf(`RuntimeError: ${'y'.repeat(300)}`)).toHaveLength(120);
  });

  it('nothing to report: one short line, no tables (a silent week is told apart from a bot that stopped posting)', () => {
    const reply = weeklyFeedbackReply(
      { days: 7, sinceMs: 0, keepLogs: true, rules: [{ rule: 'cuda-oom', category: 'cuda_oom', diagnoses: 4, up: 0, down: 0 }], items: [] },
      7 * DAY,
      { keptLogsDir: '/nonexistent/feedback-logs' },
    );
    expect(reply.sections).toEqual([{ text: 'No feedback this week: no 👍 / 👎 and no log that matched no rule (4 diagnoses).' }]);
    expect(reply.visibility).toBeUndefined();
  });
});

describe('feedback.weekly in the config', () => {
  it('defaults to Monday 09:00 UTC; a bad cron names the key and its line', () => {
    expect(parseConfig({ feedback: { weekly: { platform: 'slack', channel: 'CADMIN' } } }).feedback.weekly).toEqual({
      platform: 'slack',
      channel: 'CADMIN',
      cron: '0 9 * * 1',
      timezone: 'UTC',
    });
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-cfg-'));
    const file = configFile(root, 'feedback:\n  weekly:\n    platform: slack\n    channel: CADMIN\n    cron: "every monday"\n    timzone: UTC\n');
    expect(() => loadConfig(file)).toThrow(/feedback\.weekly\.cron: a cron expression.*\(line 6\)/);
    expect(() => loadConfig(file)).toThrow(/feedback\.weekly: unknown key "timzone" \(did you mean "timezone"\?\) \(line 7\)/);
  });

  it('refuses a weekly channel a leak digest also posts to, and a digest that takes the weekly list’s name', () => {
    const root = mkdtempSync(join(tmpdir(), 'gd-fb-weekly-cfg-'));
    const shared = configFile(
      root,
      'watch:\n  digests:\n    - { name: daily, platform: slack, channel: CTEAM, cron: "0 9 * * *" }\nfeedback:\n  weekly:\n    platform: slack\n    channel: CTEAM\n',
    );
    expect(() => loadConfig(shared)).toThrow(ConfigError);
    expect(() => loadConfig(shared)).toThrow(/feedback\.weekly\.channel: also watch\.digests\.0's channel; .*admins' own channel \(line 8\)/);
    // The same id on the other platform is another channel.
    expect(() =>
      parseConfig({
        watch: { digests: [{ platform: 'discord', channel: 'CTEAM', cron: '0 9 * * *' }] },
        feedback: { weekly: { platform: 'slack', channel: 'CTEAM' } },
      }),
    ).not.toThrow();
    expect(() => parseConfig({ watch: { digests: [{ name: FEEDBACK_WEEKLY_NAME, platform: 'slack', channel: 'C1', cron: '0 9 * * *' }] } })).toThrow(
      /watch\.digests\.0\.name: "feedback-weekly" is the weekly feedback list's name/,
    );
  });
});
