// Issue 22 item 12: text from outside (a pasted log's facts and error line, a process's command line in an
// owner's direct message) is shown literally: on Discord a `[text](https://evil)` once became a live
// masked link in the bot's embed and fact values were not escaped at all; on Slack, `<https://evil|text>`
// and `<!channel>` must stay text. Through the real discord.js client (fake REST + gateway) and the real
// Bolt app (fake Web API), wired by startChatAdapters as the bot does.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { allCommands } from '../../commands/index.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { parseConfig } from '../../src/config.js';
import { t } from '../../src/core/i18n.js';
import { CommandRegistry } from '../../src/core/registry.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { OwnerDirectory } from '../../src/owners/directory.js';
import { WatchRuntime } from '../../src/watch/runtime.js';
import type { DigestConfig } from '../../src/watch/scheduler.js';
import { WatchStore } from '../../src/storage/sqlite/watch.js';
import { TRACES_PATH } from '../watch/generate-traces.js';
import { decodeTrace } from '../watch/generator.js';
import { CHANNEL_ID, DM_CHANNEL_ID, FakeDiscord } from './fake-discord.js';
import { FakeSlack } from './fake-slack.js';
import { sqliteAudit } from '../storage/sqlite-stores.js';

const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });
const OOM = readFileSync(new URL('../fixtures/eval-dev/003-cuda_oom.log', import.meta.url), 'utf8');
const ROLE = '700000000000000009';
// A GPU name as a log could print it (YOLO's "CUDA:0 (NAME, MiB)" line): markdown, a role mention, @everyone.
const GPU_LINE = `Ultralytics YOLOv8.1.1 Python-3.10.13 torch-2.1.2+cu121 CUDA:0 (NVIDIA **x** __y__ <@&${ROLE}> @everyone, 15110MiB)`;
const ERROR_LOG = [
  'Traceback (most recent call last):',
  '  File "train.py", line 3, in <module>',
  '    main()',
  'ValueError: bad config, see [the fix](https://evil.example/fix) and <https://evil.example|here>',
].join('\n');
const COMMAND = 'python train.py --note [click me](https://evil.example/x) <!channel> <https://evil.example|docs> @here';
const ALICE_DISCORD = '323456789012345678';
const ALICE_SLACK = 'UALICE001';

