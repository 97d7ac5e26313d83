// The notify message as a direct message on Discord (the real discord.js client against the fake REST
// API and gateway, wired by startChatAdapters as the bot does), and the rules of the one message: no
// check before anything can deliver it, and a send that fails is not retried into a second message.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { parseConfig } from '../../src/config.js';
import type { PostTarget } from '../../src/core/services.js';
import type { Reply } from '../../src/core/reply.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { SubscriptionStore } from '../../src/storage/sqlite/subscriptions.js';
import { DM_CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { testDeps } from '../adapters/helpers.js';
import { h200After, statusOf } from '../hosts/replay-readings.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const USER = '123456789012345678';
const G = 1024;
const want = { platform: 'discord', userId: USER, sizeMiB: 40 * G, size: '40G', count: 1, shared: false, hours: 12 };

describe('notify direct messages', () => {
  let fake: FakeDiscord | undefined;
  let bots: RunningBots | null = null;
  const closers: (() => void)[] = [];
  afterAll(async () => {
    await bots?.stop();
    await fake?.close();
    for (const c of closers) c();
  });

  it('Discord: the fit message goes to the user as a DM (user.send), once', async () => {
    fake = await new FakeDiscord().start();
    const deps = await testDeps({ watch: true });
    closers.push(() => deps.audit.close());
    const app = {
      loaded: { config: parseConfig({ data_dir: deps.dataDir }), file: null, baseDir: deps.dataDir },
      audit: sqliteAudit(parseConfig({ data_dir: deps.dataDir }), deps.dataDir),
      services: deps.services,
      registry: deps.registry,
      async close() {},
    };
    bots = await startChatAdapters(app, { DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${fake.base}/api` }, silent);
    const notify = (deps.services.watch as WatchRuntime).notify!;
    const sub = await notify.subscribe(want);
    expect(sub.ok).toBe(true);
    // The captured reading: every GPU held, nothing sent.
    expect(await notify.afterRound([statusOf('gpu1', h200After())])).toEqual({ notified: [], expired: [] });
    const freed = [statusOf('gpu1', h200After([4]))];
    expect((await notify.afterRound(freed)).notified).toHaveLength(1);
    expect((await notify.afterRound(freed)).notified).toHaveLength(0);
    const dmOpened = fake.calls.filter((c) => c.method === 'POST' && c.path === '/users/@me/channels');
    expect(dmOpened.map((c) => (c.body as { recipient_id?: string }).recipient_id)).toEqual([USER]);
    const sent = fake.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${DM_CHANNEL_ID}/messages`);
    expect(sent).toHaveLength(1);
    const body = sent[0].body as { embeds?: unknown; allowed_mentions?: unknown };
    const embed = JSON.stringify(body.embeds);
    expect(embed).toContain('fits now on gpu1 GPU 4');
    expect(embed).toContain('CUDA_VISIBLE_DEVICES=4 <your command>');
    // No one is mentioned by the bot's own messages.
    expect(body.allowed_mentions).toMatchObject({ parse: [] });
  });

  it('rounds before anything can deliver check nothing; the subscription waits for the first round that can', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-notify-'));
    const runtime = new WatchRuntime(WatchStore.inDataDir(dir), undefined, undefined, parseConfig({}).watch);
    runtime.setSubscriptions(SubscriptionStore.inDataDir(dir));
    closers.push(() => runtime.stop());
    const notify = runtime.notify!;
    await notify.subscribe(want);
    const freed = [statusOf('gpu1', h200After([2]))];
    expect(await notify.afterRound(freed)).toEqual({ notified: [], expired: [] });
    expect(await notify.list('discord', USER)).toHaveLength(1);
    const posted: [PostTarget, Reply][] = [];
    runtime.setPoster((t, r) => {
      posted.push([t, r]);
      return Promise.resolve();
    });
    expect((await notify.afterRound(freed)).notified).toHaveLength(1);
    expect(posted.map(([t]) => ({ ...t, name: /^notify #\d+$/.test(t.name) }))).toEqual([{ platform: 'discord', channel: USER, name: true, kind: 'dm' }]);
  });

  it('a send that fails is recorded and not retried: at most one message per subscription', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gd-notify-'));
    const store = SubscriptionStore.inDataDir(dir);
    const errors: unknown[] = [];
    const runtime = new WatchRuntime(WatchStore.inDataDir(dir), undefined, undefined, parseConfig({}).watch, (e) => errors.push(e));
    runtime.setSubscriptions(store);
    closers.push(() => runtime.stop());
    const notify = runtime.notify!;
    let calls = 0;
    runtime.setPoster(() => {
      calls++;
      return Promise.reject(new Error('Cannot send messages to this user'));
    });
    const sub = await notify.subscribe(want);
    const freed = [statusOf('gpu1', h200After([2]))];
    await notify.afterRound(freed);
    await notify.afterRound(freed);
    expect(calls).toBe(1);
    expect(errors).toHaveLength(1);
    expect(store.subscription(sub.ok ? sub.subscription.id : -1)).toMatchObject({
      state: 'notified',
      note: 'message not sent: Cannot send messages to this user',
    });
  });
});
