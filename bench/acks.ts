// npm run bench:acks: how fast the Slack and Discord adapters acknowledge commands under load. The bot
// (the real Bolt app in HTTP mode and the real discord.js client, one process, as `gpu-doctor bot` runs
// them) runs in a child process; this process holds the fakes (test/adapters/fake-slack.ts and
// fake-discord.ts) and sends the load, so a bot that blocks its event loop shows up as late acks
// instead of also delaying the clock that measures them. ACKS_RATE requests/s (default 10) for
// ACKS_SECONDS (default 20), alternating Slack (signed slash-command requests) and Discord (gateway
// INTERACTION_CREATE), half `/gpu help`, half `/gpu status`, twice:
//   reference: the fleet is one real sshd host;
//   loaded:    the same fleet plus a hung host (a TCP listener that accepts and never answers), and
//              a week-long chart (`/gpu chart node0000 0 168`, 8 GPUs x 8 processes at 60 s) asked
//              every ACKS_CHART_EVERY_S seconds (default 5) through Slack, in place of a status.
// An ack is Slack's HTTP response to the command and Discord's interaction callback (reply or
// deferral); `help` is answered when its text reaches the user (in the ack, through Slack's
// response_url, or in the edited Discord reply). Prints p50/p99/max per platform and run, and the
// loaded/reference ratio. Goal: loaded acks p99 < 200 ms and help p99 < 1 s on both platforms.
// The bot leads a session of its own (as a service does); each process's main thread says how long it
// ran and how long it was runnable but waited for a CPU (schedstat): on a busy machine that wait, not
// the bot's work, is most of a late ack. Each run says who used the machine's CPUs (every process, by
// role: the bot, its chart children, sshd, this process, the machine's other work) and how many commands
// sshd ran for the run's statuses. The stand-ins for other machines are kept off the bot's share: sshd
// (the GPU hosts) runs in one CPU cgroup weighing as one program and pinned to the last CPU
// (ACKS_STAND_INS, standInGroup), and this process (Slack's and Discord's servers, and the clock) runs
// first (clockFirst), so an ack that left the bot is not counted late while the clock waits for a CPU.
// Both need root; without it the bench says what it could not do. The bot and its chart children keep
// the scheduling a service gets.
// ACKS_TIMELINE=1 (or =/path/prefix, also writing the raw data as JSON) adds where each ack's time went:
// per stage (sent, reached the bot, ack left the bot, received; Discord also the gateway event, the
// callback request created and its headers written, the fake's arrival), the slow acks one by one with
// the event-loop stalls of both processes (ran vs waited for a CPU) and the machine's busiest
// processes meanwhile (/proc, every 500 ms). It adds work to both processes: diagnosis, not the figures.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { availableParallelism, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { withSqliteRegistry } from '../test/storage/sqlite-stores.js';

const RATE = Number(process.env.ACKS_RATE ?? 10);
const SECONDS = Number(process.env.ACKS_SECONDS ?? 20);
const CHART_EVERY_S = Number(process.env.ACKS_CHART_EVERY_S ?? 5);
const SECRET = 'bench-signing-secret-0123456789';
const HELP_TEXT = 'What gpu-doctor can do';
const CHART_HOST = 'node0000';

/** What the parent hands the bot child (argv[3], JSON). */
interface BotSpec {
  dataDir: string;
  slackApi: string;
  discordApi: string;
  keyFile: string;
  hosts: { name: string; port: number; fingerprint?: string }[];
}

/** The child: the bot's adapters over the given fleet and store; prints {"port"} once both are up, stops when stdin ends. */
async function runBot(spec: BotSpec): Promise<void> {
  const pino = (await import('pino')).default;
  const { parseConfig } = await import('../src/config.js');
  const { CommandRegistry } = await import('../src/core/registry.js');
  const { allCommands } = await import('../commands/index.js');
  const { loadRuleBase } = await import('../src/diagnose/rule-base.js');
  const { SourcedHostsService } = await import('../src/hosts/service.js');
  const { AuditStore } = await import('../src/storage/sqlite/audit.js');
  const { Metrics } = await import('../src/ops/metrics.js');
  const { WatchRuntime } = await import('../src/watch/runtime.js');
  const { WatchStore } = await import('../src/storage/sqlite/watch.js');
  const { createSlackAdapter } = await import('../src/adapters/slack/app.js');
  const { createDiscordAdapter } = await import('../src/adapters/discord/app.js');
  const config = parseConfig({
    data_dir: spec.dataDir,
    ssh: { identity_file: spec.keyFile, known_hosts: join(spec.dataDir, 'known_hosts'), connect_timeout_ms: 10_000, exec_timeout_ms: 20_000 },
    hosts: spec.hosts.map((h) => ({ name: h.name, host: '127.0.0.1', port: h.port, ...(h.fingerprint ? { host_key: h.fingerprint } : {}) })),
  });
  const rules = await loadRuleBase();
  const hosts = new SourcedHostsService(withSqliteRegistry({ config, baseDir: spec.dataDir, agent: null }));
  const watch = new WatchRuntime(WatchStore.inDataDir(spec.dataDir), undefined, rules, config.watch);
  const deps = {
    registry: new CommandRegistry(allCommands()),
    services: { rules, hosts, watch },
    config,
    logger: pino({ level: 'silent' }),
    audit: AuditStore.inDataDir(spec.dataDir),
    metrics: new Metrics(),
  };
  const slack = createSlackAdapter({ ...deps, env: { botToken: 'xoxb-test-token', signingSecret: SECRET, apiUrl: spec.slackApi, port: 0 } });
  const discord = createDiscordAdapter({ ...deps, env: { token: 'fake.discord.token', apiUrl: spec.discordApi } });
  await slack.start();
  await discord.start();
  // As `gpu-doctor bot` does (src/app.ts): the leak watch started (no sampler here: no hosts given to it).
  await watch.start();
  const timeline = process.env.ACKS_TIMELINE ? await botTimeline(discord.client) : undefined;
  const { monitorEventLoopDelay } = await import('node:perf_hooks');
  const loop = monitorEventLoopDelay({ resolution: 5 });
  loop.enable();
  const cpu0 = process.cpuUsage();
  const sched0 = mainThreadSched();
  const t0 = performance.now();
  console.log(JSON.stringify({ port: slack.port() }));
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  loop.disable();
  const cpu = process.cpuUsage(cpu0);
  const sched = mainThreadSched(sched0);
  // The bot's own view of its acks (handler start to ack sent), to tell its work from the transport.
  const acks = (await deps.metrics.ackSeconds.get()).values.filter((v) => v.metricName?.endsWith('_sum') || v.metricName?.endsWith('_count'));
  const botAck = Object.fromEntries(acks.map((v) => [`${v.labels.platform}${v.metricName!.endsWith('_sum') ? 'Sum' : 'Count'}`, v.value]));
  // How the bot's own event loop fared: a blocked loop (long stalls) or a starved process (CPU share).
  console.log(
    JSON.stringify({
      loopP50: loop.percentile(50) / 1e6,
      loopP99: loop.percentile(99) / 1e6,
      loopMax: loop.max / 1e6,
      cpuShare: (cpu.user + cpu.system) / 1000 / (performance.now() - t0),
      sched,
      botAck,
      timeline: timeline?.(),
    }),
  );
  // Requests still waiting on the hung host are not waited for.
  await Promise.race([Promise.all([slack.stop(), discord.stop()]), new Promise((r) => setTimeout(r, 2000))]);
  await hosts.close();
  process.exit(0);
}

