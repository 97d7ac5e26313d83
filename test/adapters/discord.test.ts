// The real discord.js Client against a local fake REST + gateway.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { MAX_CONCURRENT_DOWNLOADS } from '../../src/adapters/common.js';
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { Resvg } from '@resvg/resvg-js';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from './fake-discord.js';
import { testDeps } from './helpers.js';
import { createDiscordAdapter, type DiscordAdapter } from '../../src/adapters/discord/app.js';
import { ChannelPacer } from '../../src/adapters/common.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { defineCommand } from '../../src/core/command.js';
import type { HostsService } from '../../src/core/services.js';

const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const ADMIN_ROLE = '700000000000000009';

let fake: FakeDiscord;
let adapter: DiscordAdapter;
let deps: Awaited<ReturnType<typeof testDeps>>;
const embedText = (b: any) => JSON.stringify(b?.embeds ?? b?.data?.embeds ?? []);
const FINGERPRINT = 'SHA256:' + 'A'.repeat(42) + 'Q';
/** Host names the registry lists in these tests: more than Discord's 25 choices. */
const HOST_NAMES = ['gpu1', 'gpu2', 'gpu10', 'a100-1', ...Array.from({ length: 26 }, (_, i) => `node${String(i + 1).padStart(2, '0')}`)];
/** Every call the commands made on the hosts service, with its arguments, in order. */
const hostCalls: { method: string; args: unknown[] }[] = [];

/** Records what the commands ask of the hosts service; `hosts test broken` fails after 300 ms. */
function recordingHosts(inner: HostsService): HostsService {
  const record = (method: string, args: unknown[]) => hostCalls.push({ method, args });
  return {
    // All hosts (no names) are 60 here: a table longer than one message.
    status: (names) => (record('status', [names]), inner.status(names.length ? names : Array.from({ length: 60 }, (_, i) => `h${i + 1}`))),
    mem: (names) => (record('mem', [names]), inner.mem(names)),
    list: async () => (record('list', []), HOST_NAMES.map((name) => ({ name, target: `ml@${name}:22`, origin: 'config' as const }))),
    add: (r) => (record('add', [r]), inner.add(r)),
    remove: (n) => (record('remove', [n]), inner.remove(n)),
    test: async (n) => {
      record('test', [n]);
      if (n !== 'broken') return inner.test(n);
      await new Promise((r) => setTimeout(r, 300));
      throw new Error('connect ECONNREFUSED 10.0.0.66:22');
    },
    trust: (n, f) => (record('trust', f === undefined ? [n] : [n, f]), inner.trust(n, f)),
  };
}

/** The message an interaction was answered with: the callback's own (type 4), or the deferred one's edit. */
async function answerTo(id: string, f = fake): Promise<{ body: any; files: string[]; fileData: Record<string, string>; deferred: boolean }> {
  const [cb] = await f.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
  if (cb.body.type === 4) return { body: cb.body.data, files: cb.files, fileData: cb.fileData, deferred: false };
  expect(cb.body.type).toBe(5);
  const [edit] = await f.waitFor(new RegExp(`/webhooks/\\d+/tok-${id}/messages/(@|%40)original`), 1, 10_000, 'PATCH');
  return { body: edit.body, files: edit.files, fileData: edit.fileData, deferred: true };
}
// Every process warning while these tests run (discord.js deprecations among them).
const warnings: Error[] = [];
const onWarning = (w: Error) => warnings.push(w);
process.on('warning', onWarning);

beforeAll(async () => {
  fake = await new FakeDiscord().start();
  deps = await testDeps({ admins: { discord: [ADMIN_ROLE] }, hostsDelayMs: 300, watch: true });
  deps.services.hosts = recordingHosts(deps.services.hosts!);
  adapter = createDiscordAdapter({
    ...deps,
    env: { token: 'fake.discord.token', apiUrl: `${fake.base}/api` },
    pacer: new ChannelPacer(0),
    maxFileBytes: 1024 * 1024,
  });
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
  hostCalls.length = 0;
});

