// The leak benches' fleet: HOSTS x GPUS x PROCS processes sampled once a minute, one process in 50 leaking
// ~60 MiB/h in 20 MiB steps after the first two hours, the rest plateauing with an hourly validation
// saw-tooth, and host RAM.
// Synthetic values in the samplers' own Sample shape (deterministic: a seeded LCG), shared by
// bench:digest (SQLite) and bench:digest:pg (Postgres) so both measure the same data.
import type { Sample } from '../src/watch/types.js';

export interface SyntheticFleet {
  hosts: number;
  gpus: number;
  procs: number;
  /** First poll (ms). */
  t0: number;
}

const TOTAL_MIB = 81559;

/** A deterministic generator of the fleet's polls: call poll(m) for m = 0, 1, 2, ... in order. */
export function syntheticFleet(o: SyntheticFleet): { poll: (m: number) => Sample[] } {
  const start = new Date(o.t0 - 3600_000).toISOString();
  let rs = 12345;
  const rnd = () => (rs = (rs * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
  const poll = (m: number): Sample[] => {
    const ts = o.t0 + m * 60_000;
    const out: Sample[] = [];
    for (let h = 0; h < o.hosts; h++) {
      const host = `node${String(h).padStart(4, '0')}`;
      for (let g = 0; g < o.gpus; g++) {
        let used = 600;
        const procs: Sample[] = [];
        for (let p = 0; p < o.procs; p++) {
          const id = (h * o.gpus + g) * o.procs + p;
          const leaks = id % 50 === 7;
          let mib = 18000 + (id % 7) * 1000 + (m % 60 >= 50 ? 1200 : 0);
          if (leaks && m > 120) mib += Math.floor((((m - 120) / 60) * 60) / 20) * 20;
          mib += Math.round(rnd() * 4);
          used += mib;
          procs.push({
            ts,
            host,
            gpu: g,
            gpuTotalMiB: TOTAL_MIB,
            gpuUsedMiB: 0,
            utilizationPct: 95,
            pid: 10000 + id,
            processStart: start,
            user: `user${id % 13}`,
            command: 'python train.py --cfg x.yaml',
            processMiB: mib,
          });
        }
        for (const p of procs) (p as { gpuUsedMiB: number }).gpuUsedMiB = used;
        out.push(...procs);
      }
      out.push({ ts, host, kind: 'host', memTotalBytes: 512 * 2 ** 30, memAvailableBytes: 300 * 2 ** 30 + Math.round(rnd() * 2 ** 20) });
    }
    return out;
  };
  return { poll };
}
