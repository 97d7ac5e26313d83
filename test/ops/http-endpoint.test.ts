// Where /healthz and /metrics listen (issue 13 §6): this machine only unless told otherwise; the Docker
// image says HEALTH_HOST=0.0.0.0 so they are reachable from outside the container. Through the bot's
// start-up (startChatAdapters, Slack HTTP mode against the local fake), reached over a non-loopback address.
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pino from 'pino';
import { FakeSlack } from '../adapters/fake-slack.js';
import { testDeps } from '../adapters/helpers.js';
import { ConfigError, httpEndpointOf, parseConfig } from '../../src/config.js';
import { parseEnv } from '../../src/adapters/index.js';
import { startChatAdapters } from '../../src/adapters/start.js';
import type { App } from '../../src/app.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const SECRET = 'test-signing-secret-0123456789';
const silent = pino({ level: 'silent' });
/** An address of this machine that is not loopback: a server bound to 127.0.0.1 is not reachable on it. */
const outside = Object.values(networkInterfaces())
  .flat()
  .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

async function reach(host: string, port: number, path: string): Promise<number | string> {
  try {
    const res = await fetch(`http://${host}:${port}${path}`, { signal: AbortSignal.timeout(5000) });
    await res.text();
    return res.status;
  } catch (e) {
    return String((e as Error & { cause?: { code?: string } }).cause?.code ?? e);
  }
}

describe('the /healthz and /metrics listen address', () => {
  it('config http.host/port win, then HEALTH_HOST/HEALTH_PORT; no port: no endpoint; no host: 127.0.0.1', () => {
    const none = parseConfig({});
    expect(httpEndpointOf(none, {})).toBeUndefined();
    expect(httpEndpointOf(none, { HEALTH_HOST: '0.0.0.0' })).toBeUndefined();
    expect(httpEndpointOf(none, { HEALTH_PORT: '9464' })).toEqual({ port: 9464, host: '127.0.0.1' });
    expect(httpEndpointOf(none, { HEALTH_PORT: '9464', HEALTH_HOST: '0.0.0.0' })).toEqual({ port: 9464, host: '0.0.0.0' });
    const pinned = parseConfig({ http: { port: 9100, host: '10.0.0.5' } });
    expect(httpEndpointOf(pinned, { HEALTH_PORT: '9464', HEALTH_HOST: '0.0.0.0' })).toEqual({ port: 9100, host: '10.0.0.5' });
  });

  it('a listen address that is not one is refused by name, in the config and in the environment', () => {
    expect(() => parseConfig({ http: { host: '0.0.0.0; rm -rf /' } })).toThrow(/http\.host: an address to listen on/);
    expect(() => parseConfig({ http: { hots: '0.0.0.0' } })).toThrow(/did you mean "host"/);
    expect(() => parseEnv({ HEALTH_HOST: 'two words' })).toThrow(ConfigError);
    expect(() => parseEnv({ HEALTH_HOST: 'two words' })).toThrow(/HEALTH_HOST: an address to listen on/);
    expect(parseEnv({ HEALTH_HOST: '::' }).HEALTH_HOST).toBe('::');
  });

  describe.skipIf(!outside)('through the bot start-up', () => {
    let slack: FakeSlack;
    beforeAll(async () => {
      slack = await new FakeSlack().start();
    });
    afterAll(async () => {
      await slack?.close();
    });

    async function started(env: Record<string, string>) {
      const deps = await testDeps();
      const app: App = {
        loaded: { config: parseConfig({ data_dir: deps.dataDir }), file: null, baseDir: deps.dataDir },
        audit: sqliteAudit(parseConfig({ data_dir: deps.dataDir }), deps.dataDir),
        services: deps.services,
        registry: deps.registry,
        async close() {
          deps.audit.close();
        },
      };
      const bots = await startChatAdapters(
        app,
        { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${slack.base}/api/`, PORT: '0', HEALTH_PORT: '0', ...env },
        silent,
      );
      return { bots: bots!, app };
    }

    it('by default only this machine reaches it', async () => {
      const { bots, app } = await started({});
      try {
        expect(await reach('127.0.0.1', bots.healthPort!, '/metrics')).toBe(200);
        expect(await reach(outside!, bots.healthPort!, '/metrics')).toBe('ECONNREFUSED');
      } finally {
        await bots.stop();
        await app.close();
      }
    });

    it('HEALTH_HOST=0.0.0.0 (the image) makes /healthz and /metrics reachable from another address', async () => {
      const { bots, app } = await started({ HEALTH_HOST: '0.0.0.0' });
      try {
        expect(await reach(outside!, bots.healthPort!, '/metrics')).toBe(200);
        expect([200, 503]).toContain(await reach(outside!, bots.healthPort!, '/healthz'));
        expect(await reach(outside!, bots.healthPort!, '/nothing')).toBe(404);
      } finally {
        await bots.stop();
        await app.close();
      }
    });
  });
});
