// Table-driven check of every fact that test/fixtures/readings/fixtures.json (a copy of the project's shared fixtures) states about each real
// nvidia-smi / free output, read through parseReadings (what the CLI uses).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { parseReadings } from '../../src/readings/index.js';
import { parseSmiCsv } from '../../src/readings/nvidia-smi-csv.js';
import type { Readings } from '../../src/readings/types.js';

interface Fixture {
  file: string;
  kind: string;
  command?: string;
  gpus?: number | null;
  notes?: string;
  facts: Record<string, unknown>;
}

const fixturesDir = new URL('../fixtures/readings/', import.meta.url);
const indexFile = new URL('fixtures.json', fixturesDir);

/** Facts that describe something outside the stored file, so no parser can read them from it. */
const NOT_IN_FILE: Record<string, string> = {
  timing_real_s: 'the `time` wrapper output ("real 0m0,641s") is mentioned in the notes but is not part of the stored CSV',
};

const KiB = 1024;
const MiB = KiB ** 2;
const GiB = KiB ** 3;
const FACT_UNITS: Record<string, number> = { bytes: 1, kib: KiB, mib: MiB, gib: GiB, mb_si: 1e6, gb_si: 1e9 };
const HOST_FIELDS: Record<string, keyof NonNullable<Readings['hostMemory']>> = {
  mem_total: 'totalBytes',
  mem_available: 'availableBytes',
  mem_used: 'usedBytes',
  mem_free: 'freeBytes',
  swap_total: 'swapTotalBytes',
  // Old procps: the free column of the "-/+ buffers/cache" row is the memory available.
  buffers_cache_adjusted_free: 'availableBytes',
};
const GPU_FIELDS = { used: 'memoryUsedMiB', total: 'memoryTotalMiB', free: 'memoryFreeMiB', reserved: 'memoryReservedMiB' } as const;

/** How far a value printed by this free command may be from the true one: one printed step for -g / -h. */
function printedRounding(command: string | undefined, readings: Readings): number {
  const flags = command ?? '';
  if (/(^|\s)-[a-z]*g\b|--gibi/.test(flags)) return GiB;
  if (/(^|\s)-[a-z]*h\b|--human/.test(flags)) return readings.hostMemory?.resolutionBytes ?? GiB;
  return 0;
}

function checkFact(fx: Fixture, text: string, r: Readings, key: string, want: unknown): void {
  let m: RegExpExecArray | null;
  if ((m = /^gpu(\d+)_mem_(used|total|free|reserved)_mib$/.exec(key))) {
    const gpu = r.gpus.find((g) => g.index === Number(m![1]));
    expect(gpu, `GPU ${m[1]} present`).toBeDefined();
    expect(gpu![GPU_FIELDS[m[2] as keyof typeof GPU_FIELDS]]).toBe(want);
  } else if (key === 'processes') {
    expect(r.processes).toHaveLength(want as number);
  } else if (key === 'process_mem_mib') {
    const got = r.processes.map((p) => p.memoryMiB).sort((a, b) => (a ?? 0) - (b ?? 0));
    expect(got).toEqual([...(want as number[])].sort((a, b) => a - b));
  } else if (key === 'mig_devices') {
    expect(r.gpus.reduce((n, g) => n + (g.mig?.length ?? 0), 0)).toBe(want);
  } else if (key === 'err_gpu_index') {
    expect(r.gpus.filter((g) => g.error !== null).map((g) => g.index)).toEqual([want]);
  } else if (key === 'columns') {
    expect(parseSmiCsv(text).tables[0]?.fields).toHaveLength(want as number);
  } else if ((m = /^(mem_total|mem_available|mem_used|mem_free|swap_total|buffers_cache_adjusted_free)_(bytes|kib|mib|gib|mb_si|gb_si)$/.exec(key))) {
    const got = r.hostMemory?.[HOST_FIELDS[m[1]]];
    const wantBytes = (want as number) * FACT_UNITS[m[2]];
    expect(typeof got, `${key} is a number`).toBe('number');
    expect(Math.abs((got as number) - wantBytes)).toBeLessThanOrEqual(printedRounding(fx.command, r));
  } else {
    throw new Error(`no check written for fact "${key}" of ${fx.file}`);
  }
}

{
  const fixtures = JSON.parse(readFileSync(indexFile, 'utf8')) as Fixture[];
  describe('readings fixtures', () => {
    for (const fx of fixtures) {
      describe(fx.file, () => {
        const text = readFileSync(new URL(fx.file, fixturesDir), 'utf8');
        // Parsed in each test, not once here: code run while tests are collected counts as covered by all
        // of them, and mutation testing would run every test for every mutant.
        const readings = () => parseReadings(text);

        for (const [key, want] of Object.entries(fx.facts ?? {})) {
          if (NOT_IN_FILE[key]) it.skip(`${key} = ${JSON.stringify(want)} (${NOT_IN_FILE[key]})`, () => {});
          else it(`${key} = ${JSON.stringify(want)}`, () => checkFact(fx, text, readings(), key, want));
        }

        const listsGpus = fx.kind === 'nvidia-smi-table' || fx.kind === 'nvidia-smi-xml' || /--query-gpu/.test(fx.command ?? '');
        if (listsGpus && typeof fx.gpus === 'number') {
          it(`lists ${fx.gpus} GPU(s)`, () => expect(readings().gpus).toHaveLength(fx.gpus as number));
        }
        if (fx.kind === 'nvidia-smi-error') {
          it('reports the nvidia-smi error text and no GPUs', () => {
            expect(readings().smiErrors.length).toBeGreaterThan(0);
            expect(readings().gpus).toHaveLength(0);
            for (const line of readings().smiErrors) expect(text).toContain(line);
          });
        }
        if (fx.kind === 'free') {
          it('yields host memory', () => expect(readings().hostMemory?.totalBytes).toBeGreaterThan(0));
        } else {
          it('yields no host memory', () => expect(readings().hostMemory).toBeNull());
        }
      });
    }
  });
}
