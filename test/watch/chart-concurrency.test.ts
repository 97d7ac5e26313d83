// A week-long chart does not hold up other users (issue 22, item 2): the real Bolt app in HTTP mode
// (signed requests, a local fake Slack Web API) with the leak watch's store holding a week of one host's
// 8 GPUs x 8 processes at one sample a minute (bench/synthetic-fleet.ts). `/gpu chart node0000 0 168`
// reads the store, runs the detector and draws; a `/gpu help` sent while it does so is answered before
// the chart is. Ordering only: what finished first, never how long anything took.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeSlack, postSignedSlack } from '../adapters/fake-slack.js';
import { testDeps } from '../adapters/helpers.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { syntheticFleet } from '../../bench/synthetic-fleet.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';

const SECRET = 'test-signing-secret-0123456789';
const WEEK_MIN = 7 * 24 * 60;

let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let url: string;

async function slash(text: string): Promise<{ status: number; body: any }> {
  const body = new URLSearchParams({
    token: 'x',
    team_id: 'T1',
    team_domain: 'fake',
    channel_id: 'C1',
    channel_name: 'ml',
    user_id: 'UUSER1',
    user_name: 'u',
    command: '/gpu',
    text,
    api_app_id: 'A1',
    response_url: `${fake.base}/response/1`,
    trigger_id: '1.2.3',
  }).toString();
  const res = await postSignedSlack(url, SECRET, body);
  const raw = await res.text();
  return { status: res.status, body: raw.startsWith('{') ? JSON.parse(raw) : raw };
}

beforeAll(async () => {
  fake = await new FakeSlack().start();
  deps = await testDeps({ channels: { slack: ['C1'] }, watch: true });
  const watch = deps.services.watch as WatchRuntime;
  // A week of polls, ending a minute ago, written through the store as the sampler writes them.
  const end = Date.now() - 60_000;
  const fleet = syntheticFleet({ hosts: 1, gpus: 8, procs: 8, t0: end - (WEEK_MIN - 1) * 60_000 });
  for (let m = 0; m < WEEK_MIN; m += 60) {
    const hour = [];
    for (let k = m; k < Math.min(m + 60, WEEK_MIN); k++) hour.push(...fleet.poll(k));
    await watch.store.insertPaced(hour);
  }
  adapter = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
    pacer: new ChannelPacer(0),
    maxFileBytes: 4 * 1024 * 1024,
  });
  await adapter.start();
  url = `http://127.0.0.1:${adapter.port()}/slack/events`;
}, 300_000);

afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
  (deps?.services.watch as WatchRuntime | undefined)?.stop();
});

describe('a week-long 8x8 chart in Slack', () => {
  it('answers another /gpu help before the chart is done, then posts the chart', async () => {
    const order: string[] = [];
    const watch = deps.services.watch as WatchRuntime;
    // Observed, not replaced: when the real chart's reply is ready.
    const chartHost = watch.chartHost.bind(watch);
    watch.chartHost = (req) => chartHost(req).finally(() => order.push('chart'));
    const ack = await slash('chart node0000 0 168');
    expect(ack.status).toBe(200);
    const help = await slash('help');
    order.push('help');
    expect(unescapeSlack(JSON.stringify(help.body.blocks))).toContain('/gpu chart');
    // The chart is still posted, with its PNG.
    const [post] = await fake.waitFor('chat.postMessage', 1, 240_000);
    expect(unescapeSlack(JSON.stringify(post.body))).toContain('Chart node0000 · GPU 0 (last 168 h)');
    await fake.waitFor('upload', 1, 30_000);
    expect(order).toEqual(['help', 'chart']);
  }, 300_000);
});
