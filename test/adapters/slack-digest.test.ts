// A scheduled leak digest reaches its Slack channel through the real Bolt client and the fake Web API,
// with the finding (owner, growth) and the fix from the knowledge base.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { DigestScheduler, type DigestConfig } from '../../src/watch/scheduler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { TRACES_PATH } from '../watch/generate-traces.js';
import { decodeTrace } from '../watch/generator.js';

let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;

beforeAll(async () => {
  fake = await new FakeSlack().start();
  deps = await testDeps();
  adapter = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', signingSecret: 'test-signing-secret-0123456789', apiUrl: `${fake.base}/api/`, port: 0 },
    pacer: new ChannelPacer(0),
  });
  await adapter.start();
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
});

describe('scheduled digest to Slack', () => {
  it('a digest missed while the bot was down is posted once to its channel', async () => {
    const trace = readFileSync(TRACES_PATH, 'utf8')
      .trim()
      .split('\n')
      .map(decodeTrace)
      .find((x) => x.id === 'creep-50-seg20')!;
    const store = WatchStore.inDataDir(mkdtempSync(join(tmpdir(), 'gd-digest-')));
    store.insert(trace.samples);
    const lastTs = Math.max(...trace.samples.map((s) => Date.parse(String(s.ts))));
    const digest: DigestConfig = { name: 'daily', platform: 'slack', channel: 'CDIGEST', cron: '0 9 * * *', timezone: 'UTC' };
    const post = (d: DigestConfig, reply: Parameters<SlackAdapter['postToChannel']>[1]) => adapter.postToChannel(d.channel, reply);
    const scheduler = new DigestScheduler(store, [digest], post, deps.services.rules);
    await scheduler.start(lastTs - 36 * 3600_000); // first start: remembers, posts nothing
    scheduler.stop();
    expect(await scheduler.start(lastTs)).toEqual(['daily']); // down over 09:00: posted once
    scheduler.stop();
    const [call] = await fake.waitFor('chat.postMessage');
    expect(call.body.channel).toBe('CDIGEST');
    const text = unescapeSlack(JSON.stringify(call.body.blocks));
    expect(text).toMatch(/MiB\/h/);
    // creep-50-seg20 is a steady creep: its first fix is the per-iteration one (.item(), loss = None).
    expect(text).toMatch(/loss\.item\(\)/);
    store.close();
  });
});
