// rocm-smi (AMD GPUs) read from real outputs pasted in public threads (test/fixtures/rocm-smi/README.md says
// where each comes from): --json and the text form for memory and utilisation, and --showpids' KFD table in its
// tab- and space-separated forms.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRocmSmiGpus, parseRocmSmiPids } from '../../src/readings/rocm-smi.js';

const fixture = (name: string) => readFileSync(resolve(import.meta.dirname, '../fixtures/rocm-smi', name), 'utf8');

describe('rocm-smi', () => {
  it('--json (RX 7900 XT): name, memory in MiB from bytes, utilisation', () => {
    expect(parseRocmSmiGpus(fixture('marimo-9237-rx7900xt-showproductname-showuse-showmeminfo-vram.json'))).toEqual([
      {
        index: 0,
        name: 'Radeon RX 7900 XT',
        uuid: null,
        busId: null,
        memoryUsedMiB: Math.round(27856896 / 2 ** 20),
        memoryTotalMiB: Math.round(21458059264 / 2 ** 20),
        utilizationPct: 0,
        temperatureC: null,
        error: null,
      },
    ]);
  });

  it('the text form (2023): GPU[N] : key: value lines', () => {
    const [g] = parseRocmSmiGpus(fixture('rocm-build-1909-showmeminfo-vram-2023.txt'));
    expect(g).toMatchObject({
      index: 0,
      memoryTotalMiB: Math.round(4278190080 / 2 ** 20),
      memoryUsedMiB: Math.round(108814336 / 2 ** 20),
      utilizationPct: null,
    });
  });

  it('--showpids, tab-separated (MI300A, 2025) and space-separated, VRAM in bytes or UNKNOWN', () => {
    expect(parseRocmSmiPids(fixture('rocm-build-4411-mi300a-showpids-2025.txt'), 1)).toEqual([
      { gpuIndex: 0, gpuUuid: null, pid: 1684258, name: 'kfd_open', memoryMiB: 0, type: 'C' },
    ]);
    const spaced = parseRocmSmiPids(fixture('roc-smi-60-showpids-2025.txt'), 1);
    expect(spaced).toHaveLength(8);
    expect(spaced.find((p) => p.pid === 1168514)).toMatchObject({ name: 'pt_main_thread', memoryMiB: Math.round(177386942464 / 2 ** 20) });
    const unknown = parseRocmSmiPids(fixture('rocm-smi-lib-166-showpids-unknown-2024.txt'), 1);
    expect(unknown.map((p) => [p.pid, p.name, p.memoryMiB])).toEqual([
      [55573, 'gmx_mpi', null],
      [55571, 'gmx_mpi', null],
      [55574, 'gmx_mpi', null],
      [55572, 'gmx_mpi', null],
    ]);
  });

  it('GPU(s) is a count, not an index: with several GPUs a process is on no GPU', () => {
    expect(parseRocmSmiPids(fixture('roc-smi-60-showpids-2025.txt'), 4).every((p) => p.gpuIndex === null)).toBe(true);
  });

  it('refuses what is not rocm-smi output: other JSON, a broken document, huge values', () => {
    expect(parseRocmSmiGpus('{"gpu": [1, 2]}')).toEqual([]);
    expect(parseRocmSmiGpus('{"card0": {')).toEqual([]);
    expect(parseRocmSmiGpus('rocm-smi: command not found')).toEqual([]);
    const huge = parseRocmSmiGpus('{"card0": {"VRAM Total Memory (B)": "99999999999999999999", "GPU use (%)": "250"}}');
    expect(huge[0]).toMatchObject({ memoryTotalMiB: null, utilizationPct: null });
    expect(parseRocmSmiPids('PID PROCESS NAME GPU(s) VRAM USED SDMA USED CU OCCUPANCY\n99999999999 x 1 0 0 0\n', 1)).toEqual([]);
  });
});
