// The real discord.js Client against a local fake REST + gateway.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CONCURRENT_DOWNLOADS } from '../../src/adapters/common.js';
import { readFileSync } from 'node:fs';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const ADMIN_ROLE = '700000000000000009';

let fake: FakeDiscord;
let adapter: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
const embedText = (b: any) => JSON.stringify(b?.embeds ?? b?.data?.embeds ?? []);
// Every process warning while these tests run (discord.js deprecations among them).
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
process.on('warning', onWarning);

beforeAll(async () => {
  fake = await new FakeDiscord().start();
  deps = await testDeps({ admins: { discord: [ADMIN_ROLE] }, hostsDelayMs: 300 });
  adapter = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` }, pacer: new ChannelPacer(0), maxFileBytes: 1024 * 1024 });
  await adapter.start();
  // Let the GUILD_CREATE that follows READY land in the cache.
  await new Promise((r) => setTimeout(r, 200));
});
afterAll(async () => {
  await adapter?.stop();
  await fake?.close();
  deps?.audit.close();
  process.off('warning', onWarning);
});
beforeEach(async () => {
  await new Promise((r) => setTimeout(r, 100));
  fake.calls.length = 0;
});

describe('Discord adapter', () => {
  it('connects through GET /gateway/bot and IDENTIFY', () => {
    expect(fake.identified).toBe(1);
    expect(adapter.client.user?.id).toBe('900000000000000001');
  });

  it('answers /gpu help with an interaction callback', async () => {
    fake.interaction('100', 'help');
    const [cb] = await fake.waitFor(/\/interactions\/100\/tok-100\/callback/);
    expect(cb.body.type).toBe(4);
    expect(embedText(cb.body)).toContain('/gpu diagnose');
  });

  it('defers /gpu status and edits the original with the table', async () => {
    fake.interaction('101', 'status', [{ name: 'host', type: 3, value: 'gpu1' }]);
    const [cb] = await fake.waitFor(/\/interactions\/101\/tok-101\/callback/);
    expect(cb.body.type).toBe(5);
    const [edit] = await fake.waitFor(/\/webhooks\/900000000000000002\/tok-101\/messages\/(@|%40)original/);
    expect(embedText(edit.body)).toContain('gpu1');
  });

  it('refuses a non-admin hosts add; an admin role is let through', async () => {
    fake.interaction('102', 'hosts', [{ name: 'action', type: 3, value: 'add' }, { name: 'name', type: 3, value: 'gpu9' }, { name: 'target', type: 3, value: 'ml@10.0.0.9:22' }]);
    let [edit] = await fake.waitFor(/tok-102\/messages\/(@|%40)original/);
    expect(embedText(edit.body)).toMatch(/admin/i);
    expect(deps.audit.recent(1)[0]).toMatchObject({ platform: 'discord', outcome: 'denied' });
    fake.interaction('103', 'hosts', [{ name: 'action', type: 3, value: 'add' }, { name: 'name', type: 3, value: 'gpu9' }, { name: 'target', type: 3, value: 'ml@10.0.0.9:22' }], '800000000000000002', [ADMIN_ROLE]);
    [edit] = await fake.waitFor(/tok-103\/messages\/(@|%40)original/);
    expect(embedText(edit.body)).not.toMatch(/needs an admin/i);
  });

  it('diagnoses an attachment given to /gpu diagnose', async () => {
    fake.files.set('/files/train.log', Buffer.from(OOM));
    const att = { id: '555', filename: 'train.log', size: OOM.length, url: `${fake.base}/files/train.log`, proxy_url: `${fake.base}/files/train.log`, content_type: 'text/plain' };
    fake.interaction('104', 'diagnose', [{ name: 'file', type: 11, value: '555' }], undefined, [], { attachments: { '555': att } });
    const [cb] = await fake.waitFor(/\/interactions\/104\/tok-104\/callback/);
    expect(cb.body.type).toBe(5);
    const [edit] = await fake.waitFor(/tok-104\/messages\/(@|%40)original/);
    expect(embedText(edit.body)).toContain('16 -> 8');
    expect(embedText(edit.body)).toContain('Read train.log');
  });

  it('replies to a pasted OOM log with the concrete fix, and ignores chatter and bots', async () => {
    fake.messageCreate('200', 'anyone up for lunch?');
    fake.messageCreate('201', OOM, [], fake.user('800000000000000005'), true);
    fake.messageCreate('202', OOM);
    const [post] = await fake.waitFor(/\/channels\/900000000000000004\/messages$/);
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.of(/\/channels\/\d+\/messages$/)).toHaveLength(1);
    expect(post.body.message_reference.message_id).toBe('202');
    expect(embedText(post.body)).toContain('16 -> 8');
    expect(post.body.embeds[0].description.length).toBeLessThanOrEqual(4096);
  });

  // Issue 12, item 5: prose before the log, the log in a code block, or the log flattened onto one line
  // by the slash command's text option. The reply is the log's diagnosis either way.
  it('answers a paste with prose before a fenced log, and a log flattened into /gpu diagnose text', async () => {
    fake.messageCreate('210', `my run died last night, log below:\n\`\`\`\n${OOM}\n\`\`\`\nany idea?`);
    const [post] = await fake.waitFor(/\/channels\/900000000000000004\/messages$/);
    expect(post.body.message_reference.message_id).toBe('210');
    expect(embedText(post.body)).toContain('CUDA out of memory');
    expect(embedText(post.body)).toContain('16 -> 8');
    expect(embedText(post.body)).toContain('--batch-size 8');
    fake.interaction('105', 'diagnose', [{ name: 'text', type: 3, value: `help, training crashed: ${OOM.replace(/\n/g, ' ')}` }]);
    const [edit] = await fake.waitFor(/tok-105\/(messages\/(@|%40)original|callback)/);
    const answered = edit.body.type === 5 ? (await fake.waitFor(/tok-105\/messages\/(@|%40)original/))[0] : edit;
    const text = embedText(answered.body.data ?? answered.body);
    expect(text).toContain('CUDA out of memory');
    expect(text).toContain('16 -> 8');
    // a flattened paste cannot be told apart from its command line: no corrected command is offered
    expect(text).not.toContain('--batch-size 8');
  });

  it('reads a message.txt attachment, and says when one is too large', async () => {
    fake.files.set('/files/message.txt', Buffer.from(OOM));
    fake.messageCreate('203', '', [{ id: '556', filename: 'message.txt', size: OOM.length, url: `${fake.base}/files/message.txt`, proxy_url: `${fake.base}/files/message.txt`, content_type: 'text/plain; charset=utf-8' }]);
    let [post] = await fake.waitFor(/\/channels\/\d+\/messages$/);
    expect(embedText(post.body)).toContain('16 -> 8');
    fake.calls.length = 0;
    const big = Buffer.concat([Buffer.from(OOM), Buffer.alloc(20 * 1024 * 1024, 'x\n')]);
    fake.files.set('/files/big.log', big);
    fake.messageCreate('204', '', [{ id: '557', filename: 'big.log', size: big.length, url: `${fake.base}/files/big.log`, proxy_url: `${fake.base}/files/big.log`, content_type: 'text/plain' }]);
    [post] = await fake.waitFor(/\/channels\/\d+\/messages$/);
    expect(embedText(post.body)).toMatch(/big\.log is 20\.\d MB, over the 1\.0 MB I read/);
  });
});

