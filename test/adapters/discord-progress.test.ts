// Progress of long commands in Discord: the real discord.js client against the local fake gateway and
// REST, over a 24-host fleet of real sshd (ssh-fleet.ts). `/gpu status` is deferred, its progress
// edited into the deferred reply (editReply) at most once a second, and the last edit is the full
// answer; when edits fail, the answer still comes, as a follow-up. An attached log file that takes a
// while to download gets a "reading" message in the thread, edited into the diagnosis.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { CHANNEL_ID, FakeDiscord, type RestCall } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { FLEET_SIZE, startSshFleet, type SshFleet } from './ssh-fleet.js';

const PROGRESS = /Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…/;
const FINAL = `GPU status: ${FLEET_SIZE}/${FLEET_SIZE} hosts answered`;
const said = (c: RestCall) => JSON.stringify(c.body?.embeds ?? []) + Object.values(c.fileData).join('\n');

describeWithSshd('Discord: progress of a long command', 'test/adapters/discord-progress.test.ts', () => {
  let fleet: SshFleet;
  let fake: FakeDiscord;
  let adapter: DiscordAdapter;
  let deps: Awaited<ReturnType<typeof testDeps>>;

  /** Every message call of interaction `id` (its callback, edits of the original, follow-ups) once one sent with `by` holds FINAL. */
  async function untilAnswered(id: string, by = ['PATCH', 'POST'], timeoutMs = 60_000): Promise<RestCall[]> {
    const mine = () => fake.calls.filter((c) => c.path.includes(`/tok-${id}`));
    const t0 = Date.now();
    while (!mine().some((c) => by.includes(c.method) && said(c).includes(FINAL))) {
      if (Date.now() - t0 > timeoutMs)
        throw new Error(
          `no answer within ${timeoutMs} ms; calls: ${mine()
            .map((c) => `${c.method} ${c.path}`)
            .join(', ')}`,
        );
      await new Promise((r) => setTimeout(r, 20));
    }
    return mine();
  }

  beforeAll(async () => {
    fleet = await startSshFleet();
    fake = await new FakeDiscord().start();
    deps = await testDeps();
    deps.services.hosts = fleet.hosts;
    adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0) });
    await adapter.start();
    await new Promise((r) => setTimeout(r, 200)); // the GUILD_CREATE after READY lands in the cache
  }, 60_000);
  afterAll(async () => {
    await adapter?.stop();
    await fake?.close();
    deps?.audit.close();
    await fleet?.close();
  });
  beforeEach(() => {
    fake.calls.length = 0;
    fake.failingEdits = false;
  });

  it('/gpu status over 24 hosts: deferred, progress edited in, at most once a second, the last edit the full table', async () => {
    const t0 = performance.now();
    fake.interaction('300', 'status');
    const calls = await untilAnswered('300');
    const seconds = (performance.now() - t0) / 1000;
    const [callback] = calls.filter((c) => c.path.endsWith('/callback'));
    expect(callback.body.type).toBe(5); // deferred: "gpu-doctor is thinking…"
    const edits = calls.filter((c) => c.method === 'PATCH' && /messages\/(@|%40)original$/.test(c.path));
    expect(edits.length).toBeGreaterThanOrEqual(2);
    expect(said(edits[0])).toMatch(PROGRESS);
    expect(edits.length).toBeLessThanOrEqual(Math.floor(seconds) + 2);
    const last = edits[edits.length - 1];
    expect(said(last)).toContain(FINAL);
    expect(said(last)).not.toMatch(PROGRESS);
    // The whole table: the hosts that do not fit in the embed are in its attached file.
    for (const name of fleet.names) expect(said(last)).toContain(name);
    expect(calls.filter((c) => c.method === 'POST' && !c.path.endsWith('/callback'))).toEqual([]);
  }, 90_000);

  it('the pacing holds back progress edits, never the answer: with an hour between updates, the answer comes once the hosts answered', async () => {
    // The first progress edit at once, every later one an hour apart: the answer must not wait for it
    // (this test then fails on its timeout). A gateway and client of its own, so only it answers.
    const ownFake = await new FakeDiscord().start();
    const paced = createDiscordAdapter({
      ...deps,
      env: { token: 'fake.discord.token', apiUrl: `${ownFake.base}/api` },
      pacer: new ChannelPacer(0),
      progressPacing: { quietMs: 0, intervalMs: 3_600_000 },
    });
    try {
      await paced.start();
      await new Promise((r) => setTimeout(r, 200));
      ownFake.interaction('302', 'status');
      const t0 = Date.now();
      const mine = () => ownFake.calls.filter((c) => c.path.includes('/tok-302'));
      while (!mine().some((c) => c.method === 'PATCH' && said(c).includes(FINAL))) {
        if (Date.now() - t0 > 60_000)
          throw new Error(
            `no answer; calls: ${mine()
              .map((c) => `${c.method} ${c.path}`)
              .join(', ')}`,
          );
        await new Promise((r) => setTimeout(r, 20));
      }
      const edits = mine().filter((c) => c.method === 'PATCH');
      // One progress edit (the next would be an hour later), then the answer.
      expect(edits).toHaveLength(2);
      expect(said(edits[0])).toMatch(PROGRESS);
      expect(said(edits[1])).toContain(FINAL);
    } finally {
      await paced.stop();
      await ownFake.close();
    }
  }, 90_000);

  it('when the deferred reply cannot be edited, the answer comes as a follow-up', async () => {
    fake.failingEdits = true;
    fake.interaction('301', 'status');
    // The refused edits are recorded by the fake all the same: wait for the follow-up.
    const calls = await untilAnswered('301', ['POST']);
    const followUps = calls.filter((c) => c.method === 'POST' && /\/webhooks\/\d+\/tok-301$/.test(c.path));
    expect(followUps).toHaveLength(1);
    expect(said(followUps[0])).toContain(FINAL);
  }, 90_000);
});

