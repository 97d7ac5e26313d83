// Issue 22: Slack's ack waits for none of a command's own work. The real Bolt app in HTTP mode, fed
// signed slash commands; the answers go to the local fake Slack. A command's checks (usage, refusals)
// still answer in the ack; the command itself (here /gpu status, whose hosts stand-in notes whether the
// ack had been written when the command asked for the hosts) runs only after the ack left.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import type { HostsService } from '../../src/core/services.js';
import { FakeSlack, postSignedSlack } from './fake-slack.js';
import { fakeHosts, testDeps } from './helpers.js';

const SECRET = 'test-signing-secret-0123456789';

let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let url: string;
/** The bot's HTTP responses to slash commands, by the request's trigger id. */
const responses = new Map<string, ServerResponse>();
/** For each status the hosts service was asked for: whether that request's ack had been written by then. */
const ackedWhenAsked: boolean[] = [];
let lastTrigger = '';

const onRequest = (m: unknown) => {
  const { request, response } = m as { request: IncomingMessage; response: ServerResponse };
  const trigger = request.headers['x-test-trigger'];
  if (typeof trigger === 'string') responses.set(trigger, response);
};

async function slash(text: string, user: string, trigger: string) {
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
    response_url: `${fake.base}/response/${trigger}`,
    trigger_id: trigger,
  }).toString();
  lastTrigger = trigger;
  const res = await postSignedSlack(url, SECRET, body, 'application/x-www-form-urlencoded', { 'x-test-trigger': trigger });
  const raw = await res.text();
  return raw.startsWith('{') ? (JSON.parse(raw) as { text?: string; blocks?: unknown[] }) : {};
}

beforeAll(async () => {
  subscribe('http.server.request.start', onRequest);
  fake = await new FakeSlack().start();
  deps = await testDeps({ channels: { slack: ['C1'] } });
  const hosts = fakeHosts();
  deps.services.hosts = {
    ...hosts,
    status: (names, onProgress) => {
      ackedWhenAsked.push(responses.get(lastTrigger)?.writableEnded === true);
      return hosts.status(names, onProgress);
    },
  } satisfies HostsService;
  adapter = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
    pacer: new ChannelPacer(0),
  });
  await adapter.start();
  url = `http://127.0.0.1:${adapter.port()}/slack/events`;
  // The asker's language is known from here on (users.info answered), so nothing else holds the command back.
  await slash('help', 'UACK1', 'warm');
  await fake.waitFor('response_url');
});

afterAll(async () => {
  unsubscribe('http.server.request.start', onRequest);
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
});

it('/gpu status runs after its ack left, and its answer follows', async () => {
  const ack = await slash('status', 'UACK1', 's1');
  expect(ack.text).toMatch(/status/);
  const [post] = await fake.waitFor('chat.postMessage');
  expect(unescapeSlack(JSON.stringify(post.body))).toContain('GPU status');
  expect(ackedWhenAsked).toEqual([true]);
});

it('a usage error found by the checks is still the ack itself', async () => {
  const ack = await slash('status --bogus', 'UACK1', 'u1');
  expect(unescapeSlack(JSON.stringify(ack))).toMatch(/Usage: \/gpu status/);
  expect(ackedWhenAsked).toHaveLength(1);
});

it('help known at once is still answered in the ack', async () => {
  const ack = await slash('help', 'UACK1', 'h1');
  expect(unescapeSlack(JSON.stringify(ack.blocks ?? []))).toContain('/gpu diagnose');
});