interface Sample {
  platform: 'slack' | 'discord';
  command: string;
  /** ms from sending to the ack; undefined if none came. */
  ack?: number;
  /** ms from sending to help's text reaching the user. */
  answer?: number;
  /** Reads what arrived for this request, at the end of the run. */
  finish?: () => void;
  /** Its key in ACKS_TIMELINE's marks. */
  key?: string;
}

/** The bench's own timeline of the run being measured (ACKS_TIMELINE). */
let benchTimeline: ReturnType<typeof newTimeline> | undefined;

async function main(): Promise<void> {
  const { FakeSlack } = await import('../test/adapters/fake-slack.js');
  const { FakeDiscord } = await import('../test/adapters/fake-discord.js');
  const { makeClientKey, silentListener, startSshd } = await import('../test/hosts/sshd-harness.js');
  const { WatchStore } = await import('../src/storage/sqlite/watch.js');
  const { syntheticFleet } = await import('./synthetic-fleet.js');

  if (process.env.ACKS_TIMELINE) {
    const dc = await import('node:diagnostics_channel');
    dc.subscribe('http.server.request.start', (m) => {
      const id = /\/tok-(\d+)\/callback/.exec((m as { request: IncomingMessage }).request.url ?? '')?.[1];
      if (id) benchTimeline?.mark(`d${id}`, 'fakeIn');
    });
  }
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-bench-acks-'));
  const key = makeClientKey(join(root, 'client'));
  const sshd = await startSshd(join(root, 'sshd'), key.pub, { skipShellRc: true, data: 'h100', nice: 19 });
  const standIns = standInGroup();
  standIns.add(sshd.proc.pid!);
  const clock = clockFirst();
  console.log(
    `stand-ins for other machines: sshd (the GPU hosts) and its sessions ${standIns.text}; this process (Slack's and Discord's servers, and the clock) ${clock.text}`,
  );
  const hung = await silentListener();
  // Connections the bot opened to the hung host: one at a time, each held to its connect timeout, is no storm.
  let hungConnections = 0;
  hung.server.on('connection', () => hungConnections++);
  const good = { name: 'gpu01', port: sshd.port, fingerprint: sshd.fingerprint };

  // A week of one 8-GPU host's samples (8 processes each, every 60 s), for the chart; both runs use it.
  const storeDir = join(root, 'store');
  const t0 = performance.now();
  const week = 7 * 24 * 60;
  const fleet = syntheticFleet({ hosts: 1, gpus: 8, procs: 8, t0: Date.now() - week * 60_000 });
  const store = WatchStore.inDataDir(storeDir);
  for (let m = 0; m < week; m += 60) store.insert(Array.from({ length: Math.min(60, week - m) }, (_, k) => fleet.poll(m + k)).flat());
  store.close();
  console.log(`store: a week of ${CHART_HOST} (8 GPUs x 8 processes, 60 s) written in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const runs: { name: string; samples: Sample[] }[] = [];
  try {
    for (const [name, loaded] of [
      ['reference', false],
      ['loaded', true],
    ] as const) {
      const dataDir = join(root, name);
      rmSync(dataDir, { recursive: true, force: true });
      await copyDir(storeDir, dataDir);
      const hosts = loaded && process.env.ACKS_HUNG !== '0' ? [good, { name: 'hung01', port: hung.port }] : [good];
      runs.push({ name, samples: await runLoad(dataDir, hosts, loaded) });
    }
  } finally {
    await hung.close();
    await sshd.stop();
    standIns.close();
    clock.restore();
    rmSync(root, { recursive: true, force: true });
  }
  report(runs);

  async function runLoad(dataDir: string, hosts: BotSpec['hosts'], loaded: boolean): Promise<Sample[]> {
    const slackFake = await new FakeSlack().start();
    const discordFake = await new FakeDiscord().start();
    // Arrival times of what the bot sends, recorded as it arrives (nothing here polls: this process's
    // own event loop must stay idle to measure the bot's): Discord's callback and the first message
    // with help's text per interaction, Slack's response_url posts with help's text per request.
    const discordAck = new Map<string, number>();
    const discordHelp = new Map<string, number>();
    const slackHelp = new Map<string, number>();
    const calls = discordFake.calls;
    calls.push = (...items) => {
      const at = performance.now();
      for (const c of items) {
        const id = /\/tok-(\d+)/.exec(c.path)?.[1];
        if (!id) continue;
        if (c.path.endsWith('/callback') && !discordAck.has(id)) {
          discordAck.set(id, at);
          benchTimeline?.mark(`d${id}`, 'recv');
        }
        if (!discordHelp.has(id) && JSON.stringify(c.body ?? '').includes(HELP_TEXT)) discordHelp.set(id, at);
      }
      return Array.prototype.push.apply(calls, items);
    };
    const responseServer = await listen((req, body) => {
      const n = /\/response\/(-?\d+)$/.exec(req.url ?? '')?.[1];
      if (n !== undefined && !slackHelp.has(n) && body.includes(HELP_TEXT)) slackHelp.set(n, performance.now());
    });
    const responseBase = `http://127.0.0.1:${(responseServer.address() as AddressInfo).port}`;
    const spec: BotSpec = { dataDir, slackApi: `${slackFake.base}/api/`, discordApi: `${discordFake.base}/api`, keyFile: key.keyFile, hosts };
    // The bot leads a session of its own, as `gpu-doctor bot` does as a service: Linux schedules each
    // session as one group (autogroup), and this process stands in for Slack's and Discord's servers,
    // which take none of the bot's CPU share in production. It still stops when its stdin ends.
    const bot: ChildProcess = spawn(process.execPath, ['--import', 'tsx', import.meta.filename, '--bot', JSON.stringify(spec)], {
      stdio: ['pipe', 'pipe', 'inherit'],
      detached: process.platform !== 'win32',
    });
    const lines = createInterface({ input: bot.stdout! });
    const line = await new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      bot.once('exit', (code) => reject(new Error(`the bot exited with ${code}`)));
    });
    const botStats = new Promise<string>((resolve) => lines.once('line', resolve));
    const slackUrl = `http://127.0.0.1:${(JSON.parse(line) as { port: number }).port}/slack/events`;
    await new Promise((r) => setTimeout(r, 500)); // Discord's GUILD_CREATE after READY lands in the client's cache

    // Warm-up, not measured: the first help and status on each platform load their modules and open
    // the SSH connection; a bot that has run a while has done that.
    const warm: Sample[] = [];
    await Promise.all(
      ['help', 'status'].flatMap((command, k) => [
        slackCommand(-1 - k, command, (warm[2 * k] = { platform: 'slack', command })),
        discordCommand(-1 - k, command, (warm[2 * k + 1] = { platform: 'discord', command })),
      ]),
    );
    await new Promise((r) => setTimeout(r, 2000));

    const samples: Sample[] = [];
    const pending: Promise<void>[] = [];
    const total = Math.round(RATE * SECONDS);
    const chartEvery = Math.max(1, Math.round(CHART_EVERY_S * RATE));
    const { monitorEventLoopDelay } = await import('node:perf_hooks');
    const ownLoop = monitorEventLoopDelay({ resolution: 5 });
    ownLoop.enable();
    benchTimeline = process.env.ACKS_TIMELINE ? newTimeline() : undefined;
    const ownSched0 = mainThreadSched();
    const cpu = benchTimeline
      ? cpuSampler(
          new Map([
            [process.pid, 'bench'],
            [bot.pid!, 'bot'],
          ]),
        )
      : undefined;
    const hungConnections0 = hungConnections;
    const sshdCommands0 = readFileSync(sshd.auditLog, 'utf8').split('\n').length;
    const roles = cpuByRole(
      new Map<number, Role>([
        [process.pid, 'bench'],
        [bot.pid!, 'bot'],
        [sshd.proc.pid!, 'sshd'],
      ]),
    );
    const start = performance.now();
    console.log(
      `\n${loaded ? 'loaded' : 'reference'}: ${total} requests at ${RATE}/s over hosts ${hosts.map((h) => h.name).join(', ')}${loaded ? `, a week-long chart every ${CHART_EVERY_S} s` : ''}; load average ${load()}`,
    );
    for (let n = 0; n < total; n++) {
      const due = start + (n * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      const platform = n % 2 === 0 ? 'slack' : 'discord';
      const chart = loaded && CHART_EVERY_S > 0 && n % chartEvery === 0;
      const command = chart ? `chart ${CHART_HOST} 0 168` : Math.floor(n / 2) % 2 === 0 ? 'help' : 'status';
      const sample: Sample = { platform: chart ? 'slack' : platform, command: command.split(' ')[0] };
      samples.push(sample);
      if (sample.platform === 'slack') pending.push(slackCommand(n, command, sample));
      else pending.push(discordCommand(n, command, sample));
    }
    // Every Slack ack (or its 10 s timeout), then time for late answers to land.
    await Promise.all(pending);
    await new Promise((r) => setTimeout(r, 3000));
    for (const s of samples) s.finish?.();
    ownLoop.disable();
    const ownSched = mainThreadSched(ownSched0);
    const cpuSamples = cpu?.stop() ?? [];
    reportRoles(roles.stop());
    // What the GPU host did for the run: its sessions started (the bot's SSH work is whole only if sshd kept up).
    const statuses = samples.filter((x) => x.command === 'status').length;
    console.log(
      `  sshd ran ${readFileSync(sshd.auditLog, 'utf8').split('\n').length - sshdCommands0} commands for the run's ${statuses} status requests${loaded ? `; the bot opened ${hungConnections - hungConnections0} connections to the hung host` : ''}`,
    );
    benchTimeline?.stop();
    if (process.env.ACKS_TRACE)
      console.log(samples.map((x, k) => `${(k / RATE).toFixed(1)}s ${x.platform[0]}:${x.command}:${x.ack === undefined ? '-' : x.ack.toFixed(0)}`).join(' '));
    console.log(
      `  this process's event loop (the fakes, the clock): delay p99 ${(ownLoop.percentile(99) / 1e6).toFixed(0)} ms, max ${(ownLoop.max / 1e6).toFixed(0)} ms${schedText(ownSched)}`,
    );
    const exited = new Promise((r) => bot.once('exit', r));
    bot.stdin!.end();
    const stats = await Promise.race([botStats, new Promise<string>((r) => setTimeout(() => r('{}'), 10_000))]);
    const st = JSON.parse(stats) as {
      loopP50?: number;
      loopP99?: number;
      loopMax?: number;
      cpuShare?: number;
      sched?: { ranMs: number; waitedMs: number };
      botAck?: Record<string, number>;
      timeline?: Timeline;
    };
    if (benchTimeline) reportTimeline(samples, benchTimeline, st.timeline, cpuSamples);
    if (st.botAck)
      console.log(
        `  acks as the bot times them (handler to ack): ${['slack', 'discord']
          .filter((p) => st.botAck![`${p}Count`])
          .map((p) => `${p} mean ${((1000 * st.botAck![`${p}Sum`]) / st.botAck![`${p}Count`]).toFixed(0)} ms over ${st.botAck![`${p}Count`]}`)
          .join(', ')}`,
      );
    if (st.loopMax !== undefined)
      console.log(
        `  the bot's event loop: delay p50 ${st.loopP50!.toFixed(0)} ms, p99 ${st.loopP99!.toFixed(0)} ms, max ${st.loopMax.toFixed(0)} ms; it used ${(100 * st.cpuShare!).toFixed(0)}% of a CPU${schedText(st.sched)}; load average ${load()}`,
      );
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
    bot.kill();
    responseServer.close();
    await slackFake.close();
    await discordFake.close();
    return samples;

    async function slackCommand(n: number, text: string, sample: Sample): Promise<void> {
      const body = new URLSearchParams({
        token: 'x',
        team_id: 'T1',
        team_domain: 'fake',
        channel_id: 'C1',
        channel_name: 'ml',
        user_id: n < 0 ? `UWARM${-n}` : `UUSER${n % 20}`,
        user_name: 'u',
        command: '/gpu',
        text,
        api_app_id: 'A1',
        response_url: `${responseBase}/response/${n}`,
        trigger_id: `${n}.1.1`,
      }).toString();
      const ts = Math.floor(Date.now() / 1000);
      const sig = 'v0=' + createHmac('sha256', SECRET).update(`v0:${ts}:${body}`).digest('hex');
      sample.key = `s${n}`;
      benchTimeline?.mark(sample.key, 'sent');
      const sent = performance.now();
      sample.finish = () => {
        const late = slackHelp.get(String(n));
        if (sample.command === 'help' && sample.answer === undefined && late !== undefined) sample.answer = late - sent;
      };
      try {
        const res = await fetch(slackUrl, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            'x-slack-signature': sig,
            'x-slack-request-timestamp': String(ts),
            'x-bench-n': String(n),
          },
          body,
          signal: AbortSignal.timeout(10_000),
        });
        const acked = await res.text();
        sample.ack = performance.now() - sent;
        benchTimeline?.mark(sample.key, 'recv');
        if (sample.command === 'help' && acked.includes(HELP_TEXT)) sample.answer = sample.ack;
      } catch {
        /* no ack within 10 s: counted as missing */
      }
    }

    function discordCommand(n: number, text: string, sample: Sample): Promise<void> {
      const id = String(900000 + n + 100);
      sample.key = `d${id}`;
      benchTimeline?.mark(sample.key, 'sent');
      const sent = performance.now();
      discordFake.interaction(id, text);
      sample.finish = () => {
        const acked = discordAck.get(id);
        if (acked !== undefined) sample.ack = acked - sent;
        const helped = discordHelp.get(id);
        if (sample.command === 'help' && helped !== undefined) sample.answer = helped - sent;
      };
      return Promise.resolve();
    }
  }
}

