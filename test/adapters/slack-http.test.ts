// The real Bolt app in HTTP mode, fed correctly (and incorrectly) signed requests, posting through a
// local fake Slack Web API.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { FakeSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { unescapeSlack } from '../../src/adapters/slack/render.js';

const SECRET = 'test-signing-secret-0123456789';
const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');

let fake: FakeSlack;
let adapter: SlackAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let url: string;

function sign(body: string, ts = Math.floor(Date.now() / 1000), secret = SECRET) {
  const sig = 'v0=' + createHmac('sha256', secret).update(`v0:${ts}:${body}`).digest('hex');
  return { 'x-slack-signature': sig, 'x-slack-request-timestamp': String(ts) };
}

async function slash(text: string, user = 'UUSER1', headers?: Record<string, string>) {
  const body = new URLSearchParams({ token: 'x', team_id: 'T1', team_domain: 'fake', channel_id: 'C1', channel_name: 'ml', user_id: user, user_name: 'u', command: '/gpu', text, api_app_id: 'A1', response_url: `${fake.base}/response/1`, trigger_id: '1.2.3' }).toString();
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...(headers ?? sign(body)) }, body });
  const raw = await res.text();
  return { status: res.status, body: raw && raw.startsWith('{') ? JSON.parse(raw) : raw };
}

async function event(ev: Record<string, unknown>, headers?: Record<string, string>) {
  const body = JSON.stringify({ token: 'x', team_id: 'T1', api_app_id: 'A1', type: 'event_callback', event_id: `Ev${Math.random()}`, event_time: Math.floor(Date.now() / 1000), event: ev });
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(headers ?? sign(body)) }, body });
  return res.status;
}

const blocksText = (blocks: any[]) => unescapeSlack(JSON.stringify(blocks));

