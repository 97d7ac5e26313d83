// The bot as `gpu-doctor bot` starts it with both tokens set: startChatAdapters loads Slack first, then
// Discord, as in production (this file must not load discord.js before), the real Bolt app (HTTP mode)
// and the real discord.js client in one process against the local fakes, with /metrics on.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRequire } from 'node:module';
import pino from 'pino';
import { FakeSlack, postSignedSlack } from './fake-slack.js';
import { FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { parseConfig } from '../../src/config.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import type { App } from '../../src/app.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const SECRET = 'test-signing-secret-0123456789';
const DISCORD_TOKEN = 'fake.discord.token.0123456789';
// undici 7 (Bolt's, through @slack/socket-mode) installs its global dispatcher under this symbol (unless
// another undici claimed it first).
const UNDICI7_DISPATCHER = Symbol.for('undici.globalDispatcher.2');

async function appWith(hostCount: number): Promise<App & { deps: Awaited<ReturnType<typeof testDeps>> }> {
  const deps = await testDeps({ hostCount });
  const config = parseConfig({ data_dir: deps.dataDir, http: { port: 0 } });
  return {
    loaded: { config, file: null, baseDir: deps.dataDir },
    audit: sqliteAudit(config, deps.dataDir),
    services: deps.services,
    registry: deps.registry,
    deps,
    async close() {
      deps.audit.close();
    },
  };
}

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });

describe('Slack and Discord in one process', () => {
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let bots: RunningBots | null;
  let app: Awaited<ReturnType<typeof appWith>>;
  let slackUrl: string;

  beforeAll(async () => {
    slack = await new FakeSlack().start();
    discord = await new FakeDiscord().start();
    app = await appWith(30);
    bots = await startChatAdapters(
      app,
      {
        SLACK_BOT_TOKEN: 'xoxb-test-token',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: `${slack.base}/api/`,
        PORT: '0',
        DISCORD_TOKEN,
        DISCORD_API_URL: `${discord.base}/api`,
      },
      silent,
    );
    slackUrl = `http://127.0.0.1:${bots!.slackPort}/slack/events`;
    // On Node 22 the ESM import of node:http loads Node's own undici (for http.WebSocket), which claims the
    // global dispatcher before Bolt's undici 7 can. Put undici 7's Agent there anyway, so the Discord upload
    // below runs in the situation that broke it on every Node.
    if (!(globalThis as Record<symbol, unknown>)[UNDICI7_DISPATCHER]) {
      const boltRequire = createRequire(createRequire(import.meta.url).resolve('@slack/bolt'));
      const undici7 = boltRequire('undici') as { Agent: new () => object; setGlobalDispatcher(agent: object): void };
      expect((boltRequire('undici/package.json') as { version: string }).version).toMatch(/^7\./);
      undici7.setGlobalDispatcher(new undici7.Agent());
    }
    await new Promise((r) => setTimeout(r, 200)); // GUILD_CREATE into the cache
  });
  afterAll(async () => {
    await bots?.stop();
    await app?.close();
    await slack?.close();
    await discord?.close();
  });

  it('both adapters run; undici 7 (loaded with Bolt, first) owns the global dispatcher', () => {
    expect(bots!.adapters).toEqual(['slack (http)', 'discord']);
    // The situation that broke discord.js's uploads: its undici 6 would use this Agent.
    expect((globalThis as Record<symbol, unknown>)[UNDICI7_DISPATCHER]).toBeDefined();
    expect((globalThis as Record<symbol, unknown>)[Symbol.for('undici.globalDispatcher.1')]).toBe((globalThis as Record<symbol, unknown>)[UNDICI7_DISPATCHER]);
  });

  it('a Discord reply that carries a file (status over 30 hosts) reaches Discord with the file', async () => {
    discord.interaction('300', 'status');
    const [edit] = await discord.waitFor(/\/webhooks\/\d+\/tok-300\/messages\/(@|%40)original/, 1, 15_000);
    expect(edit.files).toEqual(['gpu-doctor-reply.txt']);
    expect(edit.fileData['gpu-doctor-reply.txt']).toContain('gpu30');
    expect(JSON.stringify(edit.body.embeds)).toContain('gpu-doctor-reply.txt');
  });

  it('/metrics keeps a fixed set of label values: 300 made-up commands add no series', async () => {
    const metricsUrl = `http://127.0.0.1:${bots!.healthPort}/metrics`;
    const slash = async (text: string) => {
      const body = new URLSearchParams({
        token: 'x',
        team_id: 'T1',
        channel_id: 'C1',
        channel_name: 'ml',
        user_id: 'UUSER1',
        command: '/gpu',
        text,
        api_app_id: 'A1',
        response_url: `${slack.base}/response/1`,
        trigger_id: '1',
      }).toString();
      const res = await postSignedSlack(slackUrl, SECRET, body);
      expect(res.status).toBe(200);
      await res.text();
    };
    // One of each real outcome first, so the baseline already holds the series they make.
    await slash('help');
    await slash('nosuchcommand');
    const before = await (await fetch(metricsUrl)).text();
    for (let i = 0; i < 300; i++) await slash(`madeup${i}x${'z'.repeat(i % 40)}`);
    const after = await (await fetch(metricsUrl)).text();
    expect(after).not.toMatch(/madeup\d/);
    expect(after).toMatch(/gpu_doctor_commands_total\{platform="slack",command="unknown",outcome="unknown"\} 301/);
    // Counters and histogram sums change digits; the series themselves stay (a slow machine may add a
    // few from the fixed sets, e.g. another latency bucket or outcome, never one per made-up name). Only the
    // bot's own series take a request's values; Node's default metrics (nodejs_*, process_*) gain label
    // values as the runtime does things (Node 24 adds heap spaces and GC kinds as they first occur).
    const series = (text: string) =>
      new Set(
        text
          .split('\n')
          .filter((l) => l.startsWith('gpu_doctor_'))
          .map((l) => l.slice(0, l.lastIndexOf(' '))),
      );
    const before_ = series(before);
    const added = [...series(after)].filter((k) => !before_.has(k));
    expect(added.length, added.join('\n')).toBeLessThan(10);
    expect(after.length - before.length).toBeLessThan(10_000);
  });
});
