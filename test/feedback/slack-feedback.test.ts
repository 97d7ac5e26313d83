// 👍 / 👎 on Slack: the real Bolt app in HTTP mode posts a diagnosis with two buttons, then receives
// signed block_actions requests (as Slack sends a button click) and stores the vote in real SQLite.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import Database from '../../src/storage/sqlite-driver.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { FakeSlack, slackSignature } from '../adapters/fake-slack.js';
import { testDeps } from '../adapters/helpers.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';

const SECRET = 'test-signing-secret-feedback-0123';
const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const escapeSlack = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let store: FeedbackStore;
let url: string;

const sign = (body: string) => slackSignature(SECRET, body);

async function post(body: string, type: string, headers?: Record<string, string>) {
  const t0 = performance.now();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': type, ...(headers ?? sign(body)) }, body });
  return { status: res.status, text: await res.text(), ms: performance.now() - t0 };
}

/** A button click as Slack sends it: block_actions, form-encoded `payload`, signed. */
function click(actionId: string, value: string, user = 'UUSER2', responsePath = '/response/fb') {
  const payload = {
    type: 'block_actions',
    team: { id: 'T1', domain: 'fake' },
    user: { id: user, username: 'u', name: 'u', team_id: 'T1' },
    api_app_id: 'A1',
    token: 'x',
    container: { type: 'message', message_ts: '1700000001.000200', channel_id: 'C1', is_ephemeral: false },
    trigger_id: '1.2.3',
    channel: { id: 'C1', name: 'ml' },
    message: { type: 'message', ts: '1700000001.000200', text: 'diagnosis', user: 'UBOT' },
    response_url: `${fake.base}${responsePath}`,
    actions: [
      {
        type: 'button',
        action_id: actionId,
        block_id: 'gpu_doctor_feedback',
        text: { type: 'plain_text', text: 'x' },
        value,
        action_ts: `${Date.now() / 1000}`,
      },
    ],
  };
  return post(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), 'application/x-www-form-urlencoded');
}

function votes() {
  const db = new Database(join(deps.dataDir, 'feedback.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT d.rule, v.vote FROM votes v JOIN diagnoses d ON d.id = v.diagnosis_id ORDER BY v.ts').all();
  } finally {
    db.close();
  }
}

async function responses(count: number) {
  return (await fake.waitFor('response_url', count)).map((c) => JSON.stringify(c.body));
}

beforeAll(async () => {
  fake = await new FakeSlack().start();
  deps = await testDeps({ admins: { slack: ['UADMIN1'] }, channels: { slack: ['C1'] } });
  store = FeedbackStore.inDataDir(deps.dataDir);
  deps.services.feedback = store;
  adapter = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 },
    pacer: new ChannelPacer(0),
  });
  await adapter.start();
  url = `http://127.0.0.1:${adapter.port()}/slack/events`;
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  store?.close();
  deps?.audit.close();
});
beforeEach(() => {
  fake.calls.length = 0;
});

