// The last check before a round's samples are stored: every number within the range a real reading has
// (the readings parsers' own ranges, src/readings/limits.ts). The parsers already leave such rows out;
// this holds for every source (SSH, Prometheus, a future one), so one host's impossible value can never
// fail the INSERT that stores every host's round (Postgres integers) or reach the detector.
import { MAX_GPU_INDEX, MAX_GPU_MEMORY_MIB, MAX_HOST_MEMORY_BYTES, MAX_PID, MAX_UTILIZATION_PCT } from '../readings/limits.js';
import { isHostSample, isProcessSample, type Sample } from './types.js';

const within = (v: unknown, min: number, max: number) => typeof v === 'number' && v >= min && v <= max;
const whole = (v: unknown, min: number, max: number) => Number.isInteger(v) && within(v, min, max);
// A Timestamp is an ISO string (what the sources write) or epoch milliseconds (what the type allows):
// both are storable; anything else is not.
const time = (v: unknown) => (typeof v === 'number' ? Number.isFinite(v) && v >= 0 : typeof v === 'string' && Number.isFinite(Date.parse(v)));

/** What is wrong with a sample ("gpuUsedMiB 99999999999"), or null when it can be stored. */
export function sampleProblem(s: Sample): string | null {
  const bad = (field: string, value: unknown) => `${field} ${String(value).slice(0, 40)}`;
  if (!time(s.ts)) return bad('ts', s.ts);
  if (isHostSample(s)) {
    if (!within(s.memTotalBytes, 0, MAX_HOST_MEMORY_BYTES)) return bad('memTotalBytes', s.memTotalBytes);
    if (!within(s.memAvailableBytes, 0, MAX_HOST_MEMORY_BYTES)) return bad('memAvailableBytes', s.memAvailableBytes);
    return null;
  }
  if (!whole(s.gpu, 0, MAX_GPU_INDEX)) return bad('gpu', s.gpu);
  if (!within(s.gpuTotalMiB, 0, MAX_GPU_MEMORY_MIB)) return bad('gpuTotalMiB', s.gpuTotalMiB);
  if (!within(s.gpuUsedMiB, 0, MAX_GPU_MEMORY_MIB)) return bad('gpuUsedMiB', s.gpuUsedMiB);
  if (s.utilizationPct !== null && !within(s.utilizationPct, 0, MAX_UTILIZATION_PCT)) return bad('utilizationPct', s.utilizationPct);
  if (!isProcessSample(s)) return null;
  if (!whole(s.pid, 1, MAX_PID)) return bad('pid', s.pid);
  if (!time(s.processStart)) return bad('processStart', s.processStart);
  if (s.processMiB !== null && !within(s.processMiB, 0, MAX_GPU_MEMORY_MIB)) return bad('processMiB', s.processMiB);
  return null;
}

/** The samples that can be stored, and one line per host naming what was left out of the others. */
export function storableSamples(samples: Sample[]): { kept: Sample[]; leftOut: string[] } {
  const kept: Sample[] = [];
  const byHost = new Map<string, { n: number; first: string }>();
  for (const s of samples) {
    const problem = sampleProblem(s);
    if (problem === null) {
      kept.push(s);
      continue;
    }
    const seen = byHost.get(s.host);
    if (seen) seen.n++;
    else byHost.set(s.host, { n: 1, first: `${'gpu' in s ? `GPU ${String(s.gpu).slice(0, 20)} ` : ''}${problem}` });
  }
  const leftOut = [...byHost].map(([host, { n, first }]) => `${host}: ${n} sample(s) out of range left out (first: ${first})`);
  return { kept, leftOut };
}
