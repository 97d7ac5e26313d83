// Progress of long commands in Slack: the real Bolt app (HTTP mode, signed requests) over a 24-host
// fleet of real sshd (ssh-fleet.ts), posting through the local fake Slack Web API. `/gpu status`
// posts its progress once, edits that message (chat.update, same ts) at most once a second, and ends
// with the full answer in it; a failed edit never loses the answer. A shared log file that takes a
// while to download gets a "reading" message in its thread that the diagnosis replaces.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { FakeSlack, type SlackCall, postSignedSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';
import { FLEET_SIZE, startSshFleet, type SshFleet } from './ssh-fleet.js';

const SECRET = 'test-signing-secret-0123456789';
const PROGRESS = /Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…/;
const FINAL = `GPU status: ${FLEET_SIZE}/${FLEET_SIZE} hosts answered`;
const said = (c: SlackCall) => unescapeSlack(`${c.body.text} ${JSON.stringify(c.body.blocks ?? [])}`);

describeWithSshd('Slack: progress of a long command', 'test/adapters/slack-progress.test.ts', () => {
  let fleet: SshFleet;
  let fake: FakeSlack;
  let adapter: SlackAdapter;
  let deps: Awaited<ReturnType<typeof testDeps>>;
  let url: string;

  async function slash(text: string, to = url) {
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
    const res = await postSignedSlack(to, SECRET, body);
    return (await res.json()) as { response_type: string; text: string };
  }

  /** The messages and edits of one command, once the answer (FINAL) is in one of them (sent with `by`). */
  async function untilAnswered(by = ['chat.postMessage', 'chat.update'], timeoutMs = 60_000): Promise<SlackCall[]> {
    const t0 = Date.now();
    const messages = () => fake.calls.filter((c) => c.method === 'chat.postMessage' || c.method === 'chat.update');
    while (!messages().some((c) => by.includes(c.method) && said(c).includes(FINAL))) {
      if (Date.now() - t0 > timeoutMs) throw new Error(`no answer within ${timeoutMs} ms; calls: ${fake.calls.map((c) => c.method).join(', ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return messages();
  }

  beforeAll(async () => {
    fleet = await startSshFleet();
    fake = await new FakeSlack().start();
    deps = await testDeps();
    deps.services.hosts = fleet.hosts;
    adapter = createSlackAdapter({
      ...deps,
      env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
      pacer: new ChannelPacer(0),
    });
    await adapter.start();
    url = `http://127.0.0.1:${adapter.port()}/slack/events`;
  }, 60_000);
  afterAll(async () => {
    await adapter?.stop();
    await fake?.close();
    deps?.audit.close();
    await fleet?.close();
  });
  beforeEach(() => {
    fake.calls.length = 0;
    fake.failing.clear();
  });

  it('/gpu status over 24 hosts: acked at once, progress posted then edited in place, at most once a second, ending with the full table', async () => {
    const t0 = performance.now();
    const ack = await slash('status');
    expect(ack.text).toMatch(/Working on `\/gpu status`/);
    const messages = await untilAnswered();
    const seconds = (performance.now() - t0) / 1000;
    // One message: posted with the first progress, every later change an edit of that same ts.
    const [first, ...edits] = messages;
    expect(first.method).toBe('chat.postMessage');
    expect(first.body.channel).toBe('C1');
    expect(said(first)).toMatch(PROGRESS);
    expect(messages.filter((c) => c.method === 'chat.postMessage')).toHaveLength(1);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.map((c) => c.method)).toEqual(edits.map(() => 'chat.update'));
    expect(messages.length).toBeLessThanOrEqual(Math.floor(seconds) + 2);
    // The answer is the last edit: the whole table, its hosts beyond one message's blocks in the attached file.
    const last = messages[messages.length - 1];
    expect(said(last)).toContain(FINAL);
    expect(said(last)).not.toMatch(PROGRESS);
    const uploads = await fake.waitFor('upload');
    const table = said(last) + uploads.map((u) => String(u.body.text)).join('\n');
    for (const name of fleet.names) expect(table).toContain(name);
  }, 90_000);

  it('the pacing holds back progress edits, never the answer: with an hour between updates, the answer comes once the hosts answered', async () => {
    // Progress from 300 ms (after the ack), then one update an hour: the answer must not wait for it
    // (this test then fails on its timeout).
    const paced = createSlackAdapter({
      ...deps,
      env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
      pacer: new ChannelPacer(0),
      progressPacing: { quietMs: 300, intervalMs: 3_600_000 },
    });
    await paced.start();
    try {
      const ack = await slash('status', `http://127.0.0.1:${paced.port()}/slack/events`);
      expect(ack.text).toMatch(/Working on `\/gpu status`/);
      const messages = await untilAnswered();
      // At most the one progress message; then the answer, in place of it (or posted, if none was shown).
      expect(messages.filter((c) => PROGRESS.test(said(c)))).toHaveLength(messages.length - 1);
      expect(messages.length).toBeLessThanOrEqual(2);
      expect(said(messages[messages.length - 1])).toContain(FINAL);
    } finally {
      await paced.stop();
    }
  }, 90_000);

  it('when the progress message cannot be edited, the answer is posted as a new message', async () => {
    fake.failing.set('chat.update', 'cant_update_message');
    await slash('status');
    // The edit carrying the answer is refused (the fake records it all the same); the answer is then posted.
    const messages = await untilAnswered(['chat.postMessage']);
    const posts = messages.filter((c) => c.method === 'chat.postMessage');
    expect(said(posts[0])).toMatch(PROGRESS);
    expect(said(posts[posts.length - 1])).toContain(FINAL);
    expect(posts).toHaveLength(2);
  }, 90_000);
});

describe('Slack: progress while a shared log file downloads', () => {
  let fake: FakeSlack;
  let adapter: SlackAdapter;
  let deps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    fake = await new FakeSlack().start();
    deps = await testDeps();
    adapter = createSlackAdapter({
      ...deps,
      env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
      pacer: new ChannelPacer(0),
    });
    await adapter.start();
  });
  afterAll(async () => {
    await adapter?.stop();
    await fake?.close();
    deps?.audit.close();
  });

  it('says it is reading the file in the thread, then edits that message into the diagnosis', async () => {
    const log = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url));
    fake.files.set('/files/train.log', log);
    fake.downloadDelayMs = 1500; // a large file on a slow link
    const body = JSON.stringify({
      token: 'x',
      team_id: 'T1',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: 'EvP1',
      event_time: Math.floor(Date.now() / 1000),
      event: {
        type: 'message',
        subtype: 'file_share',
        channel: 'C1',
        channel_type: 'channel',
        user: 'UUSER1',
        text: '',
        ts: '1700.9',
        files: [{ id: 'FP1', name: 'train.log', size: log.length, mimetype: 'text/plain', url_private: `${fake.base}/files/train.log` }],
      },
    });
    const res = await postSignedSlack(`http://127.0.0.1:${adapter.port()}/slack/events`, SECRET, body, 'application/json');
    expect(res.status).toBe(200);
    const [update] = await fake.waitFor('chat.update', 1, 30_000);
    const [post] = fake.of('chat.postMessage');
    expect(post.body.thread_ts).toBe('1700.9');
    expect(said(post)).toMatch(/Reading train\.log \(\d+ bytes\)…/);
    expect(update.body.ts).toBeTruthy();
    expect(said(update)).toContain('16 -> 8');
    expect(fake.of('chat.postMessage')).toHaveLength(1);
  }, 60_000);
});
