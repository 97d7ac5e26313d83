// What the bot logs at start (issue 13 §5): one line naming the mode it runs in and why, ISO times,
// pino-pretty lines when asked for a terminal; an unreachable Slack is one clear error at start, with no
// stream of retry warnings; a Discord gateway that never sends READY is an error, not a hang.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startChatAdapters } from '../../src/adapters/start.js';
import { parseConfig } from '../../src/config.js';
import { createLogger } from '../../src/ops/logger.js';
import type { App } from '../../src/app.js';
import { createDiscordAdapter } from '../../src/adapters/discord/app.js';
import { FakeDiscord } from './fake-discord.js';
import { FakeSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const ISO = /\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/;

/** A logger writing JSON lines (or pretty ones) into `lines`. */
function capture(pretty = false) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _e, done) {
      lines.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { lines, logger: createLogger({ level: 'info', destination, pretty }) };
}

const records = (lines: string[]) => lines.map((l) => JSON.parse(l) as { level: number; time: string; msg: string; mode?: string; why?: string });

async function app(): Promise<App & { close(): Promise<void> }> {
  const deps = await testDeps();
  const config = parseConfig({ data_dir: deps.dataDir });
  return {
    loaded: { config, file: null, baseDir: deps.dataDir },
    audit: sqliteAudit(config, deps.dataDir),
    services: deps.services,
    registry: deps.registry,
    async close() {
      deps.audit.close();
    },
  };
}