describe('Discord: hostile input', () => {
  const BLANKS = '\n'.repeat(1024 * 1024);
  const SPACED = ' \n'.repeat(512 * 1024);
  const attachment = (id: string, name: string, size: number) => ({ id, filename: name, size, url: `${fake.base}/files/${name}`, proxy_url: `${fake.base}/files/${name}`, content_type: 'text/plain; charset=utf-8' });

  it('a 1 MB message of blank lines before a log, and such a message.txt, are answered at once', async () => {
    let t0 = performance.now();
    fake.messageCreate('400', BLANKS + OOM);
    let [post] = await fake.waitFor(/\/channels\/\d+\/messages$/, 1, 60_000);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(embedText(post.body)).toContain('16 -> 8');
    fake.calls.length = 0;
    const file = SPACED.slice(0, 512 * 1024) + OOM; // under the test adapter's 1 MB cap
    fake.files.set('/files/message.txt', Buffer.from(file));
    t0 = performance.now();
    fake.messageCreate('401', '', [attachment('560', 'message.txt', file.length)]);
    [post] = await fake.waitFor(/\/channels\/\d+\/messages$/, 1, 60_000);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(embedText(post.body)).toContain('16 -> 8');
  });

  it('never lets a reply mention anyone: allowed_mentions is empty on every message', async () => {
    fake.interaction('402', 'status', [{ name: 'host', type: 3, value: '@everyone' }]);
    fake.interaction('403', 'help');
    fake.messageCreate('404', `@everyone @here <@&${ADMIN_ROLE}>\n${OOM}`);
    await fake.waitFor(/tok-402\/messages\/(@|%40)original/);
    await fake.waitFor(/\/interactions\/403\/tok-403\/callback/);
    await fake.waitFor(/\/channels\/\d+\/messages$/);
    const sent = fake.calls.filter((c) => c.method !== 'GET' && c.body && typeof c.body === 'object');
    expect(sent.length).toBeGreaterThanOrEqual(3);
    for (const c of sent) {
      const body = c.body.data ?? c.body;
      if (c.body.type === 5) continue; // a deferral carries no message
      expect(body.allowed_mentions).toEqual({ parse: [], replied_user: false });
    }
  });

  it('caps concurrent downloads and files per message, and says what was skipped', async () => {
    fake.downloadDelayMs = 150;
    fake.maxActiveDownloads = 0;
    try {
      for (let f = 1; f <= 4; f++) fake.files.set(`/files/part${f}.log`, Buffer.from(OOM));
      const atts = [1, 2, 3, 4].map((f) => attachment(`57${f}`, `part${f}.log`, OOM.length));
      for (let m = 0; m < 8; m++) fake.messageCreate(`41${m}`, '', atts);
      const posts = await fake.waitFor(/\/channels\/\d+\/messages$/, 8, 30_000);
      expect(fake.maxActiveDownloads).toBeLessThanOrEqual(MAX_CONCURRENT_DOWNLOADS);
      for (const p of posts) {
        expect(embedText(p.body)).toMatch(/part4\.log.*not read.*3 files per message/);
        expect(embedText(p.body)).toContain('16 -> 8');
      }
    } finally {
      fake.downloadDelayMs = 0;
    }
  });
});