/** A masked link Discord would render: `[..](http` with neither bracket escaped. */
const LIVE_LINK = /(?<!\\)\[[^\]\n]*(?<!\\)\]\(https?:/;

const closers: (() => unknown)[] = [];
let bots: RunningBots | null = null;
afterAll(async () => {
  await bots?.stop();
  for (const c of closers.reverse()) await c();
});

/** The bot with the adapters given by env, its watch store holding alice's growing process under COMMAND. */
async function bot(env: Record<string, string>, digests: DigestConfig[]) {
  await bots?.stop();
  const dir = mkdtempSync(join(tmpdir(), 'gd-escape-'));
  const trace = readFileSync(TRACES_PATH, 'utf8')
    .trim()
    .split('\n')
    .map(decodeTrace)
    .find((x) => x.id === 'creep-50-seg20')!;
  const store = WatchStore.inDataDir(dir);
  store.insert(trace.samples.map((s) => ('command' in s ? { ...s, command: COMMAND } : s)));
  const config = parseConfig({
    data_dir: dir,
    owners: { alice: { name: 'Alice Liddell', slack: ALICE_SLACK, discord: ALICE_DISCORD } },
    watch: { enabled: true, digests },
  });
  const rules = await loadRuleBase();
  const runtime = new WatchRuntime(store, undefined, rules, config.watch);
  runtime.setOwners(new OwnerDirectory(config.owners, null));
  closers.push(() => runtime.stop());
  const app = {
    loaded: { config, file: null, baseDir: dir },
    audit: sqliteAudit(config, dir),
    services: { rules, watch: runtime },
    registry: new CommandRegistry(allCommands()),
    async close() {},
  };
  bots = await startChatAdapters(app, env, silent);
  return { runtime, now: Math.max(...trace.samples.map((s) => Date.parse(String(s.ts)))) };
}

describe('Discord shows outside text literally', () => {
  let fake: FakeDiscord;

  it('a pasted log: its GPU name (a fact field) and its error line (text) carry no live markup', async () => {
    fake = await new FakeDiscord().start();
    closers.push(() => fake.close());
    await bot({ DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${fake.base}/api` }, []);
    await new Promise((r) => setTimeout(r, 200));

    fake.messageCreate('301', `${GPU_LINE}\n${OOM}`);
    const [post] = await fake.waitFor(/^\/channels\/301\/messages$/);
    const embed = (post.body as { embeds: { fields?: { name: string; value: string }[] }[] }).embeds[0];
    const gpu = embed.fields?.find((f) => f.name === t('en', 'diag.fact.gpuName'));
    expect(gpu?.value).toBe(`NVIDIA \\*\\*x\\*\\* \\_\\_y\\_\\_ \\<@&${ROLE}> @\u200beveryone`);
    expect((post.body as { allowed_mentions?: unknown }).allowed_mentions).toMatchObject({ parse: [] });

    fake.interaction('302', 'diagnose', [{ name: 'text', type: 3, value: ERROR_LOG }]);
    const [cb] = await fake.waitFor(/\/interactions\/302\/tok-302\/callback/);
    const answer = cb.body.type === 4 ? cb.body.data : (await fake.waitFor(/\/webhooks\/\d+\/tok-302\/messages\/(@|%40)original/, 1, 10_000, 'PATCH'))[0].body;
    const description: string = answer.embeds[0].description;
    expect(description).toContain('see \\[the fix\\](https://evil.example/fix) and \\<https://evil.example\\|here>');
    expect(description).not.toMatch(LIVE_LINK);
  });

  it("an owner's direct message: the process's command line carries no link, mention or @here", async () => {
    const optIn: DigestConfig = { name: 'optin', platform: 'discord', channel: CHANNEL_ID, cron: '0 9 * * *', timezone: 'UTC', dm_owners: true };
    const { runtime, now } = await bot({ DISCORD_TOKEN: 'fake.discord.token.0123456789', DISCORD_API_URL: `${fake.base}/api` }, [optIn]);
    await new Promise((r) => setTimeout(r, 200));
    fake.calls.length = 0;
    expect(await runtime.scheduler.run(optIn, now)).toBe(true);
    const sent = fake.calls.filter((c) => c.method === 'POST' && c.path === `/channels/${DM_CHANNEL_ID}/messages`);
    expect(sent).toHaveLength(1);
    const text = JSON.stringify((sent[0].body as { embeds: unknown }).embeds);
    expect(text).toContain('python train.py --note \\\\[click me\\\\](https://evil.example/x) \\\\<!channel> \\\\<https://evil.example\\\\|docs> @\u200bhere');
    expect(
      JSON.parse(text)
        // Code blocks (the table) show their text as it is: no markup there to escape.
        .map((e: { description?: string }) => (e.description ?? '').replace(/```[\s\S]*?```/g, ''))
        .join('\n'),
    ).not.toMatch(LIVE_LINK);
  });
});

describe('Slack shows outside text literally', () => {
  it("an owner's direct message: <https://evil|text> and <!channel> in a command line stay text", async () => {
    const slack = await new FakeSlack().start();
    closers.push(() => slack.close());
    const optIn: DigestConfig = { name: 'optin', platform: 'slack', channel: 'COPTIN', cron: '0 9 * * *', timezone: 'UTC', dm_owners: true };
    const { runtime, now } = await bot(
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: 'test-signing-secret-0123456789', SLACK_API_URL: `${slack.base}/api/`, PORT: '0' },
      [optIn],
    );
    expect(await runtime.scheduler.run(optIn, now)).toBe(true);
    const dms = slack.of('chat.postMessage').filter((c) => c.body.channel === ALICE_SLACK);
    expect(dms).toHaveLength(1);
    const all = JSON.stringify(dms[0].body.blocks) + dms[0].body.text;
    expect(all).toContain('&lt;!channel&gt; &lt;https://evil.example|docs&gt;');
    expect(all).not.toContain('<!channel>');
    expect(all).not.toContain('<https://evil');
  });
});
