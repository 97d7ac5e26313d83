// `/gpu fit` and `/gpu notify` end to end: the bot as `createApp` builds it from a config file (hosts
// service over real OpenSSH sshd, leak watch store and sampler), the real Slack adapter against the
// fake Web API for the direct messages, and hosts whose fake nvidia-smi / ps replay readings that change
// between sampler rounds (test/hosts/replay-readings.ts: the real 8x H200 reading, then GPUs freed).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { renderText } from '../../src/adapters/console/render.js';
import { startChatAdapters, type RunningBots } from '../../src/adapters/start.js';
import { createApp, type App } from '../../src/app.js';
import type { CommandContext } from '../../src/core/command.js';
import type { WatchRuntime } from '../../src/watch/runtime.js';
import { FakeSlack, type SlackCall } from '../adapters/fake-slack.js';
import { h200After, replay } from '../hosts/replay-readings.js';
import { makeClientKey, startSshd, type SshdInstance } from '../hosts/sshd-harness.js';
import { describeWithSshd } from '../hosts/sshd-suite.js';

const HOUR = 3_600_000;
const SECRET = 'test-signing-secret-0123456789';
const silent = pino({ level: process.env.TEST_LOG ?? 'silent' });

describeWithSshd('fit and notify over real sshd hosts whose readings change', 'test/fleet/fit-notify-sshd.test.ts', () => {
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-fit-'));
  const configFile = join(root, 'config.yaml');
  let a: SshdInstance;
  let b: SshdInstance;
  let slack: FakeSlack;
  let app: App | null = null;
  let bots: RunningBots | null = null;

  const ctx = (userId: string): CommandContext => ({ platform: 'slack', userId, isAdmin: false, services: app!.services });
  const run = async (line: string, userId = 'UALICE01') => {
    const out = await app!.registry.dispatch(line, ctx(userId));
    return { ...out, text: renderText(out.reply) };
  };
  const sampler = () => (app!.services.watch as WatchRuntime).sampler!;
  /** One sampler round with its notify check, after the one the bot may have started itself. */
  const round = async (now = Date.now()) => {
    const t0 = Date.now();
    while (!(await sampler().tick(now))) {
      if (Date.now() - t0 > 30_000) throw new Error('the sampler never became free for a round');
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const dmsTo = (user: string): SlackCall[] => slack.of('chat.postMessage').filter((c) => c.body.channel === user);
  const dmText = (c: SlackCall) => JSON.stringify(c.body.blocks) + (c.body.text ?? '');

  async function boot() {
    app = await createApp(configFile);
    // The real Slack adapter (HTTP mode, fake Web API) sets the watch's poster, as `gpu-doctor bot` does.
    bots = await startChatAdapters(
      app,
      { SLACK_BOT_TOKEN: 'xoxb-test-token', SLACK_SIGNING_SECRET: SECRET, SLACK_API_URL: `${slack.base}/api/`, PORT: '0' },
      silent,
    );
  }
  async function shutdown() {
    await bots?.stop();
    await app?.close();
    bots = null;
    app = null;
  }

  beforeAll(async () => {
    const key = makeClientKey(join(root, 'client'));
    a = await startSshd(join(root, 'a'), key.pub, { skipShellRc: true, data: 'h200' });
    b = await startSshd(join(root, 'b'), key.pub, { skipShellRc: true, data: 'h100' });
    slack = await new FakeSlack().start();
    writeFileSync(
      configFile,
      [
        `data_dir: ${join(root, 'data')}`,
        'ssh:',
        `  identity_file: ${key.keyFile}`,
        `  known_hosts: ${join(root, 'known_hosts')}`,
        '  connect_timeout_ms: 5000',
        '  exec_timeout_ms: 5000',
        'hosts:',
        `  - { name: gpu-a, host: 127.0.0.1, port: ${a.port}, host_key: "${a.fingerprint}" }`,
        `  - { name: gpu-b, host: 127.0.0.1, port: ${b.port}, host_key: "${b.fingerprint}" }`,
        'watch:',
        '  enabled: true',
        '  sample_interval_s: 3600', // rounds are driven by the test; the bot's own first round still runs
        'notify:',
        '  max_per_user: 2',
        '',
      ].join('\n'),
    );
    await boot();
  });

  afterAll(async () => {
    await shutdown();
    await slack?.close();
    await a?.stop();
    await b?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('fit: nothing free on the captured reading, so the closest GPU and who holds it; with --shared, the line to start it', async () => {
    const none = await run('/gpu fit 40G');
    expect(none.outcome).toBe('ok');
    expect(none.reply.title).toBe('40G fits nowhere now');
    // GPU 7 of gpu-a holds the least (84282 of 143771 MiB); its process is in a container.
    expect(none.text).toContain('Closest: gpu-a GPU 7, 51.1 GiB usable');
    expect(none.text).toContain('held by a container (pid 1758887, 56.7 GiB)');
    expect(none.text).toContain("8 more GPUs fit where someone else's process runs");
    const shared = await run('/gpu fit 40G --shared');
    expect(shared.reply.title).toBe('40G fits on 8 GPUs');
    expect(shared.reply.sections[0]).toEqual({ heading: 'Best: gpu-a GPU 7', code: `ssh -p ${a.port} 127.0.0.1\nCUDA_VISIBLE_DEVICES=7 <your command>` });
    // The H100 of gpu-b (80620 of 81559 MiB used) fits nothing of this size.
    expect(shared.text).not.toMatch(/gpu-b +\d/);
  });

  it('bad input gets a clear answer and runs nothing', async () => {
    const cases: [string, RegExp][] = [
      ['/gpu fit 999999999T', /SIZE: a number with G, GiB, M or MiB.*"999999999T" is not one/],
      ['/gpu fit abc', /SIZE: a number with G, GiB, M or MiB.*"abc" is not one/],
      ['/gpu fit 40G 0', /count: 1-16 GPUs on one host/],
      ['/gpu fit 40G 2 500', /hours: 1-168/],
      ['/gpu fit 2000G', /at most 1024 GiB per GPU/],
      ['/gpu notify 40G 0', /count: 1-16/],
      ['/gpu notify cancel', /ID: the number/],
    ];
    for (const [line, want] of cases) {
      const r = await run(line);
      expect(r.outcome, line).toBe('usage');
      expect(r.text, line).toMatch(want);
    }
  });

  it('notify: one DM after the fit appears, none before, nothing lost over a restart; expiry sends one too', async () => {
    const sub = await run('/gpu notify 40G 2 for 2h');
    expect(sub.outcome).toBe('ok');
    const id = Number(/^Notify #(\d+)/.exec(sub.reply.title)![1]);
    const never = await run('/gpu notify 200G');
    const neverId = Number(/^Notify #(\d+)/.exec(never.reply.title)![1]);
    // At most 2 per user (config); someone else cannot cancel alice's.
    expect((await run('/gpu notify 10G')).text).toContain('you already have 2 open (at most 2)');
    const bobCancels = await run(`/gpu notify cancel ${id}`, 'UBOB0001');
    expect(bobCancels.outcome).toBe('ok');
    expect(bobCancels.reply.title).toBe(`No open subscription #${id} of yours`);
    expect((await run('/gpu notify list', 'UBOB0001')).reply.title).toBe('No open notify subscriptions');

    await round();
    expect(dmsTo('UALICE01')).toEqual([]); // nothing fits yet

    // The bot goes down; while it is down the jobs on GPUs 3 and 5 of gpu-a end.
    await shutdown();
    replay(a.dir, h200After([3, 5]));
    await boot();
    const list = await run('/gpu notify list');
    expect(list.text).toContain(`${id}`);
    expect(list.text).toContain('40G (40.0 GiB) on each of 2 GPUs of one host');

    await round();
    const dms = await slack.waitFor('chat.postMessage', 1).then(() => dmsTo('UALICE01'));
    expect(dms).toHaveLength(1);
    expect(dmText(dms[0])).toContain('fits now on gpu-a GPU 3,5');
    expect(dmText(dms[0])).toContain(`ssh -p ${a.port} 127.0.0.1`);
    expect(dmText(dms[0])).toContain('CUDA_VISIBLE_DEVICES=3,5');

    // Later rounds, and another restart, send nothing more for it.
    await round();
    await shutdown();
    await boot();
    await round();
    expect(dmsTo('UALICE01').filter((c) => dmText(c).includes('fits now'))).toHaveLength(1);
    const after = await run('/gpu notify list');
    expect(after.text).not.toContain('40G (40.0 GiB)');
    expect(after.text).toContain('200G');

    // 200G never fits: one message when its 12 h are over, then it is closed.
    await round(Date.now() + 13 * HOUR);
    await round(Date.now() + 14 * HOUR);
    const expired = dmsTo('UALICE01').filter((c) => dmText(c).includes('did not fit within 12 h'));
    expect(expired).toHaveLength(1);
    expect(dmText(expired[0])).toContain(`notify #${neverId} has expired`);
    expect((await run('/gpu notify list')).reply.title).toBe('No open notify subscriptions');
  });

  it("cancel: the owner's own subscription only, and a cancelled one never messages", async () => {
    replay(a.dir, h200After());
    const sub = await run('/gpu notify 40G', 'UCAROL01');
    const id = Number(/^Notify #(\d+)/.exec(sub.reply.title)![1]);
    expect((await run(`/gpu notify cancel ${id}`, 'UCAROL01')).reply.title).toBe(`Cancelled notify #${id}`);
    expect((await run(`/gpu notify cancel ${id}`, 'UCAROL01')).reply.title).toBe(`No open subscription #${id} of yours`);
    replay(a.dir, h200After([1]));
    await round();
    expect(dmsTo('UCAROL01')).toEqual([]);
  });
});
