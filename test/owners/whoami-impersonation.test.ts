// Issue 22 item 9: Mallory claims `bob "Bob Builder"`; the admin's pending list once showed only
// "#1: Bob Builder (bob)", and after approval bob's owner messages went to Mallory. The list now names the
// claimant by platform account (a mention and the id, never the name they typed) and says how the claim
// compares with the config's owner of that unix user. Through the real discord.js client (fake REST +
// gateway), as the admin sees it.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { ChannelPacer } from '../../src/adapters/common.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { ClaimStore } from '../../src/storage/sqlite/claims.js';
import { FakeDiscord } from '../adapters/fake-discord.js';
import { testDeps } from '../adapters/helpers.js';

const ADMIN_ROLE = '700000000000000009';
const ADMIN = '800000000000000002';
const MALLORY = '800000000000000001'; // the fake gateway's default member
const CAROL = '800000000000000007';
let fake: FakeDiscord;
let adapter: DiscordAdapter;
let claims: ClaimStore;
let deps: Awaited<ReturnType<typeof testDeps>>;

beforeAll(async () => {
  fake = await new FakeDiscord().start();
  deps = await testDeps({ admins: { discord: [ADMIN_ROLE] } });
  claims = ClaimStore.inDataDir(deps.dataDir);
  // The config knows bob on Slack only, and carol by her Discord account.
  deps.services.owners = new OwnerDirectory({ bob: { name: 'Bob Builder', slack: 'UBOB00001' }, carol: { name: 'Carol', discord: CAROL } }, claims);
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

async function answerTo(id: string): Promise<{ embeds: { title: string; description?: string; color: number }[]; flags?: number }> {
  const [cb] = await fake.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
  if (cb.body.type === 4) return cb.body.data;
  const [edit] = await fake.waitFor(new RegExp(`/webhooks/\\d+/tok-${id}/messages/(@|%40)original`), 1, 10_000, 'PATCH');
  return edit.body;
}

it('the pending list names the claimant by account and says the claim does not match the config owner', async () => {
  fake.command(
    '911',
    ['whoami', 'claim'],
    [
      { name: 'unixuser', type: 3, value: 'bob' },
      { name: 'display-name', type: 3, value: 'Bob Builder' },
    ],
  );
  expect((await answerTo('911')).embeds[0].title).toMatch(/Claim #\d+: bob is me \(Bob Builder\)/);
  const [bob] = claims.pending();
  expect(bob).toMatchObject({ unixUser: 'bob', platform: 'discord', userId: MALLORY, name: 'Bob Builder' });
  // A claim for carol made before the config named her Discord account (written as the store keeps it).
  const carol = claims.addPending({ unixUser: 'carol', host: null, platform: 'discord', userId: MALLORY, name: 'Carol' }).claim;
  fake.command('912', ['whoami', 'claim'], [{ name: 'unixuser', type: 3, value: 'dave' }]);
  await answerTo('912');
  const dave = claims.pending().find((c) => c.unixUser === 'dave')!;

  fake.command('913', ['whoami', 'pending'], [], { userId: ADMIN, roles: [ADMIN_ROLE] });
  const list = await answerTo('913');
  expect(list.flags! & 64).toBe(64);
  const text = list.embeds[0].description!;
  // Discord writes the account as a mention (it shows the account's own name), and the id beside it.
  const who = `<@${MALLORY}> (discord id ${MALLORY})`;
  expect(text).toContain(
    `#${bob.id}: bob, asked by ${who}, who gave the name "Bob Builder" (not checked). ⚠ The config names Bob Builder (slack UBOB00001) as bob, with no discord account to compare: make sure it is the same person. The name given is theirs; the account is not shown to be.`,
  );
  expect(text).toContain(
    `#${carol.id}: carol, asked by ${who}, who gave the name "Carol" (not checked). ⚠ Not the owner in the config: there carol is <@${CAROL}> (discord ${CAROL}).`,
  );
  expect(text).toContain(`#${dave.id}: dave, asked by ${who}. No owner of dave in the config: make sure who this is before approving.`);
  // The table: the account and the verdict per claim.
  expect(text).toMatch(new RegExp(`${bob.id} +bob +discord +${MALLORY} +not checked`));
  expect(text).toMatch(new RegExp(`${carol.id} +carol +discord +${MALLORY} +differs`));
  expect(text).toMatch(new RegExp(`${dave.id} +dave +discord +${MALLORY} +none`));
  expect(list.embeds[0].color).toBe(0xf59e0b); // a warning: some claim does not match
});
