// Progress of long commands in Discord: the real discord.js client against the local fake gateway and
// REST, over a 24-host fleet of real sshd (ssh-fleet.ts). `/gpu status` is deferred, its progress
// edited into the deferred reply (editReply) at most once a second, and the last edit is the full
// answer; when edits fail, the answer still comes, as a follow-up.
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';
import { FakeDiscord, type RestCall } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { FLEET_SIZE, startSshFleet, type SshFleet } from './ssh-fleet.js';

const PROGRESS = /Checking 24 hosts…|GPU status: \d+ of 24 hosts answered…/;
const FINAL = `GPU status: ${FLEET_SIZE}/${FLEET_SIZE} host(s) answered`;
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
      if (Date.now() - t0 > timeoutMs) throw new Error(`no answer within ${timeoutMs} ms; calls: ${mine().map((c) => `${c.method} ${c.path}`).join(', ')}`);
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