/**
 * The main thread's time on a CPU and its time runnable but waiting for one (Linux schedstat), since
 * `since`: a loop stall that is waiting is the machine's CPUs being busy, not the process's own work.
 */
function mainThreadSched(since?: { ranMs: number; waitedMs: number }): { ranMs: number; waitedMs: number } | undefined {
  try {
    const [ran, waited] = readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8')
      .split(' ')
      .map((x) => Number(x) / 1e6);
    return { ranMs: ran - (since?.ranMs ?? 0), waitedMs: waited - (since?.waitedMs ?? 0) };
  } catch {
    return undefined;
  }
}

const schedText = (s: { ranMs: number; waitedMs: number } | undefined) =>
  s ? `; its main thread ran ${(s.ranMs / 1000).toFixed(1)} s and waited ${(s.waitedMs / 1000).toFixed(1)} s for a CPU (runnable, not running)` : '';

// ---- ACKS_TIMELINE=1: where an ack's time goes (diagnosis only; it adds work to both processes) ----

/** Wall-clock ms, comparable between the bench and the bot child (both read the same clock). */
const wall = () => performance.timeOrigin + performance.now();

/** Stage times per request (s<n> for Slack, d<interaction id> for Discord), event-loop stalls and outgoing requests. */
interface Timeline {
  marks: Record<string, Record<string, number>>;
  /**
   * Stalls over 20 ms: [when it ended, how late the loop was, ms the main thread ran meanwhile, ms it
   * waited for a CPU meanwhile (runnable, not scheduled: /proc/self/task/PID/schedstat)].
   */
  stalls: [number, number, number, number][];
  /** Requests the process sent that are no ack: [when, method, path]. */
  out: [number, string, string][];
}