describe('Discord: direct messages with a channel allow-list', () => {
  let dmFake: FakeDiscord;
  let dmAdapter: DiscordAdapter;
  let dmDeps: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    dmFake = await new FakeDiscord().start();
    dmDeps = await testDeps({ channels: { discord: [CHANNEL_ID] } });
    dmAdapter = createDiscordAdapter({ ...dmDeps, env: { token: 'fake.discord.token', apiUrl: `${dmFake.base}/api` }, pacer: new ChannelPacer(0) });
    await dmAdapter.start();
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(async () => {
    await dmAdapter?.stop();
    await dmFake?.close();
    dmDeps?.audit.close();
  });

  it('refuses a DM paste and a DM command, saying why; the allowed channel is still answered', async () => {
    dmFake.dmMessageCreate('500', OOM);
    const [post] = await dmFake.waitFor(new RegExp(`/channels/${DM_CHANNEL_ID}/messages$`));
    const said = JSON.stringify(post.body);
    expect(said).toMatch(/direct messages.*channels\.allow_dms/);
    expect(said).not.toContain('16 -> 8');
    dmFake.dmInteraction('501', 'hosts', [{ name: 'action', type: 3, value: 'list' }]);
    const [cb] = await dmFake.waitFor(/\/interactions\/501\/tok-501\/callback/);
    expect(cb.body.data.flags & 64).toBe(64);
    expect(JSON.stringify(cb.body)).toMatch(/direct messages.*channels\.allow_dms/);
    expect(dmDeps.audit.recent(5)).toHaveLength(0);
    dmFake.messageCreate('502', OOM);
    const [inChannel] = await dmFake.waitFor(new RegExp(`/channels/${CHANNEL_ID}/messages$`));
    expect(embedText(inChannel.body)).toContain('16 -> 8');
  });
});

describe('Discord: warnings', () => {
  it('no deprecation warning was emitted (ephemeral replies use flags)', async () => {
    await new Promise((r) => setTimeout(r, 100));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
