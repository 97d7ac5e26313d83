// Issue 22: no command's audit row is written before its ack, on Slack (the real Bolt app in HTTP mode,
// signed slash commands, answers to the local fake Slack) and Discord (the real discord.js client against
// the local fake gateway), and every command is still audited, in order, refusals included. The audit
// store is the real SQLite one; the test's subclass notes, as each row is handed to it, whether that
// command's ack had left: Slack's HTTP response ended, Discord's interaction response written to the
// socket (undici's diagnostics channel). A row handed over later is written later still (the queue).
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { createSlackAdapter, type SlackAdapter } from '../../src/adapters/slack/app.js';
import type { AuditEntry } from '../../src/ops/audit.js';
import { AuditStore } from '../../src/storage/sqlite/audit.js';
import { FakeDiscord } from './fake-discord.js';
import { FakeSlack, postSignedSlack } from './fake-slack.js';
import { testDeps } from './helpers.js';

const SECRET = 'test-signing-secret-0123456789';

/** Slack's HTTP response to the slash command sent last (one at a time here). */
let slackResponse: ServerResponse | undefined;
/** Paths of the Discord requests whose headers undici wrote. */
const written: string[] = [];
/** Discord interaction ids by the asking user. */
const interactionOf = new Map<string, string>();
/** Per audit row handed to the store: its platform, user and whether that command's ack had left. */
const handed: { platform: string; user: string; ackLeft: boolean }[] = [];

class WitnessAudit extends AuditStore {
  override record(e: AuditEntry): void {
    const ackLeft =
      e.platform === 'slack' ? slackResponse?.writableEnded === true : written.some((p) => p.includes(`/interactions/${interactionOf.get(e.user)}/`));
    handed.push({ platform: e.platform, user: e.user, ackLeft });
    super.record(e);
  }
}

const onRequest = (m: unknown) => {
  const { request, response } = m as { request: IncomingMessage; response: ServerResponse };
  if (request.headers['x-test-slash']) slackResponse = response;
};
const onSendHeaders = (m: unknown) => written.push((m as { request: { path: string } }).request.path);

let slackFake: FakeSlack;
let discordFake: FakeDiscord;
let slack: SlackAdapter;
let discord: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let audit: WitnessAudit;
let url: string;

async function slash(text: string, user: string) {
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
    response_url: `${slackFake.base}/response/${text.length}`,
    trigger_id: `t${text.length}`,
  }).toString();
  const res = await postSignedSlack(url, SECRET, body, 'application/x-www-form-urlencoded', { 'x-test-slash': '1' });
  await res.text();
}

