// 👍 / 👎 on Discord: the real discord.js client against the local fake gateway answers a pasted log
// with a button row, and a button click (a component interaction) stores the vote in real SQLite.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import Database from '../../src/storage/sqlite-driver.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { CHANNEL_ID, FakeDiscord } from '../adapters/fake-discord.js';
import { testDeps } from '../adapters/helpers.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { FeedbackStore } from '../../src/storage/sqlite/feedback.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const ADMIN = '800000000000000077';

let fake: FakeDiscord;
let adapter: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
let store: FeedbackStore;

function votes() {
  const db = new Database(join(deps.dataDir, 'feedback.sqlite'), { readonly: true });
  try {
    return db.prepare('SELECT d.rule, v.vote FROM votes v JOIN diagnoses d ON d.id = v.diagnosis_id ORDER BY v.ts').all();
  } finally {
    db.close();
  }
}

/** The private answer to an interaction: its callback (type 4, flags 64). */
async function answer(id: string) {
  const [cb] = await fake.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
  return cb.body;
}

beforeAll(async () => {
  fake = await new FakeDiscord().start();
  deps = await testDeps({ admins: { discord: [ADMIN] } });
  store = FeedbackStore.inDataDir(deps.dataDir);
  deps.services.feedback = store;
  adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0) });
  await adapter.start();
  await new Promise((r) => setTimeout(r, 200));
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

describe('Discord 👍 / 👎', () => {
  let id = '';
  let thread = '';

  it('a pasted log gets its diagnosis with a row of two buttons', async () => {
    fake.messageCreate('600000000000000001', OOM);
    const [sent] = await fake.waitFor(/^\/channels\/\d+\/messages$/, 1, 15_000, 'POST');
    thread = /^\/channels\/(\d+)\//.exec(sent.path)![1];
    const row = sent.body.components[0];
    expect(row.type).toBe(1);
    const ids = row.components.map((b: any) => b.custom_id as string);
    expect(ids[0]).toMatch(/^fb:up:[A-Za-z0-9_-]{16}$/);
    id = ids[0].slice('fb:up:'.length);
    expect(ids).toEqual([`fb:up:${id}`, `fb:down:${id}`]);
  });

  it('a click stores the vote with the rule id and thanks the clicker privately (flags 64)', async () => {
    fake.button('700000000000000001', `fb:down:${id}`, { channelId: thread, userId: '800000000000000002' });
    const body = await answer('700000000000000001');
    expect(body.type).toBe(4);
    expect(body.data.flags & 64).toBe(64);
    expect(JSON.stringify(body.data.embeds)).toContain('Thanks for the feedback');
    expect(votes()).toEqual([{ rule: 'cuda-oom', vote: -1 }]);
    // The same person again changes their vote rather than adding one.
    fake.button('700000000000000002', `fb:up:${id}`, { channelId: thread, userId: '800000000000000002' });
    expect(JSON.stringify((await answer('700000000000000002')).data.embeds)).toContain('changed from');
    expect(votes()).toEqual([{ rule: 'cuda-oom', vote: 1 }]);
  });

  it('a forged custom_id is answered privately and stores nothing', async () => {
    const before = votes();
    fake.button('700000000000000003', 'fb:down:AAAAAAAAAAAAAAAA', { channelId: thread });
    fake.button('700000000000000004', `fb:down:${id} --days 3`, { channelId: CHANNEL_ID });
    for (const i of ['700000000000000003', '700000000000000004']) {
      const body = await answer(i);
      expect(body.data.flags & 64).toBe(64);
      expect(JSON.stringify(body.data.embeds)).toContain('Unknown diagnosis');
    }
    expect(votes()).toEqual(before);
  });

  it('/gpu feedback list is refused to others and shown to an admin', async () => {
    fake.command('700000000000000005', ['feedback', 'list']);
    const refused = await answer('700000000000000005');
    expect(refused.data.flags & 64).toBe(64);
    expect(JSON.stringify(refused.data.embeds)).toContain('needs an admin');
    expect(deps.audit.recent(1)[0]).toMatchObject({ platform: 'discord', command: 'feedback list', outcome: 'denied' });
    fake.command('700000000000000006', ['feedback', 'list'], [{ name: 'days', type: 4, value: 7 }], { userId: ADMIN });
    const body = await answer('700000000000000006');
    expect(body.data.flags & 64).toBe(64);
    expect(JSON.stringify(body.data.embeds)).toContain('cuda-oom');
  });
});