function newTimeline(): Timeline & { mark(key: string, stage: string): void; stop(): void } {
  const tl: Timeline = { marks: {}, stalls: [], out: [] };
  const schedstat = () =>
    readFileSync(`/proc/self/task/${process.pid}/schedstat`, 'utf8')
      .split(' ')
      .map((x) => Number(x) / 1e6);
  let last = performance.now();
  let [ran0, waited0] = schedstat();
  const tick = setInterval(() => {
    const at = performance.now();
    const [ran, waited] = schedstat();
    if (at - last - 10 > 20) tl.stalls.push([wall(), at - last - 10, ran - ran0, waited - waited0]);
    last = at;
    ran0 = ran;
    waited0 = waited;
  }, 10);
  tick.unref();
  return {
    ...tl,
    mark: (key, stage) => void ((tl.marks[key] ??= {})[stage] ??= wall()),
    stop: () => clearInterval(tick),
  };
}

/** The bot child's side: when a request reached the bot, when its ack left, and what else the bot sent. */
async function botTimeline(client: { on(event: string, listener: (...args: any[]) => void): unknown }): Promise<() => Timeline> {
  const dc = await import('node:diagnostics_channel');
  const tl = newTimeline();
  dc.subscribe('http.server.request.start', (m) => {
    const { request, response } = m as { request: IncomingMessage; response: import('node:http').ServerResponse };
    const n = request.headers['x-bench-n'];
    if (typeof n !== 'string') return;
    tl.mark(`s${n}`, 'botIn');
    response.once('finish', () => tl.mark(`s${n}`, 'botOut'));
  });
  client.on('raw', (p: { t?: string; d?: { id?: string } }) => {
    if (p.t === 'INTERACTION_CREATE' && p.d?.id) tl.mark(`d${p.d.id}`, 'botIn');
  });
  client.on('interactionCreate', (i: { id: string }) => tl.mark(`d${i.id}`, 'botEvent'));
  const callbackOf = (path: string) => /\/interactions\/(\d+)\/[^/]+\/callback/.exec(path)?.[1];
  dc.subscribe('undici:request:create', (m) => {
    const { request } = m as { request: { path: string; method: string } };
    const id = callbackOf(request.path);
    if (id) tl.mark(`d${id}`, 'botCreate');
    else tl.out.push([wall(), request.method, request.path]);
  });
  dc.subscribe('undici:client:sendHeaders', (m) => {
    const id = callbackOf((m as { request: { path: string } }).request.path);
    if (id) tl.mark(`d${id}`, 'botOut');
  });
  dc.subscribe('http.client.request.start', (m) => {
    const { request } = m as { request: import('node:http').ClientRequest };
    tl.out.push([wall(), request.method, request.path]);
  });
  return () => {
    tl.stop();
    return { marks: tl.marks, stalls: tl.stalls, out: tl.out };
  };
}

