// npm run bench:chart: how long another user's `/gpu help` waits while a week-long chart is computed.
// The store holds a week of one host's 8 GPUs x 8 processes at one sample a minute (the issue's
// `/gpu chart big 0 168`; bench/synthetic-fleet.ts), written through the real store. `help` is asked
// alone first (the reference), then every 100 ms while `/gpu chart node0000 0 168` runs, through the
// real command registry and leak watch. Each help's wait counts from when it was due, so a help held
// up by a blocked event loop counts its whole wait. Reported: the chart's time, help's median and worst
// wait alone and during the chart, their ratio (during / alone), and the event loop's longest stall
// during the chart (what tells a blocked loop from a busy machine) with the CPU time this process used
// within that stall: a loop blocked by its own work uses about the stall's length, a process that waits
// for a core on a loaded machine (or behind its own chart child) uses next to none. The load average is
// printed with it.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { allCommands } from '../commands/index.js';
import { parseConfig } from '../src/config.js';
import { CommandRegistry } from '../src/core/registry.js';
import type { CommandContext } from '../src/core/command.js';
import { loadRuleBase } from '../src/diagnose/rule-base.js';
import { WatchRuntime } from '../src/watch/runtime.js';
import { WatchStore } from '../src/storage/sqlite/watch.js';
import { syntheticFleet } from './synthetic-fleet.js';

const WEEK_MIN = 7 * 24 * 60;
const HELP_EVERY_MS = 100;
const ALONE = 30;

const dir = mkdtempSync(join(tmpdir(), 'gd-bench-chart-'));
const config = parseConfig({ data_dir: dir });
const store = WatchStore.inDataDir(dir);
const end = Date.now() - 60_000;
const fleet = syntheticFleet({ hosts: 1, gpus: 8, procs: 8, t0: end - (WEEK_MIN - 1) * 60_000 });
const tIns = performance.now();
for (let m = 0; m < WEEK_MIN; m += 60) {
  const hour = [];
  for (let k = m; k < Math.min(m + 60, WEEK_MIN); k++) hour.push(...fleet.poll(k));
  store.insert(hour);
}
console.log(`bench:chart  1 host x 8 GPUs x 8 procs x ${WEEK_MIN} min written in ${((performance.now() - tIns) / 1000).toFixed(1)} s`);

const rules = await loadRuleBase();
const watch = new WatchRuntime(store, undefined, rules, config.watch);
const registry = new CommandRegistry(allCommands());
const ctx: CommandContext = { platform: 'console', userId: 'bench', isAdmin: false, channelId: 'console', services: { rules, watch } };

const ms = (v: number) => `${v.toFixed(1)} ms`;
const median = (a: number[]) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];

/** One help, its wait counted from `due`. */
async function help(due = performance.now()): Promise<number> {
  const { reply } = await registry.dispatch('/gpu help', ctx);
  if (!reply.title) throw new Error('help gave no reply');
  return performance.now() - due;
}

// Reference: help alone (after a warm-up).
for (let i = 0; i < 5; i++) await help();
const alone: number[] = [];
for (let i = 0; i < ALONE; i++) alone.push(await help());

// During the chart: a help due every HELP_EVERY_MS from the moment the chart is asked for until it is answered.
const during: number[] = [];
// The event loop's longest stall: the widest gap between ticks of a 10 ms timer, and the CPU time this
// process (all its threads) used within it.
let lastTick = performance.now();
let lastCpu = process.cpuUsage();
let longestStall = 0;
let longestStallCpu = 0;
const ticker = setInterval(() => {
  const now = performance.now();
  const cpu = process.cpuUsage(lastCpu);
  lastCpu = process.cpuUsage();
  if (now - lastTick - 10 > longestStall) {
    longestStall = now - lastTick - 10;
    longestStallCpu = (cpu.user + cpu.system) / 1000;
  }
  lastTick = now;
}, 10);
const t0 = performance.now();
let chartDone = false;
const chart = registry.dispatch('/gpu chart node0000 0 168', ctx).then(({ reply }) => {
  chartDone = true;
  return { reply, ms: performance.now() - t0 };
});
const helps: Promise<void>[] = [];
await new Promise<void>((resolve) => {
  let k = 1;
  const tick = () => {
    const due = t0 + k * HELP_EVERY_MS;
    helps.push(help(due).then((w) => void during.push(w)));
    k++;
    if (chartDone) return resolve();
    setTimeout(tick, Math.max(0, t0 + k * HELP_EVERY_MS - performance.now()));
  };
  setTimeout(tick, HELP_EVERY_MS);
});
const { reply, ms: chartMs } = await chart;
// One more turn of the loop, so a stall that ended with the chart is recorded.
await new Promise((r) => setTimeout(r, 50));
clearInterval(ticker);
await Promise.all(helps);
watch.stop();
rmSync(dir, { recursive: true, force: true });

const drawn = reply.files?.length ? `with a ${reply.files[0].data.length}-byte PNG` : 'text only';
console.log(`chart  /gpu chart node0000 0 168 answered in ${(chartMs / 1000).toFixed(2)} s (${drawn})`);
console.log(`help alone         median ${ms(median(alone))}, worst ${ms(Math.max(...alone))} (${alone.length} asks)`);
console.log(`help during chart  median ${ms(median(during))}, worst ${ms(Math.max(...during))} (${during.length} asks, one due every ${HELP_EVERY_MS} ms)`);
console.log(
  `event loop during the chart: longest stall ${ms(longestStall)}, this process used ${ms(longestStallCpu)} of CPU within it; load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`,
);
console.log(`ratio during/alone  median ${(median(during) / median(alone)).toFixed(1)}x, worst ${(Math.max(...during) / Math.max(...alone)).toFixed(1)}x`);
