// With only DISCORD_TOKEN set, startChatAdapters loads only the Discord adapter: @slack/bolt (and the
// undici 7 it brings, which takes over undici's process-global dispatcher) is never imported.
// Checked in Node's CommonJS module cache (Bolt, its undici and discord.js are CommonJS), not through the
// global dispatcher symbol: Node 24's own fetch (its bundled undici 7) sets that symbol too.
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { parseConfig } from '../../src/config.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const DISCORD_TOKEN = 'fake.discord.token.0123456789';
/** Files Node has loaded as CommonJS modules in this process. */
const loadedModules = () => Object.keys(createRequire(import.meta.url).cache);
const BOLT = `${sep}node_modules${sep}@slack${sep}bolt${sep}`;
const DISCORD_JS = `${sep}node_modules${sep}discord.js${sep}`;
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
      audit: sqliteAudit(parseConfig({ data_dir: deps.dataDir }), deps.dataDir),
      services: deps.services,
      registry: deps.registry,
      async close() {},
    };
    bots = await startChatAdapters(app, { DISCORD_TOKEN, DISCORD_API_URL: `${fake.base}/api` }, silent);
    expect(bots?.adapters).toEqual(['discord']);
    // The cache does see what the adapters import: discord.js is in it.
    expect(loadedModules().some((f) => f.includes(DISCORD_JS))).toBe(true);
    expect(loadedModules().filter((f) => f.includes(BOLT))).toEqual([]);
  });
});