/** CPU time per process (all of the machine's), sampled every 500 ms from /proc: who ran while an ack waited. */
function cpuSampler(names: Map<number, string>): { stop(): { at: number; top: [string, number][]; busy: number }[] } {
  const hz = 100;
  const samples: { at: number; top: [string, number][]; busy: number }[] = [];
  let prev = new Map<number, { ticks: number; label: string }>();
  let prevAt = wall();
  let prevTotal = readTotal();
  function readTotal(): { busy: number; all: number } {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    const all = f.reduce((a, b) => a + b, 0);
    return { busy: all - f[3] - f[4], all };
  }
  const read = () => {
    const now = new Map<number, { ticks: number; label: string }>();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      try {
        const st = readFileSync(`/proc/${d}/stat`, 'utf8');
        const close = st.lastIndexOf(')');
        const comm = st.slice(st.indexOf('(') + 1, close);
        const f = st.slice(close + 2).split(' ');
        const pid = Number(d);
        now.set(pid, { ticks: Number(f[11]) + Number(f[12]), label: `${names.get(pid) ?? comm}(n${f[16]})` });
      } catch {
        /* gone */
      }
    }
    return now;
  };
  prev = read();
  const timer = setInterval(() => {
    const now = read();
    const at = wall();
    const total = readTotal();
    const byLabel = new Map<string, number>();
    for (const [pid, v] of now) {
      const d = v.ticks - (prev.get(pid)?.ticks ?? v.ticks);
      if (d > 0) byLabel.set(v.label, (byLabel.get(v.label) ?? 0) + (d / hz) * 1000);
    }
    const span = at - prevAt;
    samples.push({
      at,
      top: [...byLabel]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 5)
        .map(([l, ms]) => [l, ms / span]),
      busy: (total.busy - prevTotal.busy) / Math.max(1, total.all - prevTotal.all),
    });
    prev = now;
    prevAt = at;
    prevTotal = total;
  }, 500);
  return {
    stop: () => {
      clearInterval(timer);
      return samples;
    },
  };
}

// ---- Who used the CPUs during a run (always on): every process of the machine, by role ----

/** What a process is in the bench: the bot's own work, a stand-in for another machine, or the machine's other users. */
type Role = 'bot' | 'bot child' | 'sshd' | 'bench' | 'other';

const ROLE_TEXT: Record<Role, string> = {
  bot: "the bot's process (adapters, SSH client, its worker threads)",
  'bot child': "the bot's children (chart renderers; tsx's esbuild from the sources)",
  sshd: 'sshd and its sessions (stand in for the GPU hosts)',
  bench: "this process (fake Slack and Discord, the load, the clock: stand in for Slack's and Discord's servers)",
  other: "the machine's other work (other users, the kernel)",
};

interface ProcStat {
  ppid: number;
  comm: string;
  /** utime + stime + cutime + cstime, in clock ticks: its own time and its reaped children's. */
  full: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  try {
    const st = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = st.lastIndexOf(')');
    const f = st.slice(close + 2).split(' ');
    return { ppid: Number(f[1]), comm: st.slice(st.indexOf('(') + 1, close), full: Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]) };
  } catch {
    return undefined;
  }
}