describe('Discord adapter', () => {
  it('connects through GET /gateway/bot and IDENTIFY', () => {
    expect(fake.identified).toBe(1);
    expect(adapter.client.user?.id).toBe('900000000000000001');
  });

  it('answers in Chinese an interaction whose locale is zh-CN (zh-TW too), in English one in en-US', async () => {
    fake.interaction('190', 'help', [], undefined, [], undefined, 'zh-CN');
    const [cb] = await fake.waitFor(/\/interactions\/190\/tok-190\/callback/);
    expect(embedText(cb.body)).toContain('贴上训练日志或报错堆栈');
    expect(embedText(cb.body)).toContain('/gpu diagnose');
    expect(embedText(cb.body)).not.toContain('Paste a training log');
    fake.interaction('191', 'watch', [{ name: 'host', type: 3, value: 'bad!name' }], undefined, [], undefined, 'zh-TW');
    const [usage] = await fake.waitFor(/\/interactions\/191\/tok-191\/callback/);
    expect(embedText(usage.body)).toContain('用法：/gpu watch HOST');
    fake.interaction('192', 'help', [], undefined, [], undefined, 'en-US');
    const [en] = await fake.waitFor(/\/interactions\/192\/tok-192\/callback/);
    expect(embedText(en.body)).toContain('Paste a training log');
  });

  it('answers /gpu help with an interaction callback, to the asker only (flags 64)', async () => {
    fake.interaction('100', 'help');
    const [cb] = await fake.waitFor(/\/interactions\/100\/tok-100\/callback/);
    expect(cb.body.type).toBe(4);
    expect(cb.body.data.flags & 64).toBe(64);
    expect(embedText(cb.body)).toContain('/gpu diagnose');
  });

  it('defers /gpu status and edits the original with the table', async () => {
    fake.interaction('101', 'status', [{ name: 'host', type: 3, value: 'gpu1' }]);
    const [cb] = await fake.waitFor(/\/interactions\/101\/tok-101\/callback/);
    expect(cb.body.type).toBe(5);
    const [edit] = await fake.waitFor(/\/webhooks\/900000000000000002\/tok-101\/messages\/(@|%40)original/);
    expect(embedText(edit.body)).toContain('gpu1');
  });

  it('refuses a non-admin hosts add privately (flags 64, not the deprecated ephemeral); an admin role is let through', async () => {
    const add = [
      { name: 'name', type: 3, value: 'gpu9' },
      { name: 'target', type: 3, value: 'ml@10.0.0.9:22' },
    ];
    fake.command('102', ['hosts', 'add'], add);
    const refused = await answerTo('102');
    expect(refused.deferred).toBe(false);
    expect(embedText(refused.body)).toMatch(/needs an admin/i);
    expect(refused.body.flags & 64).toBe(64);
    expect(refused.body).not.toHaveProperty('ephemeral');
    expect(hostCalls).toEqual([]);
    expect(deps.audit.recent(1)[0]).toMatchObject({ platform: 'discord', outcome: 'denied' });
    fake.command('103', ['hosts', 'add'], add, { userId: '800000000000000002', roles: [ADMIN_ROLE] });
    const done = await answerTo('103');
    expect(embedText(done.body)).toContain('Added gpu9');
    expect(done.body.flags ?? 0).toBe(0);
  });

  it('answers a usage error at once and privately: flags 64 in the interaction response body', async () => {
    fake.command('106', ['watch'], [{ name: 'host', type: 3, value: 'not a host!' }]);
    const [cb] = await fake.waitFor(/\/interactions\/106\/tok-106\/callback/);
    expect(cb.body.type).toBe(4);
    expect(cb.body.data.flags).toBe(64);
    expect(cb.body.data).not.toHaveProperty('ephemeral');
    expect(embedText(cb.body)).toMatch(/Usage: \/gpu watch HOST/);
  });

  it('a failure found after the deferral replaces the public "thinking" message with a private one', async () => {
    fake.command('107', ['hosts', 'test'], [{ name: 'name', type: 3, value: 'broken' }]);
    const [cb] = await fake.waitFor(/\/interactions\/107\/tok-107\/callback/);
    expect(cb.body.type).toBe(5);
    await fake.waitFor(/\/webhooks\/\d+\/tok-107\/messages\/(@|%40)original/, 1, 10_000, 'DELETE');
    const [followUp] = await fake.waitFor(/\/webhooks\/\d+\/tok-107$/, 1, 10_000, 'POST');
    expect(followUp.body.flags).toBe(64);
    expect(embedText(followUp.body)).toContain('ECONNREFUSED');
  });

  it('diagnoses an attachment given to /gpu diagnose', async () => {
    fake.files.set('/files/train.log', Buffer.from(OOM));
    const att = {
      id: '555',
      filename: 'train.log',
      size: OOM.length,
      url: `${fake.base}/files/train.log`,
      proxy_url: `${fake.base}/files/train.log`,
      content_type: 'text/plain',
    };
    fake.interaction('104', 'diagnose', [{ name: 'file', type: 11, value: '555' }], undefined, [], { attachments: { '555': att } });
    const { body } = await answerTo('104');
    expect(embedText(body)).toContain('16 -> 8');
    expect(embedText(body)).toContain('Read train.log');
  });

  it('answers a pasted OOM log with the concrete fix in a thread started on it, and ignores chatter and bots', async () => {
    fake.messageCreate('200', 'anyone up for lunch?');
    fake.messageCreate('201', OOM, [], fake.user('800000000000000005'), true);
    fake.messageCreate('202', OOM);
    // POST /channels/{channel.id}/messages/{message.id}/threads, then the diagnosis posted in that thread.
    const [started] = await fake.waitFor(new RegExp(`^/channels/${CHANNEL_ID}/messages/202/threads$`), 1, 10_000, 'POST');
    expect(started.body.name).toMatch(/^gpu-doctor: .*out of memory/i);
    expect(started.body.name.length).toBeLessThanOrEqual(100);
    const [post] = await fake.waitFor(/^\/channels\/202\/messages$/);
    await new Promise((r) => setTimeout(r, 300));
    expect(fake.of(/\/channels\/\d+\/messages$/)).toHaveLength(1);
    expect(fake.of(/\/threads$/)).toHaveLength(1);
    expect(fake.threads.get('202')).toMatchObject({ parentId: CHANNEL_ID, messageId: '202' });
    expect(embedText(post.body)).toContain('16 -> 8');
    expect(post.body.embeds[0].description.length).toBeLessThanOrEqual(4096);
  });

  // Issue 12, item 5: prose before the log, the log in a code block, or the log flattened onto one line
  // by the slash command's text option. The reply is the log's diagnosis either way.
  it('answers a paste with prose before a fenced log, and a log flattened into /gpu diagnose text', async () => {
    fake.messageCreate('210', `my run died last night, log below:\n\`\`\`\n${OOM}\n\`\`\`\nany idea?`);
    await fake.waitFor(new RegExp(`^/channels/${CHANNEL_ID}/messages/210/threads$`));
    const [post] = await fake.waitFor(/^\/channels\/210\/messages$/);
    expect(embedText(post.body)).toContain('CUDA out of memory');
    expect(embedText(post.body)).toContain('16 -> 8');
    expect(embedText(post.body)).toContain('--batch-size 8');
    fake.interaction('105', 'diagnose', [{ name: 'text', type: 3, value: `help, training crashed: ${OOM.replace(/\n/g, ' ')}` }]);
    const text = embedText((await answerTo('105')).body);
    expect(text).toContain('CUDA out of memory');
    expect(text).toContain('16 -> 8');
    // a flattened paste cannot be told apart from its command line: no corrected command is offered
    expect(text).not.toContain('--batch-size 8');
  });

  it('reads a message.txt attachment, and says when one is too large', async () => {
    fake.files.set('/files/message.txt', Buffer.from(OOM));
    fake.messageCreate('203', '', [
      {
        id: '556',
        filename: 'message.txt',
        size: OOM.length,
        url: `${fake.base}/files/message.txt`,
        proxy_url: `${fake.base}/files/message.txt`,
        content_type: 'text/plain; charset=utf-8',
      },
    ]);
    let [post] = await fake.waitFor(/\/channels\/\d+\/messages$/);
    expect(embedText(post.body)).toContain('16 -> 8');
    fake.calls.length = 0;
    const big = Buffer.concat([Buffer.from(OOM), Buffer.alloc(20 * 1024 * 1024, 'x\n')]);
    fake.files.set('/files/big.log', big);
    fake.messageCreate('204', '', [
      {
        id: '557',
        filename: 'big.log',
        size: big.length,
        url: `${fake.base}/files/big.log`,
        proxy_url: `${fake.base}/files/big.log`,
        content_type: 'text/plain',
      },
    ]);
    [post] = await fake.waitFor(/\/channels\/\d+\/messages$/);
    expect(embedText(post.body)).toMatch(/big\.log is 20\.\d MB, over the 1\.0 MB I read/);
  });
});

