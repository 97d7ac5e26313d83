// Samples sent to a chart child (from Postgres, or an in-memory store) as columns of typed arrays and one
// string table: copying a week of one host's 8x8 samples (655k objects) through structured clone held
// the bot's event loop for seconds, typed arrays copy as bytes. Packing yields to the event loop every
// PACK_SLICE samples, so no slice of it holds a chat reply up for long.
import type { Sample } from './types.js';

const PACK_SLICE = 20_000;
const KIND_GPU = 0;
const KIND_PROCESS = 1;
const KIND_HOST = 2;

export interface PackedSamples {
  count: number;
  strings: string[];
  kind: Uint8Array;
  ts: Float64Array;
  host: Uint32Array;
  gpu: Float64Array;
  /** memory.total (GPU) or memTotalBytes (host RAM). */
  total: Float64Array;
  /** memory.used (GPU) or memAvailableBytes (host RAM). */
  used: Float64Array;
  /** NaN: null. */
  util: Float64Array;
  pid: Float64Array;
  start: Float64Array;
  user: Uint32Array;
  command: Uint32Array;
  /** NaN: null (the driver's [N/A]). */
  mib: Float64Array;
}

const msOf = (ts: string | number) => (typeof ts === 'number' ? ts : Date.parse(ts));
const orNaN = (v: number | null | undefined) => (typeof v === 'number' ? v : NaN);
const orNull = (v: number) => (Number.isNaN(v) ? null : v);

/** The columns of one PackedSamples, grown by doubling as samples are added. */
const COLUMNS = ['ts', 'gpu', 'total', 'used', 'util', 'pid', 'start', 'mib'] as const;

/**
 * Packs samples one at a time, so a backend read in batches (Postgres) never holds them all as objects:
 * a week of one 8x8 host is 655k objects (about 200 bytes each) against 81 bytes of columns per sample.
 */
export class SamplePacker {
  private n = 0;
  private cap: number;
  private p: PackedSamples;
  private readonly ids = new Map<string, number>();

  constructor(capacity = 1024) {
    this.cap = Math.max(1, capacity);
    this.p = SamplePacker.columns(this.cap, []);
  }

  private static columns(cap: number, strings: string[]): PackedSamples {
    return {
      count: 0,
      strings,
      kind: new Uint8Array(cap),
      ts: new Float64Array(cap),
      host: new Uint32Array(cap),
      gpu: new Float64Array(cap),
      total: new Float64Array(cap),
      used: new Float64Array(cap),
      util: new Float64Array(cap),
      pid: new Float64Array(cap),
      start: new Float64Array(cap),
      user: new Uint32Array(cap),
      command: new Uint32Array(cap),
      mib: new Float64Array(cap),
    };
  }

  get count(): number {
    return this.n;
  }

  private str(s: string): number {
    let id = this.ids.get(s);
    if (id === undefined) {
      id = this.p.strings.length;
      this.p.strings.push(s);
      this.ids.set(s, id);
    }
    return id;
  }

  private grow(): void {
    const old = this.p;
    this.cap *= 2;
    const p = SamplePacker.columns(this.cap, old.strings);
    p.kind.set(old.kind);
    p.host.set(old.host);
    p.user.set(old.user);
    p.command.set(old.command);
    for (const c of COLUMNS) p[c].set(old[c]);
    this.p = p;
  }

  add(s: Sample): void {
    if (this.n === this.cap) this.grow();
    const p = this.p;
    const i = this.n++;
    p.ts[i] = msOf(s.ts);
    p.host[i] = this.str(s.host);
    if (s.kind === 'host') {
      p.kind[i] = KIND_HOST;
      p.total[i] = s.memTotalBytes;
      p.used[i] = s.memAvailableBytes;
      return;
    }
    p.gpu[i] = s.gpu;
    p.total[i] = s.gpuTotalMiB;
    p.used[i] = s.gpuUsedMiB;
    p.util[i] = orNaN(s.utilizationPct);
    if (s.pid === undefined) {
      p.kind[i] = KIND_GPU;
      return;
    }
    p.kind[i] = KIND_PROCESS;
    p.pid[i] = s.pid;
    p.start[i] = msOf(s.processStart);
    p.user[i] = this.str(s.user);
    p.command[i] = this.str(s.command);
    p.mib[i] = orNaN(s.processMiB);
  }

  /** The columns cut to the samples added (copies: a cut view would still send the whole buffer to the child). */
  finish(): PackedSamples {
    const p = this.p;
    const n = this.n;
    const out: PackedSamples = {
      count: n,
      strings: p.strings,
      kind: p.kind.slice(0, n),
      ts: p.ts.slice(0, n),
      host: p.host.slice(0, n),
      gpu: p.gpu.slice(0, n),
      total: p.total.slice(0, n),
      used: p.used.slice(0, n),
      util: p.util.slice(0, n),
      pid: p.pid.slice(0, n),
      start: p.start.slice(0, n),
      user: p.user.slice(0, n),
      command: p.command.slice(0, n),
      mib: p.mib.slice(0, n),
    };
    return out;
  }
}

/** The samples as columns, yielding to the event loop between slices. */
export async function packSamples(samples: readonly Sample[]): Promise<PackedSamples> {
  const packer = new SamplePacker(samples.length);
  for (let i = 0; i < samples.length; i++) {
    if (i > 0 && i % PACK_SLICE === 0) await new Promise<void>((r) => setImmediate(r));
    packer.add(samples[i]);
  }
  return packer.finish();
}

/** Sample `i` of the columns, as the store would give it (times in epoch ms). */
export function unpackSample(p: PackedSamples, i: number): Sample {
  const host = p.strings[p.host[i]];
  if (p.kind[i] === KIND_HOST) return { ts: p.ts[i], host, kind: 'host', memTotalBytes: p.total[i], memAvailableBytes: p.used[i] };
  const gpu = { ts: p.ts[i], host, gpu: p.gpu[i], gpuTotalMiB: p.total[i], gpuUsedMiB: p.used[i], utilizationPct: orNull(p.util[i]) };
  if (p.kind[i] === KIND_GPU) return gpu;
  return { ...gpu, pid: p.pid[i], processStart: p.start[i], user: p.strings[p.user[i]], command: p.strings[p.command[i]], processMiB: orNull(p.mib[i]) };
}

/** The store's samplesSince(sinceMs, host) over packed samples (whole seconds, as the stores compare). */
export function* packedSamplesSince(p: PackedSamples, sinceMs: number, host: string): Generator<Sample> {
  const fromMs = Math.floor(sinceMs / 1000) * 1000;
  const hostId = p.strings.indexOf(host);
  if (hostId < 0) return;
  for (let i = 0; i < p.count; i++) if (p.host[i] === hostId && p.ts[i] >= fromMs) yield unpackSample(p, i);
}