/**
 * CPU seconds per role over a run, from /proc every 250 ms. A process that ends between two readings
 * is counted where it ran: its parent's reaped-children time grows by its whole total when it is
 * reaped, so what was already counted for it is taken off the parent's growth (sshd's per-command
 * shells live a few ms each). Roles follow the parent chain from the roots given.
 */
function cpuByRole(roots: Map<number, Role>): { stop(): { wallMs: number; byRole: Map<Role, number>; busyMs: number } } {
  const hz = 100;
  const role = new Map<number, Role>(roots);
  const roleOf = (pid: number, st: ProcStat, depth = 0): Role => {
    const known = role.get(pid);
    if (known) return known;
    const parent = st.ppid > 1 && depth < 32 ? readProcStat(st.ppid) : undefined;
    const up = parent ? roleOf(st.ppid, parent, depth + 1) : 'other';
    const mine: Role = up === 'bot' || up === 'bot child' ? 'bot child' : up;
    role.set(pid, mine);
    return mine;
  };
  const byRole = new Map<Role, number>();
  // Per live process: ticks counted so far (its total at the last reading) and its parent.
  let last = new Map<number, ProcStat>();
  // Ticks to take off a process's next growth: what was counted for its children that ended since.
  const owed = new Map<number, number>();
  const readAll = () => {
    const now = new Map<number, ProcStat>();
    for (const d of readdirSync('/proc')) {
      if (!/^\d+$/.test(d)) continue;
      const st = readProcStat(Number(d));
      if (st) now.set(Number(d), st);
    }
    return now;
  };
  const readTotal = () => {
    const f = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
    return { busy: f.reduce((a, b) => a + b, 0) - f[3] - f[4], all: f.reduce((a, b) => a + b, 0) };
  };
  last = readAll();
  for (const [pid, st] of last) roleOf(pid, st);
  const t0 = performance.now();
  const total0 = readTotal();
  const tick = () => {
    const now = readAll();
    // Ended since the last reading: what was counted for one is owed by the nearest ancestor still
    // there (its parent, or further up when the parent ended too: a shell and the command it ran).
    for (const [pid, st] of last)
      if (!now.has(pid)) {
        let up = st.ppid;
        for (let hops = 0; !now.has(up) && last.has(up) && hops < 32; hops++) up = last.get(up)!.ppid;
        owed.set(up, (owed.get(up) ?? 0) + st.full);
      }
    for (const [pid, st] of now) {
      const before = last.get(pid)?.full ?? 0;
      const grew = Math.max(0, st.full - before - (owed.get(pid) ?? 0));
      owed.delete(pid);
      const r = roleOf(pid, st);
      if (grew > 0) byRole.set(r, (byRole.get(r) ?? 0) + (grew / hz) * 1000);
    }
    last = now;
  };
  const timer = setInterval(tick, 250);
  timer.unref();
  return {
    stop: () => {
      clearInterval(timer);
      tick();
      const total = readTotal();
      return { wallMs: performance.now() - t0, byRole, busyMs: ((total.busy - total0.busy) / hz) * 1000 };
    },
  };
}

/**
 * In production the GPU hosts' sshd runs on other machines; here it shares the bot's cores, and sshd
 * starts a session per connection and per command (setsid): Linux weighs each session as one group
 * (autogroup), so a status's dozen shells weighed as a dozen programs against the bot's one, and nice
 * cannot reach them. ACKS_STAND_INS says how the stand-ins run:
 *   apart (default): all of sshd in one CPU cgroup weighing as ACKS_STAND_IN_WEIGHT ordinary programs
 *     (1: one program, not one per command), pinned to the last CPU (affinity, inherited across setsid),
 *     so the other CPUs are free of it. A status costs the fake host about 0.3 s of CPU (40-odd execs):
 *     on a busy 2-core machine it then runs only part of the statuses, and the bot does less SSH work;
 *     each run prints how many it ran. A larger weight runs more of them, with CPU the bot then lacks;
 *   low: the same group at the lowest weight, not pinned: it gets only what everything else leaves (on a
 *     busy machine statuses go unanswered, and the bot's SSH work with them);
 *   equal: as sshd starts them, a group per session (the bench before this choice).
 * Without a writable CPU cgroup (not root) apart and low pin only.
 */
/** The stand-ins' group weighs as this many ordinary programs (ACKS_STAND_IN_WEIGHT): enough to answer the run's statuses on its CPU. */
const STAND_IN_WEIGHT = Number(process.env.ACKS_STAND_IN_WEIGHT ?? 1);

