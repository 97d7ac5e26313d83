// Charts computed and drawn in a child process (chart-render-child.ts): the store read, the series, the
// detector and resvg all run there, so a week-long chart never holds up another user's reply, and a
// native crash in the renderer (a Rust panic aborts its process) ends the child, not the bot. Each child
// has a time budget (killed past it) and a V8 heap budget; a few run at once, more wait, and past that a
// chart is refused. A chart that is not drawn falls back to its text.
import { fork, type ChildProcess } from 'node:child_process';
import { availableParallelism, setPriority } from 'node:os';
import { fileURLToPath } from 'node:url';
import { t, type MessageKey } from '../core/i18n.js';
import type { Reply, ReplyFile } from '../core/reply.js';
import type { ChartStyle } from './chart-data.js';
import type { ChartRequest } from './chart-store.js';
import { findingKey, type ChartOf } from './digest.js';
import type { PackedSamples } from './chart-samples.js';
import type { DetectorOptions, Finding, Sample } from './types.js';

/**
 * Where a child reads samples from: a store's file, opened in the child with its own connection by the
 * module at `reader` (a URL the backend names: SQLite's src/storage/sqlite/chart-reader.ts), or samples
 * sent to it as columns (Postgres, an in-memory store). The child knows no backend.
 */
export type SampleSource = { file: string; reader: string } | { packed: PackedSamples };

/** One host's samples since a time, in time order, as a chart reads them in the child. */
export interface ChartSamples {
  samplesSince(sinceMs: number, host: string): Iterable<Sample>;
  close(): void;
}

/** What the module a file source names exports: its store's file opened for the chart child. */
export interface ChartReaderModule {
  openChartSamples(file: string): ChartSamples;
}

export type ChartJob =
  | {
      kind: 'gpu';
      source: SampleSource;
      req: ChartRequest;
      style: ChartStyle;
      detector: Partial<DetectorOptions>;
      known: string[] | undefined;
      now: number;
    }
  | { kind: 'findings'; source: SampleSource; findings: Finding[]; style: ChartStyle; now: number };

export type ChartChildMessage = { id: number } & (
  | { type: 'reply'; reply: Reply }
  | { type: 'png'; index: number; filename: string; data: Uint8Array }
  | { type: 'skipped'; index: number; problem: string }
  | { type: 'done'; rssBytes: number }
  | { type: 'error'; message: string }
);

/** Why a chart was not drawn. */
export type ChartFailure = 'crashed' | 'timeout' | 'busy' | 'geometry' | 'failed';

const WHY: Record<ChartFailure, MessageKey> = {
  crashed: 'chart.why.crashed',
  timeout: 'chart.why.timeout',
  busy: 'chart.why.busy',
  geometry: 'chart.why.geometry',
  failed: 'chart.why.failed',
};

export interface ChartBudget {
  /** A job running longer than this (the store read, the detector and every chart of it) has its child killed. */
  timeoutMs: number;
  /** V8 heap of a child (--max-old-space-size). */
  maxOldSpaceMb: number;
  /** A child whose resident memory is above this after a job is let go; the next job starts a fresh one. */
  maxRssMb: number;
}

export const DEFAULT_CHART_BUDGET: ChartBudget = { timeoutMs: 120_000, maxOldSpaceMb: 1536, maxRssMb: 1024 };
/**
 * Children at once, and jobs that may wait for one; a job past both is refused (busy). One core is left
 * to the bot's own event loop: on a 2-core machine two week-long charts at once took both cores, and
 * every ack waited for the scheduler (bench:acks).
 */
export const MAX_CHART_CHILDREN = Math.max(1, Math.min(2, availableParallelism() - 1));
export const MAX_CHART_WAITING = 8;
/** An idle child is let go after this: the libraries stay loaded between charts asked close together. */
const CHILD_IDLE_MS = 5 * 60_000;

/** A child's scheduling priority (nice 19, the lowest): its work yields the CPU to the bot's acks. */
export const CHILD_NICE = 19;

/** The child's entry: dist/chart-render-child.mjs beside the bundle, chart-render-child-dev.mjs (tsx) from the sources. */
function childEntry(): string {
  const entry = import.meta.url.endsWith('.ts') ? './chart-render-child-dev.mjs' : './chart-render-child.mjs';
  return fileURLToPath(new URL(entry, import.meta.url));
}

interface PooledChild {
  proc: ChildProcess;
  maxOldSpaceMb: number;
  idleTimer?: NodeJS.Timeout;
  /** The job running in it: its messages go there, and its end (or the child's) settles it. */
  job?: { id: number; onMessage: (m: ChartChildMessage) => void; end: (outcome: ChartFailure | null, rssBytes?: number) => void };
}

const idle: PooledChild[] = [];
/**
 * One child started ahead of need, so a chart request takes a process that exists instead of forking
 * one: fork runs on the bot's thread, and from a ~240 MB bot it held the event loop 55-320 ms
 * (bench:acks), every other user's ack with it. Kept while no idle child is (an idle one serves the next
 * request): started a while after the leak watch starts, after a job that left no child ready, and when
 * the last idle child is let go (5 minutes after its last chart, a quiet moment). It never expires.
 */