describe('Slack 👍 / 👎', () => {
  let id = '';

  it('a pasted log gets its diagnosis with two buttons carrying an opaque id', async () => {
    const body = JSON.stringify({
      token: 'x',
      team_id: 'T1',
      api_app_id: 'A1',
      type: 'event_callback',
      event_id: 'EvFb1',
      event_time: Math.floor(Date.now() / 1000),
      event: { type: 'message', channel: 'C1', channel_type: 'channel', user: 'UUSER1', text: escapeSlack(OOM), ts: '1700000001.000100' },
    });
    expect((await post(body, 'application/json')).status).toBe(200);
    const [msg] = await fake.waitFor('chat.postMessage');
    const actions = (msg.body.blocks as any[]).find((b) => b.type === 'actions');
    expect(actions.elements.map((e: any) => e.action_id)).toEqual(['feedback_up', 'feedback_down']);
    expect(actions.elements[0].value).toBe(actions.elements[1].value);
    id = actions.elements[0].value;
    expect(id).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(msg.body.blocks.length).toBeLessThanOrEqual(50);
  });

  it('a signed click is acked at once, the vote is stored with the rule id, and the clicker alone is thanked', async () => {
    const r = await click('feedback_down', id);
    expect(r.status).toBe(200);
    expect(r.ms).toBeLessThan(3000);
    const [thanks] = await responses(1);
    expect(thanks).toContain('"response_type":"ephemeral"');
    expect(thanks).toContain('"replace_original":false');
    expect(thanks).toContain('Thanks for the feedback');
    expect(thanks).toContain('cuda-oom');
    expect(votes()).toEqual([{ rule: 'cuda-oom', vote: -1 }]);
    expect(deps.audit.recent(1)[0]).toMatchObject({ platform: 'slack', user: 'UUSER2', command: `feedback down ${id}`, outcome: 'ok' });
  });

  it('a second click by the same person changes the vote; another person adds one', async () => {
    await click('feedback_up', id);
    await click('feedback_up', id, 'UUSER3');
    const answers = await responses(2);
    expect(answers.some((a) => a.includes('changed from'))).toBe(true);
    expect(votes()).toEqual([
      { rule: 'cuda-oom', vote: 1 },
      { rule: 'cuda-oom', vote: 1 },
    ]);
  });

  it('a forged or unknown id is answered, and nothing is stored', async () => {
    const before = votes();
    await click('feedback_down', 'AAAAAAAAAAAAAAAA');
    await click('feedback_down', `${id}' OR '1'='1`);
    const answers = await responses(2);
    for (const a of answers) expect(a).toContain('Unknown diagnosis');
    expect(votes()).toEqual(before);
  });

  it('/gpu feedback (the list) is refused to a non-admin, privately and audited as denied; an admin sees it privately', async () => {
    const slash = (user: string) => {
      const body = new URLSearchParams({
        token: 'x',
        team_id: 'T1',
        team_domain: 'fake',
        channel_id: 'C1',
        channel_name: 'ml',
        user_id: user,
        user_name: 'u',
        command: '/gpu',
        text: 'feedback',
        api_app_id: 'A1',
        response_url: `${fake.base}/response/1`,
        trigger_id: '1.2.3',
      }).toString();
      return post(body, 'application/x-www-form-urlencoded');
    };
    // The answer: in the ack when it is there at once, else (a user's first command, while Slack is
    // asked for their language; the ack waits for nothing, it says "working on it") through the response_url.
    const answer = async (user: string) => {
      const before = fake.of('response_url').length;
      const acked = (await slash(user)).text;
      if (acked.includes('"blocks"')) return JSON.parse(acked);
      return (await fake.waitFor('response_url', before + 1))[before].body;
    };
    const refused = await answer('UUSER2');
    expect(refused.response_type).toBe('ephemeral');
    expect(JSON.stringify(refused.blocks)).toContain('needs an admin');
    expect(JSON.stringify(refused.blocks)).not.toContain('Votes per rule');
    expect(deps.audit.recent(1)[0]).toMatchObject({ user: 'UUSER2', command: 'feedback', outcome: 'denied' });
    const listed = await answer('UADMIN1');
    expect(listed.response_type).toBe('ephemeral');
    expect(JSON.stringify(listed.blocks)).toContain('Votes per rule');
    expect(JSON.stringify(listed.blocks)).toContain('cuda-oom');
  });

  it('a click with a bad signature is refused before it reaches the store', async () => {
    const before = votes();
    const body = new URLSearchParams({
      payload: JSON.stringify({ type: 'block_actions', user: { id: 'UEVIL' }, actions: [{ type: 'button', action_id: 'feedback_down', value: id }] }),
    }).toString();
    const r = await post(body, 'application/x-www-form-urlencoded', {
      'x-slack-signature': 'v0=' + '0'.repeat(64),
      'x-slack-request-timestamp': String(Math.floor(Date.now() / 1000)),
    });
    expect(r.status).toBe(401);
    await new Promise((res) => setTimeout(res, 200));
    expect(votes()).toEqual(before);
    expect(fake.of('response_url')).toHaveLength(0);
  });
});