function standInGroup(): { add(pid: number): void; text: string; close(): void } {
  const mode = process.env.ACKS_STAND_INS ?? 'apart';
  const none = { add: () => undefined, close: () => undefined };
  if (mode === 'equal') return { ...none, text: 'compete with the bot as equals, one group per session (ACKS_STAND_INS=equal)' };
  if (mode !== 'apart' && mode !== 'low') throw new Error(`ACKS_STAND_INS is apart, low or equal, not ${mode}`);
  if (process.platform !== 'linux') return { ...none, text: 'compete with the bot as equals (not Linux)' };
  const cpus = availableParallelism();
  let pin: ((pid: number) => void) | undefined;
  if (cpus > 1 && mode === 'apart')
    try {
      execFileSync('taskset', ['--version'], { stdio: 'ignore' });
      pin = (pid) => void execFileSync('taskset', ['-a', '-p', '-c', String(cpus - 1), String(pid)], { stdio: 'ignore' });
    } catch {
      /* no taskset: not pinned */
    }
  const pinText = pin ? `, pinned to CPU ${cpus - 1} (the others are free of them)` : '';
  for (const [root, weightFile, weight] of [
    ['/sys/fs/cgroup/cpu', 'cpu.shares', mode === 'low' ? '2' : String(1024 * STAND_IN_WEIGHT)],
    ['/sys/fs/cgroup', 'cpu.weight', mode === 'low' ? '1' : String(100 * STAND_IN_WEIGHT)],
  ] as const) {
    const dir = join(root, `gpu-doctor-bench-${process.pid}`);
    try {
      if (!existsSync(join(root, 'cgroup.procs'))) continue;
      if (root === '/sys/fs/cgroup' && !readFileSync(join(root, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('cpu')) continue;
      mkdirSync(dir);
      writeFileSync(join(dir, weightFile), weight);
      return {
        add: (pid) => {
          writeFileSync(join(dir, 'cgroup.procs'), String(pid));
          pin?.(pid);
        },
        text: `run in one CPU cgroup (${dir}, ${weightFile} ${weight}: ${mode === 'low' ? 'the lowest weight, they get what everything else leaves' : `as ${STAND_IN_WEIGHT} ordinary program${STAND_IN_WEIGHT === 1 ? '' : 's'}`})${pinText}`,
        close: () => {
          try {
            for (const pid of readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean)) writeFileSync(join(root, 'cgroup.procs'), pid);
            rmdirSync(dir);
          } catch {
            /* a process still leaving: the empty group stays until the next boot */
          }
        },
      };
    } catch {
      try {
        rmdirSync(dir);
      } catch {
        /* never made */
      }
    }
  }
  if (pin) return { add: pin, text: `one group per session (no writable CPU cgroup)${pinText}`, close: () => undefined };
  return { ...none, text: 'compete with the bot as equals (no writable CPU cgroup, no taskset)' };
}

/**
 * This process stands in for Slack's and Discord's servers, which have CPUs of their own, and holds the
 * clock: when it waits for a CPU, an ack that already left the bot is counted late. As root, its session's
 * scheduling group (autogroup; the bench leads a session of its own, inOwnSession) gets nice -10, so
 * it runs before the machine's other work when it has any (about 5% of a CPU); put back when the bench ends. ACKS_CLOCK_NICE sets another value, 0 leaves it.
 */
function clockFirst(): { text: string; restore(): void } {
  const file = '/proc/self/autogroup';
  const want = Number(process.env.ACKS_CLOCK_NICE ?? -10);
  const keep = { text: 'keeps the priority it has', restore: () => undefined };
  if (!want || process.platform !== 'linux' || process.env.ACKS_OWN_SESSION !== '1') return keep;
  try {
    const before = /nice\s+(-?\d+)/.exec(readFileSync(file, 'utf8'))?.[1];
    if (before === undefined) return keep;
    writeFileSync(file, String(want));
    const restore = () => {
      try {
        writeFileSync(file, before);
      } catch {
        /* the session ended */
      }
    };
    process.once('exit', restore);
    for (const sig of ['SIGINT', 'SIGTERM'] as const)
      process.once(sig, () => {
        restore();
        process.exit(130);
      });
    return { text: `runs first: its session's scheduling group at nice ${want} (was ${before}, put back at the end)`, restore };
  } catch {
    return { text: 'keeps its priority (its scheduling group cannot be reniced: not root, or no autogroup)', restore: () => undefined };
  }
}

function reportRoles({ wallMs, byRole, busyMs }: { wallMs: number; byRole: Map<Role, number>; busyMs: number }): void {
  const cpus = availableParallelism();
  const share = (ms: number) => `${(ms / 1000).toFixed(1)} s (${((100 * ms) / (cpus * wallMs)).toFixed(0)}%)`;
  const counted = [...byRole.values()].reduce((a, b) => a + b, 0);
  console.log(
    `  CPU over the run's ${(wallMs / 1000).toFixed(1)} s (${cpus} CPUs; % of all of them): ${(Object.keys(ROLE_TEXT) as Role[])
      .map((r) => `${ROLE_TEXT[r]} ${share(byRole.get(r) ?? 0)}`)
      .join('; ')}; in no process (interrupts) ${share(Math.max(0, busyMs - counted))}; machine busy ${share(busyMs)}`,
  );
}

/** Per stage: p50/p99 over the run's acks, and the slowest acks each with its stages, stalls and who held the CPU. */
function reportTimeline(samples: Sample[], bench: Timeline, bot: Timeline | undefined, cpu: { at: number; top: [string, number][]; busy: number }[]): void {
  const stagesOf = (platform: string) =>
    platform === 'slack' ? ['sent', 'botIn', 'botOut', 'recv'] : ['sent', 'botIn', 'botEvent', 'botCreate', 'botOut', 'fakeIn', 'recv'];
  const rows: { s: Sample; t: Record<string, number> }[] = [];
  for (const s of samples) {
    if (!s.key || s.command === 'chart') continue;
    const t = { ...bench.marks[s.key], ...bot?.marks[s.key] };
    if (t.sent !== undefined && t.recv !== undefined) rows.push({ s, t });
  }
  const ms = (x: number) => `${x.toFixed(0)}`;
  for (const platform of ['slack', 'discord']) {
    const stages = stagesOf(platform);
    const mine = rows.filter((r) => r.s.platform === platform);
    const parts = stages.slice(1).map((st, k) => {
      const d = mine.map((r) => r.t[st] - r.t[stages[k]]).filter(Number.isFinite);
      return `${stages[k]}->${st} p50 ${ms(pct(d, 50))} p99 ${ms(pct(d, 99))} max ${ms(Math.max(...d))}`;
    });
    console.log(`  ${platform} stages (ms): ${parts.join('; ')}`);
  }
  const overlap = (st: [number, number, number, number][], from: number, to: number) => {
    const hit = st.filter(([end, lag]) => end > from && end - lag < to);
    if (!hit.length) return 'none';
    const worst = hit.reduce((a, b) => (b[1] > a[1] ? b : a));
    return `${hit.length}, worst ${ms(worst[1])} (ran ${ms(worst[2])}, waited for CPU ${ms(worst[3])})`;
  };
  const slow = rows.filter((r) => r.t.recv - r.t.sent > 150).sort((a, b) => a.t.sent - b.t.sent);
  const t0 = rows.length ? Math.min(...rows.map((r) => r.t.sent)) : 0;
  for (const { s, t } of slow) {
    const stages = stagesOf(s.platform).filter((st) => t[st] !== undefined);
    const cpuNow = cpu.filter((c) => c.at > t.sent && c.at - 500 < t.recv);
    console.log(
      `  slow ${s.platform[0]}:${s.command} at ${((t.sent - t0) / 1000).toFixed(1)}s total ${ms(t.recv - t.sent)}: ${stages
        .slice(1)
        .map((st, k) => `${st} +${ms(t[st] - t[stages[k]])}`)
        .join(' ')} | bench stalls ${overlap(bench.stalls, t.sent, t.recv)}; bot stalls ${overlap(bot?.stalls ?? [], t.sent, t.recv)} | cpu ${cpuNow
        .map((c) => `[busy ${(100 * c.busy).toFixed(0)}%: ${c.top.map(([l, share]) => `${l} ${(100 * share).toFixed(0)}%`).join(', ')}]`)
        .join(' ')}`,
    );
  }
  const stallSum = (st: [number, number, number, number][]) =>
    `${st.length} stalls over 20 ms, late ${ms(st.reduce((a, x) => a + x[1], 0))} ms in all, of which ran ${ms(st.reduce((a, x) => a + x[2], 0))}, waited for a CPU ${ms(st.reduce((a, x) => a + x[3], 0))}`;
  console.log(`  bench main thread: ${stallSum(bench.stalls)}`);
  if (bot) console.log(`  bot main thread: ${stallSum(bot.stalls)}`);
  if (process.env.ACKS_TIMELINE!.includes('/'))
    writeFileSync(
      `${process.env.ACKS_TIMELINE}.${samples.some((s) => s.command === 'chart') ? 'loaded' : 'reference'}.json`,
      JSON.stringify({ samples, bench, bot, cpu }),
    );
  if (bot)
    console.log(
      `  the bot's other requests: ${bot.out.map(([at, method, path]) => `${((at - t0) / 1000).toFixed(1)}s ${method} ${path.slice(0, 48)}`).join('; ')}`,
    );
}

function listen(onRequest: (req: IncomingMessage, body: string) => void): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      onRequest(req, Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200).end('ok');
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r(server)));
}

