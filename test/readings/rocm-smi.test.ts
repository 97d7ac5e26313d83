// rocm-smi (AMD GPUs) read from real outputs pasted in public threads (test/fixtures/rocm-smi/README.md says
// where each comes from): --json and the text form for memory and utilisation, and --showpids' KFD table in its
// tab- and space-separated forms.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRocmSmiConcise, parseRocmSmiGpus, parseRocmSmiPids } from '../../src/readings/rocm-smi.js';

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

  it('the text form of `rocm-smi -a` (RX 6800 XT, 2025): the name and the edge temperature (junction and memory beside it)', () => {
    expect(parseRocmSmiGpus(fixture('ollama-11348-rx6800xt-a-2025.txt'))).toEqual([
      {
        index: 0,
        name: 'AMD Radeon RX 6800 XT',
        uuid: null,
        busId: null,
        memoryUsedMiB: null,
        memoryTotalMiB: null,
        utilizationPct: null,
        temperatureC: 55,
        error: null,
      },
    ]);
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

  it('the default concise table, in each layout: temperature, power and cap, GPU% (ROCm 3.3 to rocm-smi-lib 7.5)', () => {
    // ROCm 6 layout, one MI300X: the junction temperature (no edge sensor) and socket power, cells with spaces before them.
    expect(parseRocmSmiConcise(fixture('rocm-build-5231-mi300x-default-2025.txt'))).toEqual([
      { index: 0, temperatureC: 39, powerDrawW: 191, powerCapW: 750, utilizationPct: 0 },
    ]);
    // ROCm 6.0 layout, two RX 7900 XTX: each device's second header-less line ("0x744c") is no device.
    expect(parseRocmSmiConcise(fixture('jax-19453-2x7900xtx-default-2024.txt'))).toEqual([
      { index: 0, temperatureC: 28, powerDrawW: 79, powerCapW: 303, utilizationPct: 25 },
      { index: 1, temperatureC: 25, powerDrawW: 42, powerCapW: 303, utilizationPct: 33 },
    ]);
    // The older layout (ROCm 3 to 5): "42.0c"; an iGPU without a power cap (N/A) and a fan of "None%".
    expect(parseRocmSmiConcise(fixture('roc-smi-100-igpu-7900-default-2023.txt'))).toEqual([
      { index: 0, temperatureC: 42, powerDrawW: 39.02, powerCapW: null, utilizationPct: 0 },
      { index: 1, temperatureC: 50, powerDrawW: 89, powerCapW: 315, utilizationPct: 3 },
    ]);
    // ROCm 3.3 (as the thread says): the device numbering is the tool's (1 here), kept as it is.
    expect(parseRocmSmiConcise(fixture('roc-smi-86-rocm33-default-2020.txt'))).toEqual([
      { index: 1, temperatureC: 24, powerDrawW: 3, powerCapW: 170, utilizationPct: 0 },
    ]);
  });

  it('the concise table: N/A cells are null, other outputs and impossible values give nothing', () => {
    // A row of the ROCm 6 layout where a partition reports nothing (rocm-systems PR #1508's table has such rows).
    const header = fixture('rocm-build-5231-mi300x-default-2025.txt').split('\n').slice(0, 7).join('\n');
    const naRow = '1       3     0x75a0,   20862  N/A         N/A       N/A, N/A, 1         N/A      N/A      0%   n/a     N/A      0%     N/A';
    expect(parseRocmSmiConcise(`${header}\n${naRow}\n`)).toEqual([{ index: 1, temperatureC: null, powerDrawW: null, powerCapW: null, utilizationPct: null }]);
    expect(parseRocmSmiConcise(fixture('marimo-9237-rx7900xt-showproductname-showuse-showmeminfo-vram.json'))).toEqual([]);
    expect(parseRocmSmiConcise(fixture('rocm-smi-lib-166-showpids-unknown-2024.txt'))).toEqual([]);
    const odd = parseRocmSmiConcise(
      'GPU  Temp   AvgPwr  SCLK    MCLK    Fan     Perf  PwrCap  VRAM%  GPU%\n0    999.0c  3.0W    852Mhz  167Mhz  13.73%  auto  170.0W  N/A    250%\n',
    );
    expect(odd).toEqual([{ index: 0, temperatureC: null, powerDrawW: 3, powerCapW: 170, utilizationPct: null }]);
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
