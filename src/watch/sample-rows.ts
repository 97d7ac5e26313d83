// The stores keep samples as compact rows (ts s, host id, gpu, pid, start s, MiB, util): pid 0 is the GPU's
// own reading, pid -1 the host's RAM (start = total MiB, mib = used MiB), any other pid a process on that
// GPU. One decoder turns the rows, in key order, back into Samples for both stores (SQLite and Postgres).
import type { Sample } from './types.js';

export type SampleRow = [ts: number, hostId: number, gpu: number, pid: number, start: number, mib: number | null, util: number | null];

const MiB = 2 ** 20;

export class SampleRowDecoder {
  /** The GPU row waiting for its processes; emitted alone if none follow. */
  private pending: SampleRow | null = null;
  private pendingUsed = false;

  constructor(
    private readonly hostName: (hostId: number) => string,
    private readonly procMeta: (hostId: number, pid: number, start: number) => { user: string; command: string } | undefined,
  ) {}

  /** The Samples this row completes (rows must come in key order: ts, host, gpu, pid, start). */
  *push(row: SampleRow): Generator<Sample> {
    const [ts, h, gpu, pid, start, mib] = row;
    if (pid === 0) {
      yield* this.end();
      this.pending = row;
      this.pendingUsed = false;
      return;
    }
    if (pid === -1) {
      yield { ts: ts * 1000, host: this.hostName(h), kind: 'host', memTotalBytes: start * MiB, memAvailableBytes: (start - (mib ?? 0)) * MiB };
      return;
    }
    const p = this.pending;
    const g = p && p[0] === ts && p[1] === h && p[2] === gpu ? p : null;
    if (g) this.pendingUsed = true;
    const meta = this.procMeta(h, pid, start);
    yield {
      ts: ts * 1000,
      host: this.hostName(h),
      gpu,
      gpuTotalMiB: g ? g[4] : 0,
      gpuUsedMiB: g ? (g[5] ?? 0) : 0,
      utilizationPct: g ? g[6] : null,
      pid,
      processStart: start * 1000,
      user: meta?.user ?? '?',
      command: meta?.command ?? '',
      processMiB: mib,
    };
  }

  /** A GPU row that no process row followed: its reading alone. */
  *end(): Generator<Sample> {
    const p = this.pending;
    if (p && !this.pendingUsed) {
      const [ts, h, gpu, , total, used, util] = p;
      yield { ts: ts * 1000, host: this.hostName(h), gpu, gpuTotalMiB: total, gpuUsedMiB: used ?? 0, utilizationPct: util };
    }
    this.pending = null;
    this.pendingUsed = false;
  }
}