async function copyDir(from: string, to: string): Promise<void> {
  const { cp } = await import('node:fs/promises');
  await cp(from, to, { recursive: true });
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)];
}

function report(runs: { name: string; samples: Sample[] }[]): void {
  const fmt = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : '-').padStart(8);
  const rows: string[] = [];
  const p99 = new Map<string, number>();
  for (const platform of ['slack', 'discord'] as const)
    for (const { name, samples } of runs) {
      const mine = samples.filter((s) => s.platform === platform && s.command !== 'chart');
      const acks = mine.flatMap((s) => (s.ack === undefined ? [] : [s.ack]));
      const help = mine.filter((s) => s.command === 'help').flatMap((s) => (s.answer === undefined || Number.isNaN(s.answer) ? [] : [s.answer]));
      const missing = mine.length - acks.length;
      p99.set(`${platform} ${name} ack`, pct(acks, 99));
      p99.set(`${platform} ${name} help`, pct(help, 99));
      rows.push(
        `${platform.padEnd(8)} ${name.padEnd(10)} acks ${String(acks.length).padStart(4)} p50 ${fmt(pct(acks, 50))} p99 ${fmt(pct(acks, 99))} max ${fmt(Math.max(...acks))}${missing ? ` (${missing} never acked)` : ''}   help ${String(help.length).padStart(3)} p50 ${fmt(pct(help, 50))} p99 ${fmt(pct(help, 99))} max ${fmt(Math.max(...help))}`,
      );
    }
  console.log('\n' + rows.join('\n'));
  for (const platform of ['slack', 'discord'])
    console.log(
      `${platform}: loaded/reference p99 ack ${(p99.get(`${platform} loaded ack`)! / p99.get(`${platform} reference ack`)!).toFixed(2)}x, help ${(p99.get(`${platform} loaded help`)! / p99.get(`${platform} reference help`)!).toFixed(2)}x; loaded ack p99 ${p99.get(`${platform} loaded ack`)!.toFixed(0)} ms (goal < 200), help p99 ${p99.get(`${platform} loaded help`)!.toFixed(0)} ms (goal < 1000)`,
    );
  const charts = runs.flatMap((r) => r.samples.filter((s) => s.command === 'chart'));
  if (charts.length)
    console.log(
      `charts asked: ${charts.length}, acked p99 ${pct(
        charts.flatMap((s) => (s.ack === undefined ? [] : [s.ack])),
        99,
      ).toFixed(0)} ms`,
    );
  console.log(`load average at end: ${load()}`);
}

if (process.argv[2] === '--bot') await runBot(JSON.parse(process.argv[3]) as BotSpec);
else if (process.platform === 'linux' && process.env.ACKS_OWN_SESSION !== '1') await inOwnSession();
else await main();

/**
 * The bench again, leading a session of its own: the scheduling group clockFirst reprioritises is then
 * the bench's alone, not that of the shell that started it and whatever else runs from there.
 */
async function inOwnSession(): Promise<void> {
  const child = spawn(process.execPath, [...process.execArgv, import.meta.filename, ...process.argv.slice(2)], {
    stdio: 'inherit',
    detached: true,
    env: { ...process.env, ACKS_OWN_SESSION: '1' },
  });
  for (const sig of ['SIGINT', 'SIGTERM'] as const) process.on(sig, () => child.kill(sig));
  const code = await new Promise<number>((resolve) => child.once('exit', (c, sig) => resolve(c ?? (sig ? 1 : 0))));
  process.exit(code);
}
