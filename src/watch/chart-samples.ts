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

/** The samples as columns, yielding to the event loop between slices. */
export async function packSamples(samples: readonly Sample[]): Promise<PackedSamples> {
  const n = samples.length;
  const p: PackedSamples = {
    count: n,
    strings: [],
    kind: new Uint8Array(n),
    ts: new Float64Array(n),
    host: new Uint32Array(n),
    gpu: new Float64Array(n),
    total: new Float64Array(n),
    used: new Float64Array(n),
    util: new Float64Array(n),
    pid: new Float64Array(n),
    start: new Float64Array(n),
    user: new Uint32Array(n),
    command: new Uint32Array(n),
    mib: new Float64Array(n),
  };
  const ids = new Map<string, number>();
  const str = (s: string) => {
    let id = ids.get(s);
    if (id === undefined) {
      id = p.strings.length;
      p.strings.push(s);
      ids.set(s, id);
    }
    return id;
  };
  for (let i = 0; i < n; i++) {
    if (i > 0 && i % PACK_SLICE === 0) await new Promise<void>((r) => setImmediate(r));
    const s = samples[i];
    p.ts[i] = msOf(s.ts);
    p.host[i] = str(s.host);
    if (s.kind === 'host') {
      p.kind[i] = KIND_HOST;
      p.total[i] = s.memTotalBytes;
      p.used[i] = s.memAvailableBytes;
      continue;
    }
    p.gpu[i] = s.gpu;
    p.total[i] = s.gpuTotalMiB;
    p.used[i] = s.gpuUsedMiB;
    p.util[i] = orNaN(s.utilizationPct);
    if (s.pid === undefined) {
      p.kind[i] = KIND_GPU;
      continue;
    }
    p.kind[i] = KIND_PROCESS;
    p.pid[i] = s.pid;
    p.start[i] = msOf(s.processStart);
    p.user[i] = str(s.user);
    p.command[i] = str(s.command);
    p.mib[i] = orNaN(s.processMiB);
  }
  return p;
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