beforeAll(async () => {
  fake = await new FakeSlack().start();
  deps = await testDeps({ admins: { slack: ['UADMIN1'] }, hostsDelayMs: 1500 });
  adapter = createSlackAdapter({ ...deps, env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${fake.base}/api/`, port: 0 }, pacer: new ChannelPacer(0), maxFileBytes: 1024 * 1024 });
  await adapter.start();
  url = `http://127.0.0.1:${adapter.port()}/slack/events`;
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
});

describe('Slack HTTP mode', () => {
  beforeEach(async () => {
    await new Promise((r) => setTimeout(r, 300));
    fake.calls.length = 0;
  });

  it('answers /gpu help in the ack itself', async () => {
    const r = await slash('help');
    expect(r.status).toBe(200);
    expect(r.body.response_type).toBe('in_channel');
    expect(blocksText(r.body.blocks)).toContain('/gpu diagnose');
    expect(fake.of('chat.postMessage')).toHaveLength(0);
  });

  it('acks a slow command at once and posts the result after', async () => {
    const t0 = performance.now();
    const r = await slash('status gpu1');
    const ackMs = performance.now() - t0;
    expect(r.status).toBe(200);
    expect(r.body.text).toMatch(/Working on/);
    expect(ackMs).toBeLessThan(1000);
    const [post] = await fake.waitFor('chat.postMessage');
    expect(post.body.channel).toBe('C1');
    expect(post.auth).toBe('Bearer xoxb-test-token');
    fake.calls.length = 0;
  });

  it('refuses a non-admin hosts add and lets an admin through', async () => {
    const r = await slash('hosts add gpu9 ml@10.0.0.9:22');
    expect(r.body.text + blocksText(r.body.blocks ?? [])).toMatch(/admin/i);
    const denied = deps.audit.recent(1)[0];
    expect(denied).toMatchObject({ platform: 'slack', user: 'UUSER1', channel: 'C1', outcome: 'denied' });
    await slash('hosts add gpu9 ml@10.0.0.9:22', 'UADMIN1');
    await new Promise((r) => setTimeout(r, 200));
    expect(deps.audit.recent(5).some((a) => a.user === 'UADMIN1' && a.outcome !== 'denied')).toBe(true);
    fake.calls.length = 0;
  });

  it('answers unknown and empty commands clearly', async () => {
    const u = await slash('frobnicate');
    expect(u.body.text + blocksText(u.body.blocks)).toMatch(/Unknown command/);
    const e = await slash('');
    expect(blocksText(e.body.blocks)).toMatch(/gpu help/);
  });

  it('replies in a thread to a pasted OOM log with the concrete fix', async () => {
    expect(await event({ type: 'message', channel: 'C1', channel_type: 'channel', user: 'UUSER1', text: OOM.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'), ts: '1700000000.000100' })).toBe(200);
    const [post] = await fake.waitFor('chat.postMessage');
    expect(post.body.thread_ts).toBe('1700000000.000100');
    expect(post.body.channel).toBe('C1');
    expect(blocksText(post.body.blocks)).toContain('16 -> 8');
    expect(post.body.blocks.length).toBeLessThanOrEqual(50);
    fake.calls.length = 0;
  });

  it('ignores chatter, its own messages and other bots', async () => {
    await event({ type: 'message', channel: 'C1', channel_type: 'channel', user: 'UUSER1', text: 'lunch anyone?', ts: '1.1' });
    await event({ type: 'message', channel: 'C1', channel_type: 'channel', user: 'UBOT', bot_id: 'BBOT', text: OOM, ts: '1.2' });
    await event({ type: 'message', subtype: 'bot_message', channel: 'C1', bot_id: 'BOTHER', text: OOM, ts: '1.3' });
    await new Promise((r) => setTimeout(r, 500));
    expect(fake.of('chat.postMessage')).toHaveLength(0);
  });

  it('reads a shared .log file, and says when one is too large or binary', async () => {
    fake.files.set('/files/oom.log', Buffer.from(OOM));
    fake.files.set('/files/big.log', Buffer.concat([Buffer.from(OOM), Buffer.alloc(2 * 1024 * 1024, 'x\n')]));
    fake.files.set('/files/weights.txt', Buffer.from([0, 1, 2, 3, 0, 255, 0, 7]));
    const share = (name: string, size: number, ts: string) => event({ type: 'message', subtype: 'file_share', channel: 'C1', channel_type: 'channel', user: 'UUSER1', text: '', ts, files: [{ id: 'F' + ts, name, size, filetype: 'text', mimetype: 'text/plain', url_private: `${fake.base}/files/${name}` }] });
    await share('oom.log', OOM.length, '2.1');
    let [post] = await fake.waitFor('chat.postMessage');
    expect(fake.downloads.every((d) => d.auth === 'Bearer xoxb-test-token')).toBe(true);
    expect(blocksText(post.body.blocks)).toContain('16 -> 8');
    expect(blocksText(post.body.blocks)).toContain('Read oom.log');
    fake.calls.length = 0;
    await share('big.log', OOM.length + 2 * 1024 * 1024, '2.2');
    [post] = await fake.waitFor('chat.postMessage');
    expect(blocksText(post.body.blocks)).toMatch(/big\.log is 2\.\d MB, over the 1\.0 MB I read; I diagnosed its first 1\.0 MB/);
    expect(blocksText(post.body.blocks)).toContain('16 -> 8');
    fake.calls.length = 0;
    await share('weights.txt', 8, '2.3');
    [post] = await fake.waitFor('chat.postMessage');
    expect(blocksText(post.body.blocks)).toMatch(/not a text file/);
    fake.calls.length = 0;
  });

  it('rejects a bad signature and a stale timestamp with 401 and no side effect', async () => {
    const before = deps.audit.recent(1000).length;
    const body = new URLSearchParams({ command: '/gpu', text: 'hosts add x a@b:22', user_id: 'UADMIN1', channel_id: 'C1', team_id: 'T1' }).toString();
    const bad = await slash('hosts add x a@b:22', 'UADMIN1', sign(body, undefined, 'wrong-secret'));
    expect(bad.status).toBe(401);
    const stale = await event({ type: 'message', channel: 'C1', user: 'UUSER1', text: OOM, ts: '3.1' }, sign('{"x":1}', Math.floor(Date.now() / 1000) - 6 * 60));
    expect(stale).toBe(401);
    // A correctly signed but 6-minute-old replay of a real body.
    const replayBody = JSON.stringify({ type: 'event_callback', team_id: 'T1', event: { type: 'message', channel: 'C1', user: 'UUSER1', text: OOM, ts: '3.2' } });
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...sign(replayBody, Math.floor(Date.now() / 1000) - 6 * 60) }, body: replayBody });
    expect(res.status).toBe(401);
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.of('chat.postMessage')).toHaveLength(0);
    expect(deps.audit.recent(1000).length).toBe(before);
  });
});
