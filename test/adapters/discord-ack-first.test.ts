// Issue 22: Discord's ack (the interaction's deferral) is on the wire before a command's own work starts,
// as Slack's is (slack-ack-first.test.ts). The real discord.js client against the local fake gateway and
// REST. The hosts stand-in notes, when /gpu status asks it for hosts (the command's first work), whether
// the deferral's request had been written to the socket by then: undici's own diagnostics channel
// (`undici:client:sendHeaders`) says when a request's headers were written. The fake, in this process,
// cannot read anything while a command holds the thread, so "written" is what can be asked of it.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import type { HostsService } from '../../src/core/services.js';
import { FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';

let fake: FakeDiscord;
let adapter: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
/** Paths of the requests whose headers undici wrote, in order. */
const written: string[] = [];
/** For each status the hosts service was asked for: whether its interaction's deferral had been written by then. */
const deferralWrittenWhenAsked: boolean[] = [];
let current = '';

const onSendHeaders = (m: unknown) => {
  const { request } = m as { request: { path: string } };
  written.push(request.path);
};
const deferralWritten = (id: string) => written.some((p) => p.includes(`/interactions/${id}/tok-${id}/callback`));

async function until<T>(what: () => T | undefined, timeoutMs = 10_000): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = what();
    if (v !== undefined) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

beforeAll(async () => {
  subscribe('undici:client:sendHeaders', onSendHeaders);
  fake = await new FakeDiscord().start();
  deps = await testDeps();
  const inner = deps.services.hosts!;
  const hosts: HostsService = {
    ...inner,
    status: (names) => {
      deferralWrittenWhenAsked.push(deferralWritten(current));
      return inner.status(names);
    },
  };
  deps.services.hosts = hosts;
  adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0) });
  await adapter.start();
  await new Promise((r) => setTimeout(r, 200)); // the GUILD_CREATE after READY lands in the cache
}, 30_000);
afterAll(async () => {
  unsubscribe('undici:client:sendHeaders', onSendHeaders);
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
});

it('/gpu status asks for its hosts only once its deferral is written; the answer edits the deferred reply', async () => {
  for (const id of ['501', '502', '503']) {
    current = id;
    const asked = deferralWrittenWhenAsked.length;
    fake.interaction(id, 'status', [{ name: 'host', type: 3, value: 'gpu1' }]);
    const [edit] = await fake.waitFor(new RegExp(`/webhooks/\\d+/tok-${id}/messages/(@|%40)original`), 1, 10_000, 'PATCH');
    expect(JSON.stringify(edit.body.embeds)).toContain('gpu1');
    const [callback] = fake.calls.filter((c) => c.path.includes(`/interactions/${id}/tok-${id}/callback`));
    expect(callback.body.type).toBe(5); // deferred, then edited: one response, no follow-up
    expect(fake.calls.indexOf(callback)).toBeLessThan(fake.calls.indexOf(edit));
    await until(() => (deferralWrittenWhenAsked.length > asked ? true : undefined));
    expect(deferralWrittenWhenAsked.slice(asked)).toEqual([true]);
  }
});

it('a usage error and a quick command are still the response itself (no deferral, no hosts asked)', async () => {
  const asked = deferralWrittenWhenAsked.length;
  fake.command('511', ['watch'], [{ name: 'host', type: 3, value: 'not a host!' }]);
  fake.interaction('512', 'help');
  for (const id of ['511', '512']) {
    const [cb] = await fake.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
    expect(cb.body.type).toBe(4);
    expect(cb.body.data.flags & 64).toBe(64);
  }
  expect(deferralWrittenWhenAsked.length).toBe(asked);
});