let spare: PooledChild | undefined;
let spareTimer: NodeJS.Timeout | undefined;
let spareBudgetMb: number | undefined;
/** How long after the watch starts, or after a job left no child ready, the spare is started. */
const SPARE_AFTER_MS = 1000;
let running = 0;
const waiting: (() => void)[] = [];
let nextJobId = 1;

/** A slot to run a job in, or false when too many jobs wait already. */
function acquire(): Promise<boolean> {
  if (running < MAX_CHART_CHILDREN) {
    running++;
    return Promise.resolve(true);
  }
  if (waiting.length >= MAX_CHART_WAITING) return Promise.resolve(false);
  return new Promise((resolve) =>
    waiting.push(() => {
      running++;
      resolve(true);
    }),
  );
}

function release(): void {
  running--;
  waiting.shift()?.();
}

function spawnChild(maxOldSpaceMb: number): PooledChild {
  const proc = fork(childEntry(), [], {
    // Not the parent's flags (a test runner's loaders, an inspector): only the heap budget.
    execArgv: [`--max-old-space-size=${maxOldSpaceMb}`],
    serialization: 'advanced',
    // Its output (a panic's message) is dropped: it may quote samples.
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
    // A session of its own (setsid). Linux schedules each session as one group (autogroup) and nice
    // orders only the threads within a group: a nice-19 child in the bot's session made the bot's group
    // a CPU hog next to the machine's other work, and every ack waited for a CPU (bench:acks: the bot's
    // stalls were time runnable, not running). Apart, the bot's group stays light and is run first when
    // a request wakes it; the chart's group gets a session's fair share, so charts still finish on a
    // busy machine. The child still ends with the bot: it exits when its channel closes. Not on
    // Windows, where a detached child gets a console of its own.
    detached: process.platform !== 'win32',
  });
  try {
    // Its main thread; the child renices the threads node started before this (chart-render-child.ts).
    if (proc.pid !== undefined) setPriority(proc.pid, CHILD_NICE);
  } catch {
    // A platform that refuses it (EACCES on some Windows setups) still draws the chart.
  }
  const child: PooledChild = { proc, maxOldSpaceMb };
  proc.on('message', (m: ChartChildMessage) => {
    const job = child.job;
    if (!job || m.id !== job.id) return;
    if (m.type === 'done') job.end(null, m.rssBytes);
    else if (m.type === 'error') job.end('failed');
    else job.onMessage(m);
  });
  proc.once('error', () => {
    child.job?.end('failed');
    proc.kill('SIGKILL');
  });
  // 'close', not 'exit': by then every message it sent has been read. A job still in it crashed with it.
  proc.once('close', () => {
    forget(child);
    child.job?.end('crashed');
  });
  // An idle child never keeps the bot from exiting (it ends when its channel closes).
  proc.unref();
  (proc.channel as { unref?: () => void } | undefined)?.unref?.();
  return child;
}

function forget(child: PooledChild): void {
  clearTimeout(child.idleTimer);
  if (spare === child) spare = undefined;
  const i = idle.indexOf(child);
  if (i >= 0) idle.splice(i, 1);
}

function letGo(child: PooledChild): void {
  forget(child);
  child.proc.kill('SIGKILL');
}

/**
 * Keeps one chart child ready (see `spare`), started `afterMs` from now unless one is ready or on its
 * way; charts with another heap budget than the spare's fork their own.
 */
export function keepChartChildReady(budget: ChartBudget = DEFAULT_CHART_BUDGET, afterMs = SPARE_AFTER_MS): void {
  spareBudgetMb = budget.maxOldSpaceMb;
  if (spare || spareTimer) return;
  spareTimer = setTimeout(() => {
    spareTimer = undefined;
    if (spare || idle.length > 0 || spareBudgetMb === undefined) return;
    try {
      spare = spawnChild(spareBudgetMb);
    } catch {
      // Not started (no memory, no pid left): the next chart forks its own, as without a spare.
    }
  }, afterMs);
  spareTimer.unref();
}

/** A spare once the watch asked for one (keepChartChildReady), with the budget it gave. */
function keepSpare(): void {
  if (spareBudgetMb !== undefined) keepChartChildReady({ ...DEFAULT_CHART_BUDGET, maxOldSpaceMb: spareBudgetMb });
}

/** The spare child for a job of this budget, if one is ready (it is no longer the spare). */
function takeSpare(maxOldSpaceMb: number): PooledChild | undefined {
  const ready = spare;
  if (!ready || ready.maxOldSpaceMb !== maxOldSpaceMb || !ready.proc.connected) return undefined;
  spare = undefined;
  return ready;
}

/**
 * Runs one job in a child process, handing each of its messages to `onMessage` as it comes. Resolves
 * with null when the job finished, or with why it did not: the child crashed (ended mid-job), ran past
 * the time budget (killed), could not start, or the job was refused because too many charts wait.
 */
