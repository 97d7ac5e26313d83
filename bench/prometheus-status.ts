// npm run bench:prometheus: `/gpu status` over BENCH_HOSTS (default 1,000) GPU hosts x 8 GPUs read from
// a real Prometheus (Debian's binary, started as the tests start it: test/sources/prometheus-server.ts),
// against `curl -s` of the same PromQL against /api/v1/query.
//
// The fleet: dcgm-exporter and node_exporter output for every host, in the format of the real exporter
// output in test/fixtures/prometheus (dcgm-exporter-a100.prom: the same 17 DCGM_FI_* metric names and
// the same labels gpu, UUID, device, Hostname; node-exporter-e2e-memory.prom: the same 7
// node_memory_*_bytes series with their HELP/TYPE), with per-host values drawn from a seeded generator:
// the VALUES ARE SYNTHETIC, the format is the real exporters'. 1,000 hosts are not 1,000 processes:
// BENCH_TARGETS (default 10) local HTTP targets per exporter each expose 1/10 of the hosts, every line
// carrying its host's own `instance` label (host:9400 for dcgm-exporter, host:9100 for node_exporter, as
// a fleet's scrape would label them), scraped with `honor_labels: true` so Prometheus keeps those
// labels. The bot's group then joins on `instance` with `strip_port` (the README's default config).
//
// The bot side runs in a child process (its peak RSS is the bot's): the config file loaded by
// loadConfig, the real SourcedHostsService with its `source: prometheus` group, the real CommandRegistry
// with every command, `/gpu status` dispatched, and the reply rendered for Slack (Block Kit), Discord
// (embeds) and the console. Then the same with a progress pacer as the chat adapters give it: an answer
// later than 0.5 s shows "N of M hosts answered" first and the final edit comes at most once a second
// after it, so there the asker waits for the pacing too (reported apart: it is not work). Reference: `curl -s` of the
// two queries the bot sends (GPU exporters, node_exporter), one after the other and in parallel.
// Prints medians and minima of BENCH_RUNS (default 11) runs each, the ratios, and the ratio of each bot
// run to the curl run next to it (they alternate). Never asserts a time.
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { PromClient } from '../src/sources/prometheus/client.js';
import { gpuQuery, nodeQuery, DEFAULT_JOIN } from '../src/sources/prometheus/parse.js';
import { fixtureText } from '../test/sources/exposition.js';
import { PROMETHEUS, serveMetrics, startPrometheus } from '../test/sources/prometheus-server.js';
import { withSqliteRegistry } from '../test/storage/sqlite-stores.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 1000);
const GPUS = 8;
const TARGETS = Math.min(Number(process.env.BENCH_TARGETS ?? 10), HOSTS);
const RUNS = Number(process.env.BENCH_RUNS ?? 11);
const SCRAPE_S = Number(process.env.BENCH_SCRAPE_S ?? 15);
// Extra node flags for the bot's child process, e.g. BENCH_CHILD_NODE_ARGS=--cpu-prof to see where its time goes.
const childArgs = (process.env.BENCH_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const hostName = (i: number) => `gpu-node-${String(i + 1).padStart(4, '0')}`;

// ---- the fleet's exporter output ----

/** A small seeded generator (mulberry32), so every run serves the same fleet. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface ExpoLine {
  name: string;
  labels: [string, string][];
  value: string;
}
const parseLine = (line: string): ExpoLine => {
  const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
  if (!m) throw new Error(`not an exposition line: ${line}`);
  return { name: m[1], labels: [...(m[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)].map((l) => [l[1], l[2]]), value: m[3] };
};
const labelText = (labels: [string, string][]) => `{${labels.map(([k, v]) => `${k}="${v}"`).join(',')}}`;
const uuidOf = (r: () => number) => {
  const hex = (n: number) => Array.from({ length: n }, () => Math.floor(r() * 16).toString(16)).join('');
  return `GPU-${hex(8)}-${hex(4)}-${hex(4)}-${hex(4)}-${hex(12)}`;
};

/** dcgm-exporter output of these hosts: the fixture's lines, per host and GPU, metric by metric. */
function dcgmText(hosts: number[]): string {
  const lines = fixtureText('dcgm-exporter-a100.prom')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map(parseLine);
  const fbTotal = Number(lines.find((l) => l.name === 'DCGM_FI_DEV_FB_USED')!.value) + Number(lines.find((l) => l.name === 'DCGM_FI_DEV_FB_FREE')!.value);
  // Per host and GPU: labels and the drawn values (used memory 0..total, temperatures 30..85 C, other
  // gauges the fixture's value times 0.5..1.5, counters as they are).
  const gpus = hosts.flatMap((h) => {
    const r = rng(h + 1);
    return Array.from({ length: GPUS }, (_, g) => {
      const used = Math.floor(r() * fbTotal);
      return { h, g, uuid: uuidOf(r), used, temp: 30 + Math.floor(r() * 55), scale: 0.5 + r() };
    });
  });
  const out: string[] = [];
  for (const l of lines)
    for (const x of gpus) {
      const labels = l.labels.map(([k, v]): [string, string] => [
        k,
        k === 'gpu' ? String(x.g) : k === 'UUID' ? x.uuid : k === 'device' ? `nvidia${x.g}` : k === 'Hostname' ? hostName(x.h) : v,
      ]);
      const v =
        l.name === 'DCGM_FI_DEV_FB_USED'
          ? String(x.used)
          : l.name === 'DCGM_FI_DEV_FB_FREE'
            ? String(fbTotal - x.used)
            : /_TEMP$/.test(l.name)
              ? String(x.temp)
              : /ERRORS|COUNTER|LICENSE|ENERGY/.test(l.name)
                ? l.value
                : String(Math.round(Number(l.value) * x.scale * 1e6) / 1e6);
      out.push(`${l.name}${labelText([...labels, ['instance', `${hostName(x.h)}:9400`]])} ${v}`);
    }
  return out.join('\n') + '\n';
}

/** node_exporter's meminfo output of these hosts: the fixture's families (HELP, TYPE), one sample per host. */
function nodeText(hosts: number[]): string {
  const text = fixtureText('node-exporter-e2e-memory.prom').split('\n');
  const out: string[] = [];
  for (let i = 0; i < text.length; i++) {
    const line = text[i];
    if (!line.trim()) continue;
    if (line.startsWith('#')) {
      out.push(line);
      continue;
    }
    const l = parseLine(line);
    for (const h of hosts) {
      // One drawn size per host (256 GiB .. 2 TiB), each field the fixture's share of its MemTotal.
      const total = 2 ** 30 * (256 + Math.floor(rng(h + 7)() * 1792));
      const share = Number(l.value) / 3.831959552e9;
      out.push(`${l.name}${labelText([...l.labels, ['instance', `${hostName(h)}:9100`]])} ${Math.round(total * share)}`);
    }
  }
  return out.join('\n') + '\n';
}

// ---- the parent: Prometheus, targets, curl, and the child ----

async function main(): Promise<void> {
  if (!PROMETHEUS) {
    console.error('bench:prometheus needs the prometheus binary (apt-get install -y prometheus)');
    process.exit(1);
  }
  const root = mkdtempSync(join(tmpdir(), 'gpu-doctor-bench-prom-'));
  const closers: (() => Promise<void>)[] = [];
  try {
    const t0 = performance.now();
    const slices = Array.from({ length: TARGETS }, (_, t) => Array.from({ length: HOSTS }, (_, i) => i).filter((i) => i % TARGETS === t));
    const dcgm = await Promise.all(slices.map((s) => serveMetrics('127.0.0.1', dcgmText(s))));
    const node = await Promise.all(slices.map((s) => serveMetrics('127.0.0.1', nodeText(s))));
    for (const s of [...dcgm, ...node]) closers.push(() => s.close());
    const bytes = (dcgmText(slices[0]).length + nodeText(slices[0]).length) * TARGETS;
    const prom = await startPrometheus(
      join(root, 'prom'),
      [
        { job: 'dcgm', targets: dcgm.map((s) => s.target), honorLabels: true },
        { job: 'node', targets: node.map((s) => s.target), honorLabels: true },
      ],
      [],
      { scrapeIntervalS: SCRAPE_S },
    );
    closers.unshift(() => prom.stop());
    const client = new PromClient({ url: prom.url, timeoutMs: 10_000 });
    const count = async (expr: string) => Number((await client.query(`count(${expr})`)).result[0]?.value[1] ?? 0);
    for (const deadline = Date.now() + 120_000; ;) {
      const [g, n] = await Promise.all([count('DCGM_FI_DEV_FB_USED'), count('node_memory_MemTotal_bytes')]).catch(() => [0, 0]);
      if (g >= HOSTS * GPUS && n >= HOSTS) break;
      if (Date.now() > deadline) throw new Error(`after 120 s Prometheus holds ${g} FB_USED and ${n} MemTotal series, wanted ${HOSTS * GPUS} and ${HOSTS}`);
      await new Promise((r) => setTimeout(r, 500));
    }
    const series = Number((await client.query('count({__name__=~"DCGM_FI_.*|node_memory_.*"})')).result[0]?.value[1] ?? 0);
    console.log(
      `${HOSTS} hosts x ${GPUS} GPUs: ${2 * TARGETS} local targets (${TARGETS} dcgm-exporter, ${TARGETS} node_exporter; honor_labels, one instance label per host), ` +
        `${(bytes / 2 ** 20).toFixed(1)} MiB per scrape round, ${series} series in Prometheus (${PROMETHEUS}), scraped every ${SCRAPE_S} s; ready in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
    );
    console.log("values are SYNTHETIC (seeded per host); metric names, labels and format are the real exporters' (test/fixtures/prometheus)");

    const cfg = join(root, 'gpu-doctor.yaml');
    writeFileSync(
      cfg,
      [
        `data_dir: ${join(root, 'data')}`,
        'host_groups:',
        '  - name: fleet',
        '    source: prometheus',
        `    url: ${prom.url}`,
        '    timeout_ms: 30000',
        '    hosts:',
        ...Array.from({ length: HOSTS }, (_, i) => `      - { name: ${hostName(i)} }`),
        '',
      ].join('\n'),
    );

    // The reference: the bot's two queries, as the bot sends them (form-encoded POST), with curl.
    const hosts = Array.from({ length: HOSTS }, (_, i) => ({ name: hostName(i), match: hostName(i) }));
    const queries = [gpuQuery(hosts, DEFAULT_JOIN), nodeQuery(hosts, DEFAULT_JOIN)];
    const qfiles = queries.map((q, i) => {
      const f = join(root, `query${i}.txt`);
      writeFileSync(f, q);
      return f;
    });
    const execFileP = promisify(execFile);
    const curl = async (i: number) => {
      const t = performance.now();
      const { stdout } = await execFileP('curl', [
        '-s',
        '-o',
        '/dev/null',
        '-w',
        '%{http_code} %{size_download}',
        '--data-urlencode',
        `query@${qfiles[i]}`,
        `${prom.url}/api/v1/query`,
      ]);
      const [code, size] = stdout.split(' ').map(Number);
      if (code !== 200) throw new Error(`curl: HTTP ${code}`);
      return { ms: performance.now() - t, size };
    };
    // The bot, in a child process of its own (its RSS is the bot's), driven a run at a time so its runs
    // and curl's alternate: the load of this shared machine then weighs on both alike.
    const c = spawn(process.execPath, [...childArgs, '--import', 'tsx', import.meta.filename, '--child', cfg], { stdio: ['pipe', 'pipe', 'inherit'] });
    const answers = createInterface({ input: c.stdout })[Symbol.asyncIterator]();
    const ask = async <T>(cmd: string): Promise<T> => {
      c.stdin.write(cmd + '\n');
      const line = await answers.next();
      if (line.done) throw new Error(`the bot's process ended (${c.exitCode})`);
      return JSON.parse(line.value) as T;
    };
    const curlGpu: number[] = [];
    const curlBoth: number[] = [];
    const curlPar: number[] = [];
    const bot: RunResult[] = [];
    const paced: PacedResult[] = [];
    let answerBytes = 0;
    for (let k = 0; k <= RUNS; k++) {
      bot.push(await ask<RunResult>('run'));
      if (k === 0) continue; // the first is the cold one
      const a = await curl(0);
      const b = await curl(1);
      curlGpu.push(a.ms);
      curlBoth.push(a.ms + b.ms);
      answerBytes = a.size + b.size;
      const t = performance.now();
      await Promise.all([curl(0), curl(1)]);
      curlPar.push(performance.now() - t);
      paced.push(await ask<PacedResult>('paced'));
    }
    const end = await ask<EndResult>('end');
    const [first, ...warm] = bot;
    const r = {
      ...first,
      ...end,
      first: first.total,
      dispatch: warm.map((x) => x.dispatch),
      render: warm.map((x) => x.render),
      total: warm.map((x) => x.total),
      paced: paced.map((x) => x.ms),
      interims: paced.map((x) => x.interims),
    };

    const ref = median(curlPar);
    const refMin = Math.min(...curlPar);
    const rows: [string, number[], string][] = [
      ['curl -s, GPU query (1 request)', curlGpu, ''],
      ['curl -s, both queries one after the other', curlBoth, ''],
      ['curl -s, both queries in parallel (reference)', curlPar, ''],
      ['/gpu status, first (cold process)', [r.first], ''],
      ['/gpu status, dispatch (warm)', r.dispatch, `queries + parse + ${HOSTS} host replies + Reply`],
      ['  render Slack + Discord + console', r.render, `${r.blocks} Slack blocks, ${r.embeds} Discord embeds, ${(r.textBytes / 1024).toFixed(0)} KiB text`],
      ['/gpu status, dispatch + render (warm)', r.total, ''],
      ['  with the chat progress pacer', r.paced, `interim replies ${r.interims.join('/')} (pacing: not work)`],
    ];
    console.log(`\n${'what'.padEnd(48)} ${'median'.padStart(9)} ${'x curl'.padStart(7)} ${'min'.padStart(9)} ${'x curl'.padStart(7)}`);
    for (const [what, xs, note] of rows) {
      const m = median(xs);
      const lo = Math.min(...xs);
      console.log(
        `${what.padEnd(48)} ${m.toFixed(0).padStart(6)} ms ${(m / ref).toFixed(2).padStart(6)}x ${lo.toFixed(0).padStart(6)} ms ${(lo / refMin).toFixed(2).padStart(6)}x  ${note}`,
      );
    }
    // Runs alternate, so each bot run has a curl run next to it under about the same load.
    const paired = r.total.map((x, i) => x / curlPar[i]);
    console.log(
      `\npaired (each warm dispatch + render / the curl pair right after it): median ${median(paired).toFixed(2)}x, range ${Math.min(...paired).toFixed(2)}-${Math.max(...paired).toFixed(2)}x`,
    );
    console.log(
      `\nanswers: ${(answerBytes / 2 ** 20).toFixed(1)} MiB of JSON for both queries; reply: ${r.title}` +
        `\nbot process RSS: ${r.rssBaseMiB.toFixed(0)} MiB after loading (tsx), peak ${r.maxRssMiB.toFixed(0)} MiB (VmHWM ${r.vmHwmMiB.toFixed(0)} MiB) over ${2 * RUNS + 1} runs` +
        `\nsamples (ms): curl parallel ${curlPar.map((x) => x.toFixed(0)).join('/')}, dispatch ${r.dispatch.map((x) => x.toFixed(0)).join('/')}, total ${r.total.map((x) => x.toFixed(0)).join('/')}, paced ${r.paced.map((x) => x.toFixed(0)).join('/')}` +
        `\nload average at end: ${loadavg()
          .map((l) => l.toFixed(2))
          .join(' ')} (${cpus().length} CPUs, shared machine: the figures are noisy)`,
    );
  } finally {
    for (const c of closers) await c();
    rmSync(root, { recursive: true, force: true });
  }
}

// ---- the child: the bot's code path ----

interface RunResult {
  dispatch: number;
  render: number;
  total: number;
  title: string;
  blocks: number;
  embeds: number;
  textBytes: number;
}
/** dispatch + Slack render with a progress pacer, and how many interim replies it showed. */
interface PacedResult {
  ms: number;
  interims: number;
}
interface EndResult {
  rssBaseMiB: number;
  maxRssMiB: number;
  vmHwmMiB: number;
}

/** Answers `run`, `paced` and `end` on stdin, one JSON line each on stdout. */
async function child(cfgFile: string): Promise<void> {
  const [{ loadConfig }, { SourcedHostsService }, { CommandRegistry }, { allCommands }, { ProgressPacer }, slack, discord, consoleRender] = await Promise.all([
    import('../src/config.js'),
    import('../src/hosts/service.js'),
    import('../src/core/registry.js'),
    import('../commands/index.js'),
    import('../src/core/progress.js'),
    import('../src/adapters/slack/render.js'),
    import('../src/adapters/discord/render.js'),
    import('../src/adapters/console/render.js'),
  ]);
  const loaded = loadConfig(cfgFile);
  const svc = new SourcedHostsService(withSqliteRegistry({ config: loaded.config, baseDir: loaded.baseDir, agent: null }));
  const registry = new CommandRegistry(allCommands());
  const services = { hosts: svc } as unknown as Parameters<typeof registry.dispatch>[1]['services'];
  const ctx = { platform: 'slack' as const, userId: 'U0BENCH01', isAdmin: false, services };
  const rssBaseMiB = process.memoryUsage().rss / 2 ** 20;
  const say = (o: RunResult | PacedResult | EndResult) => process.stdout.write(JSON.stringify(o) + '\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'run') {
      const t0 = performance.now();
      const out = await registry.dispatch('/gpu status', ctx);
      const t1 = performance.now();
      if (out.outcome !== 'ok') throw new Error(`status: ${out.outcome}: ${out.reply.title}`);
      const s = slack.renderSlack(out.reply);
      const d = discord.renderDiscord(out.reply);
      const text = consoleRender.renderText(out.reply);
      const t2 = performance.now();
      say({
        dispatch: t1 - t0,
        render: t2 - t1,
        total: t2 - t0,
        title: out.reply.title,
        blocks: s.blocks.length,
        embeds: d.embeds.length,
        textBytes: Buffer.byteLength(text),
      });
    } else if (line === 'paced') {
      // As an adapter does: a pacer whose sink would post / edit the interim reply.
      let interims = 0;
      const pacer = new ProgressPacer(() => Promise.resolve(void interims++));
      const t0 = performance.now();
      const out = await registry.dispatch('/gpu status', ctx, { progress: pacer });
      slack.renderSlack(out.reply);
      say({ ms: performance.now() - t0, interims });
    } else {
      await svc.close();
      const hwm = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
      say({ rssBaseMiB, maxRssMiB: process.resourceUsage().maxRSS / 1024, vmHwmMiB: hwm ? Number(hwm[1]) / 1024 : NaN });
      break;
    }
  }
  process.exit(0);
}

// Last, so every const above is initialised.
if (process.argv[2] === '--child') await child(process.argv[3]);
else await main();