describe('Discord: progress while an attached log file downloads', () => {
  let fake: FakeDiscord;
  let adapter: DiscordAdapter;
  let deps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    fake = await new FakeDiscord().start();
    deps = await testDeps();
    adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0) });
    await adapter.start();
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(async () => {
    await adapter?.stop();
    await fake?.close();
    deps?.audit.close();
  });

  it('says it is reading the file in the thread, edits that message into the diagnosis and renames the thread for it', async () => {
    const log = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url));
    fake.files.set('/files/train.log', log);
    fake.downloadDelayMs = 1500; // a large file on a slow link
    fake.messageCreate('400', '', [
      {
        id: '557',
        filename: 'train.log',
        size: log.length,
        url: `${fake.base}/files/train.log`,
        proxy_url: `${fake.base}/files/train.log`,
        content_type: 'text/plain',
      },
    ]);
    // The thread is started on the message with the progress, which is then edited into the answer.
    const [started] = await fake.waitFor(new RegExp(`^/channels/${CHANNEL_ID}/messages/400/threads$`), 1, 30_000, 'POST');
    expect(started.body.name).toMatch(/^gpu-doctor: Reading train\.log \(\d+ bytes\)…$/);
    const [progress] = await fake.waitFor(/^\/channels\/400\/messages$/, 1, 30_000, 'POST');
    expect(said(progress)).toMatch(/Reading train\.log/);
    const [edit] = await fake.waitFor(/^\/channels\/400\/messages\/\d+$/, 1, 30_000, 'PATCH');
    expect(said(edit)).toContain('16 -> 8');
    const [renamed] = await fake.waitFor(/^\/channels\/400$/, 1, 30_000, 'PATCH');
    expect(renamed.body.name).toMatch(/^gpu-doctor: .*out of memory/i);
    expect(fake.of(/^\/channels\/400\/messages$/, 'POST')).toHaveLength(1);
  }, 60_000);
  it('a slow message.txt that turns out to be chatter: the "reading" message and its thread are removed, as no answer comes', async () => {
    fake.files.set('/files/message.txt', Buffer.from('anyone up for lunch? the usual place at noon\n'));
    fake.downloadDelayMs = 1500;
    fake.messageCreate('401', '', [
      {
        id: '558',
        filename: 'message.txt',
        size: 45,
        url: `${fake.base}/files/message.txt`,
        proxy_url: `${fake.base}/files/message.txt`,
        content_type: 'text/plain; charset=utf-8',
      },
    ]);
    const [progress] = await fake.waitFor(/^\/channels\/401\/messages$/, 1, 30_000, 'POST');
    expect(said(progress)).toMatch(/Reading message\.txt/);
    // The thread started for it goes too (its messages with it).
    await fake.waitFor(/^\/channels\/401$/, 1, 30_000, 'DELETE');
    expect(fake.threads.has('401')).toBe(false);
    expect(fake.of(/^\/channels\/401\/messages\/\d+$/, 'PATCH')).toEqual([]);
  }, 60_000);
});