export async function runChartJob(
  job: ChartJob,
  onMessage: (m: ChartChildMessage) => void,
  budget: ChartBudget = DEFAULT_CHART_BUDGET,
): Promise<ChartFailure | null> {
  if (!(await acquire())) return 'busy';
  try {
    // A turn of the event loop first: a chat adapter acks a command after one turn (setImmediate), and
    // starting a child (fork, synchronous: 10-130 ms measured, more on a loaded machine) within the
    // command's first microtasks held that ack, and every other request's, until the child existed.
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    let child = idle.pop();
    if (child && child.maxOldSpaceMb !== budget.maxOldSpaceMb) {
      letGo(child);
      child = undefined;
    }
    if (child) clearTimeout(child.idleTimer);
    else child = takeSpare(budget.maxOldSpaceMb);
    if (!child) {
      try {
        child = spawnChild(budget.maxOldSpaceMb);
      } catch {
        return 'failed';
      }
    }
    const inChild = child;
    const id = nextJobId++;
    const outcome = await new Promise<{ failure: ChartFailure | null; rssBytes?: number }>((resolve) => {
      const timer = setTimeout(() => {
        end('timeout');
        letGo(inChild);
      }, budget.timeoutMs);
      const end = (failure: ChartFailure | null, rssBytes?: number) => {
        if (inChild.job?.id !== id) return;
        inChild.job = undefined;
        clearTimeout(timer);
        resolve({ failure, rssBytes });
      };
      inChild.job = { id, onMessage, end };
      inChild.proc.send({ id, job }, (e) => {
        if (!e) return;
        end('failed');
        letGo(inChild);
      });
    });
    // Back to the pool only after a clean job, and while its memory stays within the budget.
    if (outcome.failure === null && inChild.proc.connected && (outcome.rssBytes ?? 0) <= budget.maxRssMb * 1024 * 1024) {
      inChild.idleTimer = setTimeout(() => {
        letGo(inChild);
        keepSpare();
      }, CHILD_IDLE_MS);
      inChild.idleTimer.unref();
      idle.push(inChild);
    } else if (outcome.failure !== 'crashed') letGo(inChild);
    keepSpare(); // a child let go (crashed, timed out, too large) leaves none ready
    return outcome.failure;
  } finally {
    release();
  }
}

const pngFile = (filename: string, data: Uint8Array): ReplyFile => ({
  filename,
  contentType: 'image/png',
  data: Buffer.from(data.buffer, data.byteOffset, data.byteLength),
});

/**
 * `/gpu chart` computed and drawn in a child: the reply with its PNG, or, where the chart could not be
 * drawn, the same text with a line saying why (and where the text itself could not be computed, why).
 */
export async function gpuChartInChild(
  source: SampleSource,
  req: ChartRequest,
  style: ChartStyle,
  detector: Partial<DetectorOptions>,
  known: string[] | undefined,
  now = Date.now(),
  budget: ChartBudget = DEFAULT_CHART_BUDGET,
): Promise<Reply> {
  let text: Reply | undefined;
  let file: ReplyFile | undefined;
  let skipped = false;
  const failure = await runChartJob(
    { kind: 'gpu', source, req, style, detector, known, now },
    (m) => {
      if (m.type === 'reply') text = m.reply;
      else if (m.type === 'png') file = pngFile(m.filename, m.data);
      else if (m.type === 'skipped') skipped = true;
    },
    budget,
  );
  const loc = req.locale;
  const why = failure ?? (skipped ? 'geometry' : null);
  if (!text)
    return {
      title: t(loc, 'chart.title', { host: req.host }),
      severity: 'warning',
      sections: [{ text: t(loc, 'chart.failed', { host: req.host, why: t(loc, WHY[why ?? 'failed']) }) }],
    };
  if (file && !failure) return { ...text, files: [file] };
  if (!why) return text;
  return { ...text, sections: [...text.sections, { text: t(loc, 'chart.notDrawn', { host: req.host, why: t(loc, WHY[why]) }) }] };
}

/**
 * A digest's (and its owner messages') charts of these findings, drawn in one child before the digest
 * is composed: the ChartOf the digest calls then only looks them up. A finding whose chart was not drawn
 * has none (its digest entry is text); why goes to onError.
 */
export async function findingChartsInChild(
  source: SampleSource,
  findings: readonly Finding[],
  style: ChartStyle,
  now: number,
  onError: (e: unknown) => void = () => {},
  budget: ChartBudget = DEFAULT_CHART_BUDGET,
): Promise<ChartOf> {
  const unique = [...new Map(findings.map((f) => [findingKey(f), f])).values()];
  const files = new Map<string, ReplyFile>();
  if (unique.length) {
    const problems: string[] = [];
    const failure = await runChartJob(
      { kind: 'findings', source, findings: unique, style, now },
      (m) => {
        if (m.type === 'png') files.set(findingKey(unique[m.index]), pngFile(m.filename, m.data));
        else if (m.type === 'skipped' && m.problem !== 'no samples') problems.push(m.problem);
      },
      budget,
    );
    if (failure || problems.length)
      onError(
        new Error(
          `digest charts: ${failure ? `${failure}; ` : ''}${files.size} of ${unique.length} drawn${problems.length ? ` (${problems.join('; ')})` : ''}`,
        ),
      );
  }
  return (f) => files.get(findingKey(f));
}
