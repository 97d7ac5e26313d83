// The real discord.js Client against a local fake REST + gateway.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const ADMIN_ROLE = '700000000000000009';

let fake: FakeDiscord;
let adapter: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
const embedText = (b: any) => JSON.stringify(b?.embeds ?? b?.data?.embeds ?? []);

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
