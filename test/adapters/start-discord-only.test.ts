// With only DISCORD_TOKEN set, startChatAdapters loads only the Discord adapter: @slack/bolt (and the
// undici 7 it brings, which takes over undici's process-global dispatcher) is never imported.
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { parseConfig } from '../../src/core/config.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';

const DISCORD_TOKEN = 'fake.discord.token.0123456789';
const UNDICI7_DISPATCHER = Symbol.for('undici.globalDispatcher.2');
const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });

describe('only the configured adapters are loaded', () => {
  let fake: FakeDiscord;
  let bots: RunningBots | null = null;
  let closeDeps = () => {};
  afterAll(async () => {
    await bots?.stop();
    await fake?.close();
    closeDeps();
  });

  it('with only DISCORD_TOKEN set, Bolt (and its undici 7) is never loaded', async () => {
    fake = await new FakeDiscord().start();
    const deps = await testDeps();
    closeDeps = () => deps.audit.close();
    const app = {
      loaded: { config: parseConfig({ data_dir: deps.dataDir }), file: null, baseDir: deps.dataDir },
      services: deps.services,
      registry: deps.registry,
      async close() {},
    };
    bots = await startChatAdapters(app, { DISCORD_TOKEN, DISCORD_API_URL: `${fake.base}/api` }, silent);
    expect(bots?.adapters).toEqual(['discord']);
    expect((globalThis as Record<symbol, unknown>)[UNDICI7_DISPATCHER]).toBeUndefined();
  });
});
