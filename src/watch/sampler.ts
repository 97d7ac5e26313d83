// Samples every registered host through the hosts service (the existing SSH pool) into the store.
// A host that fails writes nothing for that poll: a gap the detector reads as unknown, never as freed.
import type { HostsService, HostStatusResult } from '../core/services.js';
import type { WatchState } from './state.js';
import type { Sample } from './types.js';
import { HIDDEN_PID_TEXT } from '../hosts/parse.js';
import { storableSamples } from './sample-ranges.js';

/** A process nvidia-smi listed whose pid the host's ps does not know (a container's pid namespace). */
export interface HiddenProcess {
  gpu: number;
  pid: number;
  memoryMiB: number | null;
  /** What `status` shows in its command cell for it (why it is hidden): `/gpu watch` shows the same. */
  text: string;
}

/** Names per status call: SourcedHostsService takes the first 256 of a list (the cap on what a chat request may name). */
export const MAX_NAMES_PER_CALL = 256;

/** Where a round's samples go: the SQLite store, or Postgres shared by replicas. */
export type SampleSink = Pick<WatchState, 'insertPaced'>;

/** Which of the registered hosts this process samples (all of them, unless replicas share the fleet by leases). */
export type HostPicker = (names: string[]) => Promise<string[]> | string[];

export async function sampleOnce(
  hosts: HostsService,
  store: SampleSink,
  now = Date.now(),
  pick?: HostPicker,
): Promise<{
  ok: number;
  failed: number;
  samples: number;
  status: HostStatusResult[];
  hidden: Map<string, HiddenProcess[]>;
  /** One line per host whose samples with values out of range were left out. */
  leftOut: string[];
}> {
  const all = (await hosts.list()).map((h) => h.name);
  const names = pick ? await pick(all) : all;
  // Another replica holds every host's lease: nothing to sample this round (an empty list would mean "all").
  if (!names.length) return { ok: 0, failed: 0, samples: 0, status: [], hidden: new Map(), leftOut: [] };
  // One exec per host: the status command carries `free -b` too. At background priority where the
  // service has one, so a poll stuck on dead hosts never makes a chat request wait.
  // The hosts service answers at most 256 named hosts a call (a chat request's cap): a bigger fleet is
  // asked in slices, all at once (hosts of one Prometheus group still share one query).
  const slices: string[][] = [];
  for (let i = 0; i < names.length; i += MAX_NAMES_PER_CALL) slices.push(names.slice(i, i + MAX_NAMES_PER_CALL));
  const status = (await Promise.all(slices.map((s) => (hosts.statusInBackground ? hosts.statusInBackground(s) : hosts.status(s))))).flat();
  const ts = new Date(now).toISOString();
  const out: Sample[] = [];
  let ok = 0;
  let failed = 0;
  const hidden = new Map<string, HiddenProcess[]>();
  for (const st of status) {
    if (!st.ok) {
      failed++;
      continue;
    }
    ok++;
    hidden.set(
      st.name,
      st.processes
        .filter((p) => p.user === null && p.gpuIndex !== null)
        .map((p) => ({ gpu: p.gpuIndex!, pid: p.pid, memoryMiB: p.memoryMiB, text: p.command ?? HIDDEN_PID_TEXT })),
    );
    const withProcs = new Set<number>();
    for (const p of st.processes) {
      const g = st.gpus.find((x) => x.index === p.gpuIndex);
      if (!g || g.memoryTotalMiB === null || g.memoryUsedMiB === null) continue;
      // From this poll's clock (the store folds the second-or-so wobble between polls into one start).
      const start = p.elapsedSeconds != null ? new Date(now - p.elapsedSeconds * 1000).toISOString() : (p.startedAt ?? null);
      // Without a start time (a container's pid, invisible to ps) a reused pid cannot be told apart:
      // such a GPU is watched as a whole instead (the GPU-level sample below).
      if (!start) continue;
      withProcs.add(g.index);
      out.push({
        ts,
        host: st.name,
        gpu: g.index,
        gpuTotalMiB: g.memoryTotalMiB,
        gpuUsedMiB: g.memoryUsedMiB,
        utilizationPct: g.utilizationPct,
        pid: p.pid,
        processStart: start,
        user: p.user ?? '?',
        command: p.command ?? '',
        processMiB: p.memoryMiB,
      });
    }
    for (const g of st.gpus)
      if (!withProcs.has(g.index) && g.memoryTotalMiB !== null && g.memoryUsedMiB !== null && !g.error)
        out.push({ ts, host: st.name, gpu: g.index, gpuTotalMiB: g.memoryTotalMiB, gpuUsedMiB: g.memoryUsedMiB, utilizationPct: g.utilizationPct });
    if (st.memory && st.memory.availableBytes !== null)
      out.push({ ts, host: st.name, kind: 'host', memTotalBytes: st.memory.totalBytes, memAvailableBytes: st.memory.availableBytes });
  }
  // One host's impossible value is left out rather than failing the one write that stores every host's round.
  const { kept, leftOut } = storableSamples(out);
  await store.insertPaced(kept);
  return { ok, failed, samples: kept.length, status, hidden, leftOut };
}

/** Polls every intervalSec; a poll still running when the next is due is skipped, never overlapped. */
export class Sampler {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  /** Runs after each completed round with its readings (the `/gpu notify` check), before the next can start. */
  afterRound: ((status: HostStatusResult[], now: number) => Promise<unknown>) | null = null;
  /**
   * Per host, the processes of its last answered round that ps did not know. Not stored with the
   * samples (they have no start time to name them by): `/gpu watch` uses it to say what a GPU-level
   * series holds, as `status` does.
   */
  readonly hidden = new Map<string, HiddenProcess[]>();
  /** Set when replicas share the hosts (sampling leases): only the hosts it returns are sampled. */
  pick?: HostPicker;
  constructor(
    private hosts: HostsService,
    private store: SampleSink,
    private intervalSec: number,
    private onError: (e: unknown) => void = () => {},
  ) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.tick(), this.intervalSec * 1000);
    this.timer.unref();
    void this.tick();
  }

  /** One round, unless one is still running: false then (nothing was done). */
  async tick(now = Date.now()): Promise<boolean> {
    if (this.running) return false;
    this.running = true;
    try {
      // A failed write is reported and the round goes on: the notify check reads its readings, not the store.
      const sink: SampleSink = {
        insertPaced: (samples) =>
          Promise.resolve()
            .then(() => this.store.insertPaced(samples))
            .catch((e: unknown) => this.onError(e)),
      };
      const round = await sampleOnce(this.hosts, sink, now, this.pick);
      for (const [host, procs] of round.hidden) this.hidden.set(host, procs);
      for (const line of round.leftOut) this.onError(new Error(`leak watch: ${line}`));
      await this.afterRound?.(round.status, now);
    } catch (e) {
      this.onError(e);
    } finally {
      this.running = false;
    }
    return true;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}