describe('Discord: one inbound path (core/inbound.ts, typed options)', () => {
  it('a command typed as message text with a log after it is diagnosed, as on Slack', async () => {
    fake.messageCreate('230', `/gpu diagnose\n${OOM}`);
    await fake.waitFor(new RegExp(`^/channels/${CHANNEL_ID}/messages/230/threads$`));
    const [post] = await fake.waitFor(/^\/channels\/230\/messages$/);
    expect(embedText(post.body)).toContain('16 -> 8');
  });

  it("an option's value stays a value: a host named --help is not the --help flag", async () => {
    fake.command('231', ['hosts', 'test'], [{ name: 'name', type: 3, value: '--help' }]);
    const { body } = await answerTo('231');
    // Written into a line, `/gpu hosts test --help` answered with the usage; as a value it is a host name the registry refuses.
    expect(body.embeds[0].title).toBe('Unknown host');
    expect(hostCalls).toEqual([]);
  });
});

describe('Discord: every command, as on Slack and the console', () => {
  const console_ = (line: string) => deps.registry.dispatch(line, { platform: 'console', userId: 'local', isAdmin: true, services: deps.services });

  it('/gpu digest and /gpu watch HOST answer on Discord with what the console answers', async () => {
    fake.command('120', ['digest']);
    const digest = await answerTo('120');
    const digestHere = await console_('/gpu digest');
    expect(digestHere.outcome).toBe('ok');
    expect(digest.body.embeds[0].title).toBe(digestHere.reply.title);
    expect(digest.body.flags ?? 0).toBe(0);
    fake.command('121', ['watch'], [{ name: 'host', type: 3, value: 'gpu1' }]);
    const watch = await answerTo('121');
    const watchHere = await console_('/gpu watch gpu1');
    expect(watchHere.outcome).toBe('ok');
    expect(watch.body.embeds[0].title).toBe(watchHere.reply.title);
    expect(embedText(watch.body)).toContain('gpu1');
    expect(deps.audit.recent(5).map((r) => r.command)).toEqual(expect.arrayContaining(['digest', 'watch gpu1']));
  });

  it('/gpu hosts add|remove|list|trust|test reach the hosts handler with the same arguments as the text grammar', async () => {
    const asAdmin = { userId: '800000000000000002', roles: [ADMIN_ROLE] };
    const cases: { path: string[]; options: { name: string; type: number; value: unknown }[]; line: string }[] = [
      { path: ['hosts', 'list'], options: [], line: '/gpu hosts list' },
      {
        path: ['hosts', 'add'],
        options: [
          { name: 'name', type: 3, value: 'gpu9' },
          { name: 'target', type: 3, value: 'ml@10.0.0.9:2222' },
          { name: 'key', type: 3, value: './keys/gpu 9' },
          { name: 'trust', type: 3, value: FINGERPRINT },
        ],
        line: `/gpu hosts add gpu9 ml@10.0.0.9:2222 --key "./keys/gpu 9" --trust ${FINGERPRINT}`,
      },
      {
        path: ['hosts', 'add'],
        options: [
          { name: 'name', type: 3, value: 'gpu8' },
          { name: 'target', type: 3, value: 'ml@gpu8' },
        ],
        line: '/gpu hosts add gpu8 ml@gpu8',
      },
      { path: ['hosts', 'remove'], options: [{ name: 'name', type: 3, value: 'gpu9' }], line: '/gpu hosts remove gpu9' },
      { path: ['hosts', 'test'], options: [{ name: 'name', type: 3, value: 'gpu2' }], line: '/gpu hosts test gpu2' },
      { path: ['hosts', 'trust'], options: [{ name: 'name', type: 3, value: 'gpu2' }], line: '/gpu hosts trust gpu2' },
      {
        path: ['hosts', 'trust'],
        options: [
          { name: 'name', type: 3, value: 'gpu2' },
          { name: 'fingerprint', type: 3, value: FINGERPRINT },
        ],
        line: `/gpu hosts trust gpu2 ${FINGERPRINT}`,
      },
    ];
    for (const [n, c] of cases.entries()) {
      const id = String(130 + n);
      hostCalls.length = 0;
      fake.command(id, c.path, c.options, asAdmin);
      const { body } = await answerTo(id);
      const viaDiscord = [...hostCalls];
      hostCalls.length = 0;
      const viaText = await console_(c.line);
      expect(viaText.outcome, c.line).toBe('ok');
      expect(viaDiscord.length, c.line).toBeGreaterThan(0);
      expect(viaDiscord, c.line).toEqual(hostCalls);
      expect(body.embeds[0].title, c.line).toBe(viaText.reply.title);
    }
  });

  it('autocompletes host names from the host registry: filtered by the typed prefix, at most 25, within 3 s', async () => {
    const choicesOf = async (id: string) => {
      const [cb] = await fake.waitFor(new RegExp(`/interactions/${id}/tok-${id}/callback`));
      expect(cb.body.type).toBe(8);
      return cb.body.data.choices as { name: string; value: unknown }[];
    };
    const t0 = performance.now();
    fake.command('150', ['hosts', 'remove'], [{ name: 'name', type: 3, value: 'GP', focused: true }], { type: 4 });
    expect((await choicesOf('150')).map((c) => c.value)).toEqual(['gpu1', 'gpu2', 'gpu10']);
    expect(performance.now() - t0).toBeLessThan(3000);
    fake.command('151', ['status'], [{ name: 'host', type: 3, value: '', focused: true }], { type: 4 });
    const all = await choicesOf('151');
    expect(all).toHaveLength(25);
    expect(all.map((c) => c.value)).toEqual(HOST_NAMES.slice(0, 25));
    // status takes several hosts: the last word is completed, the ones before it kept, and all of them sent.
    fake.command('158', ['mem'], [{ name: 'host', type: 3, value: 'gpu1 gpu2  a100-1' }]);
    await answerTo('158');
    expect(hostCalls.filter((c) => c.method === 'mem').map((c) => c.args)).toEqual([[['gpu1', 'gpu2', 'a100-1']]]);
    fake.command('152', ['status'], [{ name: 'host', type: 3, value: 'a100-1 gpu1', focused: true }], { type: 4 });
    expect((await choicesOf('152')).map((c) => c.value)).toEqual(['a100-1 gpu1', 'a100-1 gpu10']);
    fake.command('153', ['watch'], [{ name: 'host', type: 3, value: 'zz', focused: true }], { type: 4 });
    expect(await choicesOf('153')).toEqual([]);
    // An option that completes nothing, or one this version does not know: an empty answer, no crash.
    fake.command('154', ['hosts', 'add'], [{ name: 'target', type: 3, value: 'ml@', focused: true }], { type: 4 });
    expect(await choicesOf('154')).toEqual([]);
    fake.command('155', ['hosts', 'remove'], [{ name: 'colour', type: 3, value: 'x', focused: true }], { type: 4 });
    expect(await choicesOf('155')).toEqual([]);
    fake.command('156', ['nosuch'], [{ name: 'host', type: 3, value: 'g', focused: true }], { type: 4 });
    expect(await choicesOf('156')).toEqual([]);
    fake.command('157', ['help']);
    expect(embedText((await answerTo('157')).body)).toContain('/gpu watch HOST');
  });

  it('a table longer than a message goes out as a file attached to the answer', async () => {
    const hosts = Array.from({ length: 60 }, (_, i) => `h${i + 1}`);
    fake.command('160', ['status']);
    const { body, files, fileData } = await answerTo('160');
    expect(hostCalls.find((c) => c.method === 'status')?.args).toEqual([[]]);
    expect(files).toHaveLength(1);
    const [name] = files;
    expect(name).toMatch(/\.txt$/);
    // The embed shows what fits and names the file holding everything.
    expect(embedText(body)).toContain(name);
    for (const h of hosts) expect(fileData[name]).toMatch(new RegExp(`\\b${h}\\b`));
  });
});

