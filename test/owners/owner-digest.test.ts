// Digests name people, not pids, where a mapping exists; a channel that opts in (dm_owners) also has each
// new or worse finding sent to its owner as a direct message with the chart and the fix: through the
// real Slack app (Bolt, fake Web API) and the real discord.js client (fake REST + gateway), wired by
// startChatAdapters as the bot does, over a real SQLite watch store holding a labelled creep trace.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { renderDiscord } from '../../src/adapters/discord/render.js';
import { renderSlack, unescapeSlack } from '../../src/adapters/slack/render.js';
import { renderText } from '../../src/adapters/console/render.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { parseConfig } from '../../src/config.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { allCommands } from '../../commands/index.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { ClaimStore } from '../../src/storage/sqlite/claims.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { scheduledDigest, type DigestConfig } from '../../src/watch/scheduler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import type { Sample } from '../../src/watch/types.js';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { FakeSlack } from '../adapters/fake-slack.js';
import { TRACES_PATH } from '../watch/generate-traces.js';
import { decodeTrace } from '../watch/generator.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const ALICE_SLACK = 'UALICE001';
const ALICE_DISCORD = '323456789012345678';
// The creep trace's process: alice's pid 4242 on GPU 0 of gpu-creep-50-seg20, growing 50 MiB/h.
const trace = (id = 'creep-50-seg20') =>
  readFileSync(TRACES_PATH, 'utf8')
    .trim()
    .split('\n')
    .map(decodeTrace)
    .find((x) => x.id === id)!;
const lastTs = (samples: Sample[]) => Math.max(...samples.map((s) => Date.parse(String(s.ts))));
const owners = (mapped = true) =>
  parseConfig({ owners: mapped ? { alice: { name: 'Alice Liddell', slack: ALICE_SLACK, discord: ALICE_DISCORD }, erin: { slack: 'UERIN0001' } } : {} }).owners;

describe('digests name people', () => {
  it('a digest over samples of a mapped unix user names the person: Slack, Discord and console renderings', async () => {
    const t = trace();
    const store = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-owner-digest-')));
    store.insert(t.samples);
    const rules = await loadRuleBase();
    const now = lastTs(t.samples);
    const digest = (name: string, mapped: boolean, link = false) =>
      scheduledDigest(store, { name, platform: 'slack', channel: 'C1', cron: '0 9 * * *', timezone: 'UTC' }, rules, {}, now, undefined, undefined, {
        owners: new OwnerDirectory(owners(mapped), null),
        link,
      });

    const unmapped = await digest('unmapped', false);
    expect(renderText(unmapped)).toContain('gpu-creep-50-seg20 · alice:');
    expect(renderText(unmapped)).not.toContain('Alice');

    const reply = await digest('mapped', true);
    const text = renderText(reply);
    expect(text).toContain('gpu-creep-50-seg20 · Alice Liddell (alice):');
    expect(text).toMatch(/GPU memory creep +0 +4242 +Alice Liddell \(alice\)/);
    // Slack: the name, no mention (a Slack mention would notify her; this channel did not opt in).
    const slack = renderSlack(reply);
    const blocks = unescapeSlack(JSON.stringify(slack.blocks));
    expect(blocks).toContain('*gpu-creep-50-seg20 · Alice Liddell (alice)*');
    expect(blocks).not.toContain('<@');
    // Discord: a mention in the heading (it shows her Discord name and never pings: the bot allows no
    // mentions), the plain name in the table's code block.
    const embed = renderDiscord(reply).embeds[0];
    expect(embed.description).toContain(`**gpu-creep-50-seg20 · <@${ALICE_DISCORD}> (alice)**`);
    expect(embed.description).toMatch(/4242 +\| +Alice Liddell \(alice\)|4242 +Alice Liddell \(alice\)/);

    // Where the channel opted in to owner messages, Slack writes her as a mention.
    const linked = await digest('linked', true, true);
    expect(JSON.stringify(renderSlack(linked).blocks)).toContain(`*gpu-creep-50-seg20 · <@${ALICE_SLACK}> (alice)*`);
    store.close();
  });

  it('text from a host cannot forge a mention: a token-shaped command line renders as nothing', async () => {
    const t = trace();
    const forged = t.samples.map((s) => ('pid' in s && s.pid !== undefined ? { ...s, command: 'python \uE000abcdef0\uE001 x', user: 'alice' } : s)) as Sample[];
    const store = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-owner-forge-')));
    store.insert(forged);
    const reply = await scheduledDigest(
      store,
      { name: 'f', platform: 'slack', channel: 'C1', cron: '0 9 * * *', timezone: 'UTC' },
      await loadRuleBase(),
      {},
      lastTs(forged),
      undefined,
      undefined,
      {
        owners: new OwnerDirectory(owners(), null),
        link: true,
      },
    );
    const slack = JSON.stringify(renderSlack(reply));
    expect(slack).toContain('python  x');
    expect(slack).not.toMatch(/[\uE000\uE001]/);
    expect(JSON.stringify(renderDiscord(reply))).not.toMatch(/[\uE000\uE001]/);
    store.close();
  });
});

