// The same Slack app in Socket Mode: a fake apps.connections.open + WebSocket server sends `hello`
// and envelopes; the test checks the ack frames and the posted reply.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { FakeSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
const frames: any[] = [];

beforeAll(async () => {
  fake = await new FakeSlack().start();
  fake.wss!.on('connection', (ws) => ws.on('message', (d: Buffer) => frames.push(JSON.parse(d.toString()))));
  deps = await testDeps();
  adapter = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', appToken: 'xapp-1-test-token', apiUrl: `${fake.base}/api/` },
    pacer: new ChannelPacer(0),
  });
  await adapter.start();
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
});

async function frameFor(id: string) {
  const t0 = Date.now();
  while (!frames.some((f) => f.envelope_id === id)) {
    if (Date.now() - t0 > 10000) throw new Error('no ack frame for ' + id);
    await new Promise((r) => setTimeout(r, 10));
  }
  return frames.find((f) => f.envelope_id === id);
}

describe('Slack Socket Mode', () => {
  it('opens the connection with the app token and acks a slash command with the reply', async () => {
    expect(adapter.mode).toBe('socket');
    expect(fake.of('apps.connections.open')[0].auth).toBe('Bearer xapp-1-test-token');
    fake.sockets[0].send(
      JSON.stringify({
        envelope_id: 'env-1',
        type: 'slash_commands',
        accepts_response_payload: true,
        payload: {
          team_id: 'T1',
          channel_id: 'C1',
          user_id: 'U1',
          command: '/gpu',
          text: 'help',
          response_url: `${fake.base}/response/1`,
          trigger_id: 't',
          api_app_id: 'A1',
        },
      }),
    );
    const ack = await frameFor('env-1');
    // U1's first command: acked at once while Slack is asked for U1's language, answered through the
    // response_url; the answer is in the ack itself when it is there at once.
    const answer = ack.payload?.blocks ? ack.payload : (await fake.waitFor('response_url'))[0].body;
    expect(answer.response_type).toBe('ephemeral'); // help is shown to the asker only
    expect(JSON.stringify(answer.blocks)).toContain('/gpu diagnose');
  });

  it('acks an events_api envelope and replies in a thread to a pasted log', async () => {
    fake.sockets[0].send(
      JSON.stringify({
        envelope_id: 'env-2',
        type: 'events_api',
        accepts_response_payload: false,
        payload: {
          team_id: 'T1',
          api_app_id: 'A1',
          type: 'event_callback',
          event_id: 'Ev1',
          event_time: 1,
          event: { type: 'message', channel: 'C1', channel_type: 'channel', user: 'U1', text: OOM, ts: '1700.1' },
        },
      }),
    );
    await frameFor('env-2');
    const [post] = await fake.waitFor('chat.postMessage');
    expect(post.body.thread_ts).toBe('1700.1');
    expect(unescapeSlack(JSON.stringify(post.body.blocks))).toContain('16 -> 8');
  });
});
