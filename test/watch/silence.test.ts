// /gpu silence through the real Slack app (signed slash commands, fake Web API) and discord.js (fake
// gateway interactions), as startChatAdapters wires them, over the SQLite silences store in data_dir:
// who may silence (an admin, or the owner of a process the last round saw there) and cancel (an admin,
// or whoever set it); a silenced GPU gets no threshold alert while another GPU's still goes out; the list
// says who set each silence and until when; a cancelled or ended silence lets a condition still holding
// be posted once.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { parseConfig } from '../../src/config.js';
import { english } from '../../src/core/message.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { allCommands } from '../../commands/index.js';
import { parseSilenceDuration, parseSilenceWords } from '../../commands/silence.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { SilenceStore } from '../../src/storage/sqlite/silences.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import type { Sample } from '../../src/watch/types.js';
import { CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { FakeSlack, postSignedSlack } from '../adapters/fake-slack.js';
import { fakeHosts } from '../adapters/helpers.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const SECRET = 'test-signing-secret-0123456789';
const MIN = 60_000;
const G = 1024;
const ALICE_SLACK = 'UALICE001';
const ALICE_DISCORD = '323456789012345678';
const ADMIN_SLACK = 'UADMIN001';
const MEMBER_DISCORD = '800000000000000001';

/** One poll of gpu1 at `ms`: GPU 0 holds 30 GiB for alice's notebook at 0%, GPU 1 is bob's job at `used1` of 80 GiB. */
function poll(ms: number, used1 = 78 * G): Sample[] {
  const base = { ts: ms, host: 'gpu1', gpuTotalMiB: 80 * G };
  return [
    {
      ...base,
      gpu: 0,
      gpuUsedMiB: 30 * G,
      utilizationPct: 0,
      pid: 4242,
      processStart: ms - 3_600_000,
      user: 'alice',
      command: 'python -m ipykernel_launcher',
      processMiB: 30 * G,
    },
    {
      ...base,
      gpu: 1,
      gpuUsedMiB: used1,
      utilizationPct: 95,
      pid: 777,
      processStart: ms - 7_200_000,
      user: 'bob',
      command: 'torchrun train.py',
      processMiB: used1 - 500,
    },
  ];
}

/** A refusal's sentence in English (the words' parser returns it as a message the reply renders). */
const refusal = (w: ReturnType<typeof parseSilenceWords>) => ('error' in w ? english(w.error) : '');

describe('silence words', () => {
  it('reads HOST [GPU] DURATION (with or without add), list and cancel ID; refuses the rest in one sentence', () => {
    expect(parseSilenceWords(['gpu1', '0', '2h'])).toEqual({ action: 'add', host: 'gpu1', gpu: 0, durationMs: 2 * 3_600_000 });
    expect(parseSilenceWords(['add', 'gpu1', '30m'])).toEqual({ action: 'add', host: 'gpu1', gpu: null, durationMs: 30 * MIN });
    // Discord's order (the required DURATION before the optional GPU) reads the same.
    expect(parseSilenceWords(['add', 'gpu1', '2h', '3'])).toEqual({ action: 'add', host: 'gpu1', gpu: 3, durationMs: 2 * 3_600_000 });
    expect(parseSilenceWords(['list'])).toEqual({ action: 'list' });
    expect(parseSilenceWords(['cancel', '12'])).toEqual({ action: 'cancel', id: 12 });
    expect(parseSilenceDuration('90min')).toBe(90 * MIN);
    expect(parseSilenceDuration('1D')).toBe(24 * 60 * MIN);
    expect(refusal(parseSilenceWords(['gpu1', '8d']))).toContain('from 1 minute to a week');
    expect(refusal(parseSilenceWords(['gpu1', 'x', '2h']))).toContain('"x" is not a GPU index');
    expect(refusal(parseSilenceWords(['cancel', '99999999999']))).toContain('ID:');
    expect(refusal(parseSilenceWords(['<!channel>', '2h']))).toContain('a host name');
  });
});

describe('/gpu silence through Slack and Discord', () => {
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let bots: RunningBots | null = null;
  let runtime: WatchRuntime;
  let url: string;

  beforeAll(async () => {
    slack = await new FakeSlack().start();
    discord = await new FakeDiscord().start();
    const dataDir = mkdtempSync(join(tmpdir(), 'gd-silence-'));
    const config = parseConfig({
      data_dir: dataDir,
      admins: { slack: [ADMIN_SLACK] },
      watch: {
        enabled: true,
        alerts: { idle_held: { min_gib: 8, minutes: 10 }, card_full: { minutes: 10 } },
        digests: [
          { name: 'slack-watch', platform: 'slack', channel: 'CWATCH', cron: '0 9 * * *' },
          { name: 'discord-watch', platform: 'discord', channel: CHANNEL_ID, cron: '0 9 * * *' },
        ],
      },
    });
    runtime = new WatchRuntime(WatchStore.inDataDir(dataDir), undefined, undefined, config.watch);
    runtime.setOwners(new OwnerDirectory({ alice: { name: 'Alice Liddell', slack: ALICE_SLACK, discord: ALICE_DISCORD } }, null));
    runtime.setSilences(SilenceStore.inDataDir(dataDir));
    const services = { rules: await loadRuleBase(), hosts: fakeHosts(), watch: runtime };
    const app = {
      loaded: { config, file: null, baseDir: dataDir },
      audit: sqliteAudit(config, dataDir),
      services,
      registry: new CommandRegistry(allCommands()),
      async close() {},
    };
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
    url = `http://127.0.0.1:${bots!.slackPort}/slack/events`;
  });

  afterAll(async () => {
    await bots?.stop();
    runtime?.stop();
    await slack?.close();
    await discord?.close();
  });

  /** `/gpu TEXT` from a Slack user (a signed request); the answer that comes through the response_url. */
  async function onSlack(text: string, user: string): Promise<string> {
    const before = slack.calls.length;
    const body = new URLSearchParams({
      token: 'x',
      team_id: 'T1',
      team_domain: 'fake',
      channel_id: 'C1',
      channel_name: 'ml',
      user_id: user,
      user_name: 'u',
      command: '/gpu',
      text,
      api_app_id: 'A1',
      response_url: `${slack.base}/response/1`,
      trigger_id: '1.2.3',
    }).toString();
    const res = await postSignedSlack(url, SECRET, body);
    expect(res.status).toBe(200);
    // A quick answer comes in the ack itself; else the ack says it is working and the answer comes through the response_url.
    const raw = await res.text();
    const ack = raw.startsWith('{') ? (JSON.parse(raw) as { blocks?: unknown; text?: string }) : {};
    if ((ack.blocks || ack.text) && !String(ack.text).includes('Working on')) return unescapeSlack(JSON.stringify(ack.blocks ?? [])) + (ack.text ?? '');
    // An answer for the asker alone comes through the response_url; one for the channel is posted (or the progress message updated).
    const t0 = Date.now();
    for (;;) {
      const c = slack.calls
        .slice(before)
        .find((x) => x.method === 'response_url' || ((x.method === 'chat.postMessage' || x.method === 'chat.update') && x.body.channel === 'C1'));
      if (c) return unescapeSlack(JSON.stringify(c.body.blocks ?? [])) + String(c.body.text ?? '');
      if (Date.now() - t0 > 10_000) throw new Error(`no answer to ${text}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** A /gpu silence subcommand from a Discord user; the answer it got (the callback's, or the deferred one's edit). */
  async function onDiscord(id: string, sub: string, options: { name: string; type: number; value: unknown }[], userId: string): Promise<string> {
    discord.command(id, ['silence', sub], options, { userId });
    const [cb] = await discord.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
    if ((cb.body as { type: number }).type === 4) return JSON.stringify(cb.body);
    // The deferred answer: an edit of the original, or (an answer only the asker sees) a follow-up after deleting it.
    const answer = new RegExp(`/webhooks/\\d+/tok-${id}(/messages/(@|%40)original)?$`);
    const t0 = Date.now();
    for (;;) {
      const c = discord.calls.find((x) => answer.test(x.path) && (x.method === 'PATCH' || x.method === 'POST'));
      if (c) return JSON.stringify(c.body);
      if (Date.now() - t0 > 10_000) throw new Error(`no answer to interaction ${id}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const posted = (re: RegExp) =>
    slack.of('chat.postMessage').filter((c) => c.body.channel === 'CWATCH' && re.test(unescapeSlack(JSON.stringify(c.body.blocks)) + String(c.body.text)));
  const discordPosted = (re: RegExp) => discord.of(new RegExp(`^/channels/${CHANNEL_ID}/messages$`), 'POST').filter((c) => re.test(JSON.stringify(c.body)));
  const IDLE = /Idle GPU memory: gpu1 GPU 0/;
  const FULL = /GPU full: gpu1 GPU 1/;

  it('an owner silences her GPU (not bob’s), a silenced GPU gets no alert, the list names who and until when, a cancel by an admin lets it through once', async () => {
    const t0 = Date.now();
    let m = 0;
    const round = async (used1?: number) => {
      const now = t0 + m++ * MIN;
      runtime.observe(poll(now, used1));
      await runtime.thresholdAlerts(now);
    };
    await round();

    expect(await onSlack('silence gpu1 1 2h', 'UBOB00001')).toContain('Not yours to change');
    expect(await onSlack('silence gpu1 1 2h', ALICE_SLACK)).toContain('Only an admin, or the owner of a process');
    expect(await onSlack('silence gpu9 0 2h', ALICE_SLACK)).toContain('No host gpu9');
    expect(await onSlack('silence gpu1 0 2x', ALICE_SLACK)).toContain('DURATION: minutes, hours or days');
    expect(await onSlack('silence --help', ALICE_SLACK)).toContain('silence add HOST DURATION [GPU]');
    const added = await onSlack('silence gpu1 0 2h', ALICE_SLACK);
    expect(added).toMatch(/Silence #1: gpu1 GPU 0 until \d{4}-\d\d-\d\d \d\d:\d\d UTC/);

    for (let i = 0; i < 12; i++) await round();
    expect(posted(FULL)).toHaveLength(1);
    expect(discordPosted(/GPU full: gpu1 GPU 1/)).toHaveLength(1);
    expect(posted(IDLE)).toEqual([]);
    expect(discordPosted(/Idle GPU memory/)).toEqual([]);

    // The list, on Discord: what, until when, who set it.
    const list = await onDiscord('9101', 'list', [], ALICE_DISCORD);
    expect(list).toContain('1 silence in force');
    expect(list).toContain('gpu1 GPU 0');
    expect(list).toContain(`${ALICE_SLACK} (slack)`);
    expect(list).toMatch(/\d{4}-\d\d-\d\d \d\d:\d\d UTC/);
    // A Discord member who did not set it cannot cancel it; a Slack admin can.
    expect(await onDiscord('9102', 'cancel', [{ name: 'id', type: 3, value: '1' }], MEMBER_DISCORD)).toContain(
      'can be cancelled by an admin or by whoever set it',
    );
    expect(await onSlack('silence cancel 1', ADMIN_SLACK)).toContain('Silence #1 cancelled: gpu1 GPU 0');
    expect(await onSlack('silence cancel 1', ADMIN_SLACK)).toContain('No silence #1 in force');

    await round();
    await round();
    expect(posted(IDLE)).toHaveLength(1);
    expect(discordPosted(/Idle GPU memory/)).toHaveLength(1);

    // An admin silences the whole host for an hour.
    expect(await onSlack('silence gpu1 1h', ADMIN_SLACK)).toContain('gpu1 (every GPU) until');
    const [hostWide] = await runtime.silences!.list(t0 + m * MIN);
    expect(hostWide).toMatchObject({ host: 'gpu1', gpu: null, byUser: ADMIN_SLACK, byPlatform: 'slack' });
    // GPU 1 clears and fills again: a new episode, quiet while the host is silenced, posted once the silence has ended.
    await round(60 * G);
    while (t0 + m * MIN <= hostWide.untilMs) await round();
    expect(posted(FULL)).toHaveLength(1);
    await round();
    expect(posted(FULL)).toHaveLength(2);
    expect(discordPosted(/GPU full: gpu1 GPU 1/)).toHaveLength(2);
    expect(posted(IDLE)).toHaveLength(1);
  });
});