describe('owner direct messages', () => {
  let bots: RunningBots | null = null;
  const closers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    await bots?.stop();
    bots = null;
    for (const c of closers.splice(0).reverse()) await c();
  });

  /** A leak watch over the trace, with owners from the config and the claims table, and the digests given. */
  async function bot(digests: DigestConfig[], env: Record<string, string>, traceId?: string) {
    const dir = mkdtempSync(join(tmpdir(), 'gd-owner-dm-'));
    const t = trace(traceId);
    const store = WatchStore.inDataDir(dir);
    store.insert(t.samples);
    const config = parseConfig({ data_dir: dir, owners: owners(), watch: { enabled: true, digests } });
    const rules = await loadRuleBase();
    const errors: unknown[] = [];
    const runtime = new WatchRuntime(store, undefined, rules, config.watch, (e) => errors.push(e));
    const claims = ClaimStore.inDataDir(dir);
    const directory = new OwnerDirectory(config.owners, claims);
    runtime.setOwners(directory);
    closers.push(
      () => runtime.stop(),
      () => claims.close(),
    );
    const services = { rules, watch: runtime, owners: directory };
    const app = {
      loaded: { config, file: null, baseDir: dir },
      audit: sqliteAudit(config, dir),
      services,
      registry: new CommandRegistry(allCommands()),
      async close() {},
    };
    bots = await startChatAdapters(app, env, silent);
    return { runtime, now: lastTs(t.samples), errors };
  }

  it('Slack: the owner of a new finding gets one DM with the chart and the fix, only from the digest that opted in', async () => {
    const slack = await new FakeSlack().start();
    closers.push(() => slack.close());
    const optIn: DigestConfig = { name: 'optin', platform: 'slack', channel: 'COPTIN', cron: '0 9 * * *', timezone: 'UTC', dm_owners: true };
    const plain: DigestConfig = { name: 'plain', platform: 'slack', channel: 'CPLAIN', cron: '0 9 * * *', timezone: 'UTC' };
    const { runtime, now, errors } = await bot([optIn, plain], {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789',
      SLACK_API_URL: `${slack.base}/api/`,
      PORT: '0',
    });

    expect(await runtime.scheduler.run(plain, now)).toBe(true);
    expect(await runtime.scheduler.run(optIn, now)).toBe(true);
    // Again later: nothing new or worse, so neither a finding in the channel nor a second DM.
    expect(await runtime.scheduler.run(optIn, now + 60_000)).toBe(true);
    expect(errors).toEqual([]);

    const posts = slack.of('chat.postMessage');
    const to = (channel: string) => posts.filter((c) => c.body.channel === channel);
    expect(to('CPLAIN')).toHaveLength(1);
    expect(to('COPTIN')).toHaveLength(2);
    const dms = to(ALICE_SLACK);
    expect(dms).toHaveLength(1);
    const dm = unescapeSlack(JSON.stringify(dms[0].body.blocks));
    expect(dms[0].body.text).toContain('Your process 4242 on gpu-creep-50-seg20 GPU 0 is growing GPU memory');
    expect(dm).toContain('Fix: ');
    expect(dm).toMatch(/loss\.item\(\)/);
    expect(dm).toContain('whose channel asked for owner messages');
    // The chart goes with it, into the DM's own channel (Slack answered the post to her user id with it).
    const uploads = slack.of('files.completeUploadExternal').map((c) => c.body.channel_id);
    expect(uploads.filter((c) => c === `D${ALICE_SLACK.slice(1)}`)).toHaveLength(1);
    // The opted-in digest names her with a mention; the other one with her name only.
    expect(unescapeSlack(JSON.stringify(to('COPTIN')[0].body.blocks))).toContain(`<@${ALICE_SLACK}> (alice)`);
    const plainText = unescapeSlack(JSON.stringify(to('CPLAIN')[0].body.blocks));
    expect(plainText).toContain('Alice Liddell (alice)');
    expect(plainText).not.toContain('<@');
  });

  it('Slack: idle held memory goes to its owner too, charted; the opted-in digest mentions her', async () => {
    const slack = await new FakeSlack().start();
    closers.push(() => slack.close());
    const optIn: DigestConfig = { name: 'optin', platform: 'slack', channel: 'COPTIN', cron: '0 9 * * *', timezone: 'UTC', dm_owners: true };
    const env = { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789', SLACK_API_URL: `${slack.base}/api/`, PORT: '0' };
    const { runtime, now, errors } = await bot([optIn], env, 'idle-notebook');
    expect(await runtime.scheduler.run(optIn, now)).toBe(true);
    expect(errors).toEqual([]);
    const dms = slack.of('chat.postMessage').filter((c) => c.body.channel === 'UERIN0001');
    expect(dms).toHaveLength(1);
    expect(dms[0].body.text).toContain('Your process 9900 on gpu-idle-notebook GPU 1 holds GPU memory while the GPU is idle');
    expect(unescapeSlack(JSON.stringify(dms[0].body.blocks))).toContain('Fix: ');
    expect(slack.of('files.completeUploadExternal').map((c) => c.body.channel_id)).toEqual(['DERIN0001']);
    expect(unescapeSlack(JSON.stringify(slack.of('chat.postMessage').find((c) => c.body.channel === 'COPTIN')!.body.blocks))).toContain('<@UERIN0001> (erin)');
  });

  it('Discord: the owner gets one DM (user.send) with the chart, no mention allowed; none from a digest that did not opt in', async () => {
    const fake = await new FakeDiscord().start();
    closers.push(() => fake.close());
    const optIn: DigestConfig = { name: 'optin', platform: 'discord', channel: CHANNEL_ID, cron: '0 9 * * *', timezone: 'UTC', dm_owners: true };
    const plain: DigestConfig = { name: 'plain', platform: 'discord', channel: CHANNEL_ID, cron: '0 9 * * *', timezone: 'UTC' };
    const { runtime, now, errors } = await bot([optIn, plain], { DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${fake.base}/api` });

    expect(await runtime.scheduler.run(plain, now)).toBe(true);
    const dmOpened = () => fake.calls.filter((c) => c.method === 'POST' && c.path === '/users/@me/channels');
    expect(dmOpened()).toHaveLength(0);
    expect(await runtime.scheduler.run(optIn, now)).toBe(true);
    expect(await runtime.scheduler.run(optIn, now + 60_000)).toBe(true);
    expect(errors).toEqual([]);

    expect(dmOpened().map((c) => (c.body as { recipient_id?: string }).recipient_id)).toEqual([ALICE_DISCORD]);
    const sent = fake.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${DM_CHANNEL_ID}/messages`);
    expect(sent).toHaveLength(1);
    const body = sent[0].body as { embeds: { title: string; description?: string; image?: { url: string } }[]; allowed_mentions?: unknown };
    expect(body.embeds[0].title).toContain('Your process 4242 on gpu-creep-50-seg20 GPU 0 is growing GPU memory');
    expect(body.embeds[0].description).toContain('Fix: ');
    expect(body.allowed_mentions).toMatchObject({ parse: [] });
    expect(sent[0].files.some((f) => f.endsWith('.png'))).toBe(true);
    expect(body.embeds[0].image?.url).toMatch(/^attachment:\/\/.+\.png$/);
    // The channel digests (three runs: the second opted-in one has nothing new) name her without pinging.
    const inChannel = fake.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${CHANNEL_ID}/messages`);
    expect(inChannel).toHaveLength(3);
    expect(JSON.stringify(inChannel[0].body)).toContain(`<@${ALICE_DISCORD}> (alice)`);
    for (const c of inChannel) expect((c.body as { allowed_mentions?: unknown }).allowed_mentions).toMatchObject({ parse: [] });
  });
});