/** A command the Discord code has never heard of: a host, an optional GPU index and an optional number of hours. */
const peek = defineCommand({
  name: 'peek',
  summary: 'A GPU memory picture (test command)',
  usage: 'peek HOST [GPU] [hours]',
  options: z
    .object({
      _: z.tuple([z.string().regex(/^[a-z0-9-]+$/), z.coerce.number().int().min(0).max(15).optional(), z.coerce.number().int().min(1).max(168).optional()]),
    })
    .passthrough(),
  async run({ _: [host, gpu, hours] }) {
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="64" height="32"><rect width="64" height="32" fill="#3b82f6"/></svg>`;
    const png = Buffer.from(new Resvg(svg).render().asPng());
    return {
      title: `peek ${host} gpu ${gpu ?? 'all'} ${hours ?? 6}h`,
      severity: 'info',
      sections: [{ text: 'memory picture attached' }],
      files: [{ filename: 'peek.png', contentType: 'image/png', data: png }],
    };
  },
});

describe('Discord: a command added to the definitions', () => {
  let f: FakeDiscord;
  let a: DiscordAdapter;
  let d: Awaited<ReturnType<typeof testDeps>>;
  beforeAll(async () => {
    f = await new FakeDiscord().start();
    d = await testDeps();
    d.registry = new CommandRegistry([...d.registry.list(), peek]);
    const inner = d.services.hosts!;
    d.services.hosts = {
      ...inner,
      async status(names) {
        // A host that takes longer than Discord's 3 s to answer.
        if (names.includes('slowhost')) await new Promise((r) => setTimeout(r, 4000));
        const [one] = await inner.status(names);
        return one.ok ? [{ ...one, gpus: [0, 1, 2, 3, 10, 11].map((index) => ({ ...one.gpus[0], index })) }] : [one];
      },
    };
    a = createDiscordAdapter({ ...d, env: { token: 'fake.discord.token', apiUrl: `${f.base}/api` }, pacer: new ChannelPacer(0) });
    await a.start();
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(async () => {
    await a?.stop();
    await f?.close();
    d?.audit.close();
  });

  it('is invoked with its positional options in usage order, and its PNG is shown in the embed', async () => {
    f.command(
      '600',
      ['peek'],
      [
        { name: 'host', type: 3, value: 'gpu1' },
        { name: 'hours', type: 4, value: 24 },
        { name: 'gpu', type: 4, value: 1 },
      ],
    );
    const { body, files } = await answerTo('600', f);
    expect(body.embeds[0].title).toBe('peek gpu1 gpu 1 24h');
    expect(files).toEqual(['peek.png']);
    expect(body.embeds[0].image).toEqual({ url: 'attachment://peek.png' });
    // hours without gpu cannot be said positionally: a private note, not a wrong chart.
    f.command(
      '601',
      ['peek'],
      [
        { name: 'host', type: 3, value: 'gpu1' },
        { name: 'hours', type: 4, value: 24 },
      ],
    );
    const [cb] = await f.waitFor(/\/interactions\/601\/tok-601\/callback/);
    expect(cb.body.data.flags).toBe(64);
    expect(cb.body.data.content).toMatch(/Set `gpu` as well when you set `hours`/);
  });

  it('autocompletes GPU indexes of the chosen host by prefix, and answers in time when the host is slow', async () => {
    f.command(
      '610',
      ['peek'],
      [
        { name: 'host', type: 3, value: 'gpu1' },
        { name: 'gpu', type: 4, value: '1', focused: true },
      ],
      { type: 4 },
    );
    let [cb] = await f.waitFor(/\/interactions\/610\/tok-610\/callback/);
    expect(cb.body.type).toBe(8);
    expect(cb.body.data.choices.map((c: { value: unknown }) => c.value)).toEqual([1, 10, 11]);
    expect(cb.body.data.choices[0].name).toMatch(/^1: H100/);
    const t0 = performance.now();
    f.command(
      '611',
      ['peek'],
      [
        { name: 'host', type: 3, value: 'slowhost' },
        { name: 'gpu', type: 4, value: '', focused: true },
      ],
      { type: 4 },
    );
    [cb] = await f.waitFor(/\/interactions\/611\/tok-611\/callback/, 1, 5000);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(cb.body.data.choices).toEqual([]);
  });
});

describe('Discord: hostile input', () => {
  const BLANKS = '\n'.repeat(1024 * 1024);
  const SPACED = ' \n'.repeat(512 * 1024);
  const attachment = (id: string, name: string, size: number) => ({
    id,
    filename: name,
    size,
    url: `${fake.base}/files/${name}`,
    proxy_url: `${fake.base}/files/${name}`,
    content_type: 'text/plain; charset=utf-8',
  });

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
    // Every message sent (a thread's creation and a deferral carry none).
    const sent = fake.calls.filter((c) => c.method !== 'GET' && c.body && typeof c.body === 'object' && !/\/threads$/.test(c.path));
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
      // A message queued for the download slot long enough shows "Reading part1.log…" first, and that
      // message is edited into its answer: an answer is a post or an edit that names the skipped file.
      const answers = () =>
        fake.calls.filter(
          (c) =>
            (c.method === 'POST' || c.method === 'PATCH') &&
            /\/channels\/\d+\/messages(\/\d+)?$/.test(c.path) &&
            /part4\.log was not read/.test(embedText(c.body)),
        );
      for (const t0 = Date.now(); answers().length < 8; await new Promise((r) => setTimeout(r, 20)))
        if (Date.now() - t0 > 30_000) throw new Error(`${answers().length} of 8 answers within 30 s`);
      const posts = answers();
      expect(posts).toHaveLength(8);
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
    dmFake.dmInteraction('501', 'status', [{ name: 'host', type: 3, value: 'gpu1' }]);
    const [cb] = await dmFake.waitFor(/\/interactions\/501\/tok-501\/callback/);
    expect(cb.body.data.flags & 64).toBe(64);
    expect(JSON.stringify(cb.body)).toMatch(/direct messages.*channels\.allow_dms/);
    expect(dmDeps.audit.recent(5)).toHaveLength(0);
    dmFake.messageCreate('502', OOM);
    await dmFake.waitFor(new RegExp(`/channels/${CHANNEL_ID}/messages/502/threads$`));
    const [inChannel] = await dmFake.waitFor(/^\/channels\/502\/messages$/);
    expect(embedText(inChannel.body)).toContain('16 -> 8');
  });
});

describe('Discord: warnings', () => {
  it('no deprecation warning was emitted (ephemeral replies use flags)', async () => {
    await new Promise((r) => setTimeout(r, 100));
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});

describe('Discord: the response waits for no work', () => {
  let f: FakeDiscord;
  let a: DiscordAdapter;
  let d: Awaited<ReturnType<typeof testDeps>>;
  /** Lets the host reads go on: the test opens it once the interaction was answered (or 1 s passed). */
  let open: () => void = () => {};
  let opened = new Promise<void>((r) => (open = r));
  beforeAll(async () => {
    f = await new FakeDiscord().start();
    d = await testDeps();
    const inner = d.services.hosts!;
    d.services.hosts = {
      ...inner,
      status: async (names) => {
        await Promise.race([opened, new Promise((r) => setTimeout(r, 1000))]);
        return inner.status(names);
      },
    };
    // No interim reply (it would defer the response on its own).
    a = createDiscordAdapter({ ...d, env: { token: 'fake.discord.token', apiUrl: `${f.base}/api` }, progressPacing: { quietMs: 3_600_000 } });
    await a.start();
    await new Promise((r) => setTimeout(r, 200));
  });
  afterAll(async () => {
    open();
    await a?.stop();
    await f?.close();
    d?.audit.close();
  });

  it('a quick command whose answer is not there at once is deferred at once, then edited into its answer', async () => {
    // diagnose is answered in the response itself when it is there at once; naming a host makes it read
    // that host first, which waits here until the interaction was answered: a response that waited for
    // the work would come only after that second, with the answer (type 4) instead of the deferral.
    opened = new Promise<void>((r) => (open = r));
    f.interaction('700', 'diagnose', [{ name: 'text', type: 3, value: `host:gpu1 ${OOM.replace(/\n/g, ' ')}` }]);
    const [cb] = await f.waitFor(/\/interactions\/700\/tok-700\/callback/);
    open();
    expect(cb.body.type).toBe(5);
    const answer = await answerTo('700', f);
    expect(answer.deferred).toBe(true);
    expect(embedText(answer.body)).toContain('16 -> 8');
    expect(embedText(answer.body)).toContain('gpu1');
  });
});