async function until(what: () => boolean, timeoutMs = 10_000): Promise<void> {
  const t0 = Date.now();
  while (!what()) {
    if (Date.now() - t0 > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  subscribe('http.server.request.start', onRequest);
  subscribe('undici:client:sendHeaders', onSendHeaders);
  slackFake = await new FakeSlack().start();
  discordFake = await new FakeDiscord().start();
  deps = await testDeps({ channels: { slack: ['C1'] } });
  deps.audit.close();
  audit = new WitnessAudit(join(deps.dataDir, 'audit-witness.sqlite'));
  deps = { ...deps, audit };
  slack = createSlackAdapter({
    ...deps,
    env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: `${slackFake.base}/api/`, port: 0 },
    pacer: new ChannelPacer(0),
  });
  await slack.start();
  url = `http://127.0.0.1:${slack.port()}/slack/events`;
  discord = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${discordFake.base}/api` }, pacer: new ChannelPacer(0) });
  await discord.start();
  await new Promise((r) => setTimeout(r, 200)); // the GUILD_CREATE after READY lands in the cache
  // The asker's language is known from here on (users.info answered): a command's answer can be its
  // ack, and nothing but the ack stands between them.
  await slash('help', 'USA1');
  await slackFake.waitFor('response_url');
  await until(() => handed.length === 1);
  handed.length = 0;
}, 30_000);

afterAll(async () => {
  unsubscribe('http.server.request.start', onRequest);
  unsubscribe('undici:client:sendHeaders', onSendHeaders);
  await slack?.stop();
  await discord?.stop();
  await slackFake?.close();
  await discordFake?.close();
  audit?.close();
});

it('Slack: help, a usage error, a refusal, an unknown command and status are audited in order, each after its ack', async () => {
  const typed = [
    ['help', 'help', 'ok'],
    ['status --bogus', 'status', 'usage'],
    ['hosts add gpu9 ml@10.0.0.9:22', 'hosts add', 'denied'],
    ['nosuch', 'nosuch', 'unknown'],
    ['status', 'status', 'ok'],
  ];
  for (const [text] of typed) {
    const before = handed.length;
    await slash(text, 'USA1');
    await until(() => handed.length > before);
  }
  const mine = handed.filter((h) => h.platform === 'slack');
  expect(mine).toEqual(typed.map(() => ({ platform: 'slack', user: 'USA1', ackLeft: true })));
  const rows = audit
    .recent(50)
    .filter((r) => r.platform === 'slack')
    .reverse();
  // The warm-up's help first, then the commands as typed.
  expect(rows.map((r) => r.outcome)).toEqual(['ok', ...typed.map(([, , outcome]) => outcome)]);
  rows.slice(1).forEach((r, k) => expect(r.command.startsWith(typed[k][1])).toBe(true));
});

it('Discord: help, a usage error, a refusal and status are audited in order, each after its response was written', async () => {
  const asked: [string, string, () => void, string][] = [
    ['601', '800000000000000061', () => discordFake.interaction('601', 'help', [], '800000000000000061'), 'ok'],
    [
      '602',
      '800000000000000062',
      () => discordFake.command('602', ['watch'], [{ name: 'host', type: 3, value: 'not a host!' }], { userId: '800000000000000062' }),
      'usage',
    ],
    [
      '603',
      '800000000000000063',
      () =>
        discordFake.command(
          '603',
          ['hosts', 'add'],
          [
            { name: 'name', type: 3, value: 'gpu9' },
            { name: 'target', type: 3, value: 'ml@10.0.0.9:22' },
          ],
          { userId: '800000000000000063' },
        ),
      'denied',
    ],
    ['604', '800000000000000064', () => discordFake.interaction('604', 'status', [{ name: 'host', type: 3, value: 'gpu1' }], '800000000000000064'), 'ok'],
  ];
  for (const [id, user, send] of asked) {
    interactionOf.set(user, id);
    send();
    await until(() => handed.some((h) => h.user === user));
  }
  const mine = handed.filter((h) => h.platform === 'discord');
  expect(mine).toEqual(asked.map(([, user]) => ({ platform: 'discord', user, ackLeft: true })));
  const rows = audit
    .recent(50)
    .filter((r) => r.platform === 'discord')
    .reverse();
  expect(rows.map((r) => [r.user, r.outcome])).toEqual(asked.map(([, user, , outcome]) => [user, outcome]));
});

it('the queue: rows are read back before their batch was written, a full queue drops and says so once, close keeps every row', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gpu-doctor-audit-queue-'));
  const problems: string[] = [];
  const file = join(dir, 'audit.sqlite');
  const store = new AuditStore(file, (e) => problems.push((e as Error).message), 3);
  const row = (k: number): AuditEntry => ({ ts: 1000 + k, platform: 'console', user: `u${k}`, channel: null, command: 'help', outcome: 'ok', ms: 1 });
  for (let k = 0; k < 5; k++) store.record(row(k));
  expect(
    store
      .recent(10)
      .map((r) => r.user)
      .reverse(),
  ).toEqual(['u0', 'u1', 'u2']);
  expect(problems).toEqual(['2 audit rows dropped: more than 3 waited to be written']);
  store.record(row(5));
  store.record(row(6));
  store.close();
  const again = new AuditStore(file);
  expect(
    again
      .recent(10)
      .map((r) => r.user)
      .reverse(),
  ).toEqual(['u0', 'u1', 'u2', 'u5', 'u6']);
  again.close();
  expect(problems).toHaveLength(1);
});