/** A port nothing listens on (a Slack that cannot be reached). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('start-up logging', () => {
  let fake: FakeSlack;
  let bot: Awaited<ReturnType<typeof app>>;
  beforeAll(async () => {
    fake = await new FakeSlack().start();
    bot = await app();
  });
  afterAll(async () => {
    await bot?.close();
    await fake?.close();
  });

  it('without chat tokens: one line saying the console chat runs, and why, with an ISO time', async () => {
    const { lines, logger } = capture();
    expect(await startChatAdapters(bot, {}, logger)).toBeNull();
    const [line, ...rest] = records(lines);
    expect(rest).toEqual([]);
    expect(line).toMatchObject({ level: 30, mode: 'console chat', why: 'neither SLACK_BOT_TOKEN nor DISCORD_TOKEN is set' });
    expect(line.msg).toBe('gpu-doctor runs as console chat: neither SLACK_BOT_TOKEN nor DISCORD_TOKEN is set');
    expect(line.time).toMatch(ISO);
  });

  it('Slack Socket Mode and HTTP mode each say so, naming the variables that chose them', async () => {
    const socket = capture();
    const s = await startChatAdapters(
      bot,
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_APP_TOKEN: 'xapp-1-test-token', SLACK_API_URL: `${fake.base}/api/` },
      socket.logger,
    );
    await s?.stop();
    const http = capture();
    const h = await startChatAdapters(
      bot,
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789', SLACK_API_URL: `${fake.base}/api/`, PORT: '0' },
      http.logger,
    );
    await h?.stop();
    const modeLine = (lines: string[]) => records(lines).filter((r) => r.msg.startsWith('gpu-doctor runs as'));
    expect(modeLine(socket.lines)).toHaveLength(1);
    expect(modeLine(socket.lines)[0]).toMatchObject({ mode: 'Slack Socket Mode', why: 'SLACK_BOT_TOKEN and SLACK_APP_TOKEN are set' });
    expect(modeLine(http.lines)).toHaveLength(1);
    expect(modeLine(http.lines)[0].mode).toMatch(/^Slack HTTP mode \(port 0, \/slack\/events\)$/);
    expect(modeLine(http.lines)[0].why).toBe('SLACK_BOT_TOKEN and SLACK_SIGNING_SECRET are set, SLACK_APP_TOKEN is not');
  });

  it('an unreachable Slack fails start-up with one clear error and no retry warnings (Socket and HTTP mode)', async () => {
    const port = await closedPort();
    for (const env of [
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_APP_TOKEN: 'xapp-1-test-token', SLACK_API_URL: `http://127.0.0.1:${port}/api/` },
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789', SLACK_API_URL: `http://127.0.0.1:${port}/api/`, PORT: '0' },
    ]) {
      const { lines, logger } = capture();
      await expect(startChatAdapters(bot, env, logger)).rejects.toThrow(
        new RegExp(`^cannot reach Slack at http://127\\.0\\.0\\.1:${port}/api/ \\(.*ECONNREFUSED\\): check the network`),
      );
      expect(records(lines).filter((r) => r.level >= 40)).toEqual([]);
    }
  });

  it('a token Slack refuses is named as such', async () => {
    fake.failing.set('auth.test', 'invalid_auth');
    try {
      const { logger } = capture();
      await expect(
        startChatAdapters(bot, { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_APP_TOKEN: 'xapp-1-test-token', SLACK_API_URL: `${fake.base}/api/` }, logger),
      ).rejects.toThrow(/^Slack refused SLACK_BOT_TOKEN \(invalid_auth\)/);
    } finally {
      fake.failing.clear();
    }
  });

  it('Discord says so too; a gateway that never sends READY fails start-up instead of hanging', async () => {
    const discord = await new FakeDiscord().start();
    try {
      const { lines, logger } = capture();
      const bots = await startChatAdapters(bot, { DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${discord.base}/api` }, logger);
      await bots?.stop();
      expect(records(lines).filter((r) => r.msg.startsWith('gpu-doctor runs as'))).toEqual([
        expect.objectContaining({ mode: 'Discord', why: 'DISCORD_TOKEN is set' }),
      ]);
      discord.withholdReady = true;
      const deps = await testDeps();
      const adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${discord.base}/api` }, readyTimeoutMs: 500 });
      await expect(adapter.start()).rejects.toThrow('Discord did not send READY within 0.5 s of login');
      deps.audit.close();
    } finally {
      await discord.close();
    }
  });

  it('on a terminal the lines are pino-pretty ones, with the ISO time', () => {
    const { lines, logger } = capture(true);
    logger.info({ mode: 'console chat' }, 'gpu-doctor runs as console chat');
    expect(lines).toHaveLength(1);
    // Colours, when the test runner's terminal has them.
    const plain = lines[0].replace(/\u001b\[[0-9;]*m/g, '');
    expect(plain).toMatch(new RegExp(`^\\[${ISO.source}\\] INFO: gpu-doctor runs as console chat \\{"mode":"console chat"\\}$`));
  });
});

describe('a bot that cannot start ends', () => {
  it('`gpu-doctor bot` against a Discord gateway that never sends READY prints one error and exits 1 (no hang on discord.js timers)', async () => {
    const discord = await new FakeDiscord().start();
    discord.withholdReady = true;
    try {
      const dir = mkdtempSync(join(tmpdir(), 'gd-noready-'));
      const child = spawn(process.execPath, [new URL('../../bin/gpu-doctor', import.meta.url).pathname, 'bot'], {
        env: {
          ...process.env,
          SLACK_BOT_TOKEN: '',
          DISCORD_TOKEN: 'fake.discord.token.0123456789',
          DISCORD_API_URL: `${discord.base}/api`,
          DISCORD_READY_TIMEOUT_MS: '500',
          HEALTH_PORT: '0',
        },
        // its data directory (./data by default) lands in a temporary folder, not the repository
        cwd: dir,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | string | null>((resolve) => {
        const t = setTimeout(() => {
          child.kill('SIGKILL');
          resolve('still running after 20 s');
        }, 20_000);
        child.on('exit', (c) => {
          clearTimeout(t);
          resolve(c);
        });
      });
      expect(code).toBe(1);
      expect(stderr).toContain('Discord did not send READY within 0.5 s of login');
    } finally {
      await discord.close();
    }
  }, 30_000);
});
