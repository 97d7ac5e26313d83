// /gpu whoami through the real discord.js client (fake REST + gateway): a claim from a member, an
// approve refused to them (privately) and done by an admin role, the approval naming the claimant with
// a Discord mention that cannot ping (no allowed mentions), and the mapping then in force.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { ClaimStore } from '../../src/storage/sqlite/claims.js';
import { FakeDiscord } from '../adapters/fake-discord.js';
import { testDeps } from '../adapters/helpers.js';

const ADMIN_ROLE = '700000000000000009';
const MEMBER = '800000000000000001';
let fake: FakeDiscord;
let adapter: DiscordAdapter;
let claims: ClaimStore;
let deps: Awaited<ReturnType<typeof testDeps>>;

beforeAll(async () => {
  fake = await new FakeDiscord().start();
  deps = await testDeps({ admins: { discord: [ADMIN_ROLE] } });
  claims = ClaimStore.inDataDir(deps.dataDir);
  deps.services.owners = new OwnerDirectory({}, claims);
  adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0) });
  await adapter.start();
  await new Promise((r) => setTimeout(r, 200));
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  claims?.close();
  deps?.audit.close();
});

/** The message an interaction was answered with: the callback's own (type 4), or the deferred one's edit. */
async function answerTo(id: string): Promise<{ body: any }> {
  const [cb] = await fake.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
  if (cb.body.type === 4) return { body: cb.body.data };
  const [edit] = await fake.waitFor(new RegExp(`/webhooks/\\d+/tok-${id}/messages/(@|%40)original`), 1, 10_000, 'PATCH');
  return { body: edit.body };
}
const text = (b: any) => JSON.stringify(b?.embeds ?? []);

it('claim -> a member cannot approve -> an admin role approves; the reply mentions the claimant without a ping', async () => {
  fake.command(
    '901',
    ['whoami', 'claim'],
    [
      { name: 'unixuser', type: 3, value: 'alice' },
      { name: 'display-name', type: 3, value: 'Alice Liddell' },
    ],
  );
  const claimed = await answerTo('901');
  expect(text(claimed.body)).toMatch(/Claim #(\d+): alice is me \(Alice Liddell\)/);
  const id = claims.pending()[0].id;
  expect(claims.pending()).toMatchObject([{ unixUser: 'alice', platform: 'discord', userId: MEMBER, name: 'Alice Liddell' }]);

  fake.command('902', ['whoami', 'approve'], [{ name: 'id', type: 3, value: String(id) }]);
  const refused = await answerTo('902');
  expect(text(refused.body)).toMatch(/needs an admin/i);
  expect(refused.body.flags & 64).toBe(64);
  expect(claims.pending()).toHaveLength(1);

  fake.command('903', ['whoami', 'approve'], [{ name: 'id', type: 3, value: String(id) }], { userId: '800000000000000002', roles: [ADMIN_ROLE] });
  const approved = await answerTo('903');
  expect(text(approved.body)).toContain(`<@${MEMBER}> (alice)`);
  expect(approved.body.allowed_mentions).toMatchObject({ parse: [] });
  expect(deps.services.owners!.lookup('gpu1', 'alice')).toEqual({ unixUser: 'alice', host: null, name: 'Alice Liddell', discord: MEMBER });

  fake.command('904', ['whoami', 'claim'], [{ name: 'unixuser', type: 3, value: 'Bad$User' }]);
  const bad = await answerTo('904');
  expect(text(bad.body)).toContain('is not a unix user name');
  expect(bad.body.flags & 64).toBe(64);
});
