// npm run bench:digest: H hosts x 8 GPUs x 2 processes, one sample a minute for 24 h, written through
// the real store (WatchStore, one transaction per poll), then one digest computed over the store.
// The scale is 1000 hosts (~23M process samples); BENCH_HOSTS scales it (default 100).
import { mkdtempSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { findingsFromStore, findingsOf } from '../src/watch/findings.js';
import { WatchStore } from '../src/storage/sqlite/watch.js';
import { syntheticFleet } from './synthetic-fleet.js';

const HOSTS = Number(process.env.BENCH_HOSTS ?? 100);
const GPUS = 8;
const PROCS = 2;
const MINUTES = Number(process.env.BENCH_MINUTES ?? 1440);
const FULL = 1000 * GPUS * PROCS * 1440;
// BENCH_DATA_DIR keeps the store: a later run with the same directory skips the writes and measures
// the digest over the same rows (the writes take ~8 min at full scale).
const keep = process.env.BENCH_DATA_DIR;
const dir = keep ?? mkdtempSync(join(tmpdir(), 'gd-bench-digest-'));
const reuse = keep !== undefined && existsSync(join(dir, 'watch.sqlite'));
const store = WatchStore.inDataDir(dir);
const t0 = Date.parse('2026-11-20T00:00:00Z');

console.log(
  `bench:digest  ${HOSTS} hosts x ${GPUS} GPUs x ${PROCS} procs x ${MINUTES} min = ${(HOSTS * GPUS * PROCS * MINUTES).toLocaleString()} process samples` +
    (HOSTS * GPUS * PROCS * MINUTES < FULL ? ` (scaled down from the issue's ${FULL.toLocaleString()}; BENCH_HOSTS=1000 for full)` : ''),
);

const fleet = syntheticFleet({ hosts: HOSTS, gpus: GPUS, procs: PROCS, t0 });
let inserted = 0;
// The sampler writes each poll with insertPaced (host-aligned chunks, yielding between them); the
// event loop's longest stall while writing is what a chat reply could wait behind a poll's writes.
const loopDelay = monitorEventLoopDelay({ resolution: 5 });
let onePollMs = 0;
const tIns = performance.now();
loopDelay.enable();
for (let m = 0; m < (reuse ? 0 : MINUTES); m++) {
  const poll = fleet.poll(m);
  const tPoll = performance.now();
  await store.insertPaced(poll);
  onePollMs = Math.max(onePollMs, performance.now() - tPoll);
  inserted += HOSTS * GPUS * PROCS;
}
loopDelay.disable();
const insS = (performance.now() - tIns) / 1000;
if (reuse) inserted = HOSTS * GPUS * PROCS * MINUTES; // as written by the run that made the store
store.db.pragma('wal_checkpoint(TRUNCATE)');
const file = join(dir, 'watch.sqlite');
const bytes = statSync(file).size + (existsSync(file + '-wal') ? statSync(file + '-wal').size : 0);
const rows = (store.db.prepare('SELECT count(*) AS n FROM samples').get() as { n: number }).n;

const rssAfterWrites = process.memoryUsage().rss;
const tScan = performance.now();
const floor = store.db.prepare('SELECT count(*), max(mib) FROM samples').raw(true).get();
const scanMs = performance.now() - tScan;

const now = t0 + MINUTES * 60_000;
// As the bot runs it first: in a worker thread, while this thread's event loop is watched. The peak RSS
// here (this thread after the writes + the worker) is the bot's: it never computes a digest in-thread.
const offDelay = monitorEventLoopDelay({ resolution: 5 });
offDelay.enable();
const tOff = performance.now();
const off = await findingsOf(store, {}, now);
const offMs = performance.now() - tOff;
offDelay.disable();
const peakAsBot = process.resourceUsage().maxRSS * 1024;

// Then in this thread, for the time against the scan floor without a thread start or message copy.
const rssBeforeDigest = process.memoryUsage().rss;
const tDig = performance.now();
const { findings } = findingsFromStore(store, {}, now);
const digestMs = performance.now() - tDig;
const rssAfterDigest = process.memoryUsage().rss;
const leaks = findings.filter((f) => f.kind === 'leak').length;
if (off.findings.length !== findings.length) throw new Error(`worker found ${off.findings.length}, this thread ${findings.length}`);

const fmt = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });
if (reuse) console.log(`insert:        skipped: the store in ${dir} was written by an earlier run (${fmt(rows)} rows)`);
else console.log(`insert:        ${fmt(inserted / insS)} process samples/s (${fmt(insS)} s; ${fmt(rows)} rows incl. GPU and host RAM rows)`);
if (!reuse)
  console.log(
    `writes vs chat: the longest event-loop stall while writing was ${fmt(loopDelay.max / 1e6)} ms (p99 ${fmt(loopDelay.percentile(99) / 1e6)} ms); one poll of ${fmt(HOSTS * (GPUS * PROCS + 1))} samples took up to ${fmt(onePollMs)} ms in all, paced`,
  );
console.log(`on disk:       ${fmt(bytes / 2 ** 20)} MiB, ${fmt(bytes / inserted)} bytes per process sample (${fmt(bytes / rows)} per row)`);
console.log(`scan floor:    ${fmt(scanMs)} ms  (SELECT count(*), max(mib) FROM samples -> ${JSON.stringify(floor)})`);
console.log(
  `digest:        ${fmt(digestMs)} ms  (${findings.length} findings, ${leaks} leaks; expected ${Math.floor((HOSTS * GPUS * PROCS + 42) / 50)}), ${fmt(digestMs / scanMs)}x the scan floor`,
);
console.log(`digest, worker: ${fmt(offMs)} ms (as the bot runs it; same findings), longest event-loop stall meanwhile ${fmt(offDelay.max / 1e6)} ms`);
console.log(
  `peak RSS:      ${fmt(peakAsBot / 2 ** 20)} MiB as the bot runs (writes, then the worker digest; RSS after the writes ${fmt(rssAfterWrites / 2 ** 20)} MiB)`,
);
console.log(
  `               ${fmt(process.resourceUsage().maxRSS / 1024)} MiB after the in-thread digest too (RSS ${fmt(rssBeforeDigest / 2 ** 20)} -> ${fmt(rssAfterDigest / 2 ** 20)} MiB across it)`,
);
store.close();
if (!keep) rmSync(dir, { recursive: true, force: true });
