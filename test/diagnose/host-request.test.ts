// One host allocation as large as the RAM (issue 23): PyTorch's CPU allocator and NumPy name the single request that
// failed; a tensor or array as large as the machine's RAM (16 GiB when the paste states none) is the whole data or one
// long input materialised at once, so the first fix loads less of it, downscales it or streams it, never the page file or
// the DataLoader workers. A small request keeps the page-file / RAM advice. Real threads (blind7 read split, input10 tuned
// group) beside synthetic variants written from the principle (said so).
import { describe, expect, it } from 'vitest';
import { readHostRequest } from '../../src/diagnose/levers/host-request.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const WHOLE = /^One allocation of [\d.]+ GiB[\s\S]*materialised at once/;

describe('real threads', () => {
  it('blind7/3903: a 61 GiB host tensor of a whole 1080p video: fewer frames or a lower resolution, not the page file', async () => {
    const d = await firstOfCase('blind7', '3903');
    expect(first(d)).toMatch(WHOLE);
    expect(first(d)).toMatch(/fewer frames/);
  });
  it.each(['5418', '5419', '5420'])('input10/%s: a video held whole in host RAM', async (n) => {
    expect(first(await firstOfCase('input10', n))).toMatch(WHOLE);
  });
});

describe("the allocators' messages (synthetic variants)", () => {
  it.each([
    [
      'PyTorch on Windows',
      'RuntimeError: [enforce fail at alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 42949672960 bytes.',
      40960,
    ],
    [
      'PyTorch on Linux',
      "RuntimeError: [enforce fail at CPUAllocator.cpp:64] . DefaultCPUAllocator: can't allocate memory: you tried to allocate 21474836480 bytes. Error code 12 (Cannot allocate memory)",
      20480,
    ],
    ['NumPy', 'numpy.core._exceptions._ArrayMemoryError: Unable to allocate 37.5 GiB for an array with shape (3000, 1080, 1920, 3) and data type uint8', 38400],
  ])('%s', (_name, line, mib) => {
    expect(readHostRequest(line).hostRequestMiB).toBe(mib);
  });
  it('a 40 GiB request with no RAM stated: the data materialised whole', async () => {
    const d = await diagnosePaste(
      'RuntimeError: [enforce fail at alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 42949672960 bytes.',
    );
    expect(first(d)).toMatch(WHOLE);
  });
  it('a 20 GiB request on a machine that states 64 GB of RAM: not this lever', async () => {
    const d = await diagnosePaste(
      'My PC has 64GB RAM\nRuntimeError: [enforce fail at alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 21474836480 bytes.',
    );
    expect(first(d)).not.toMatch(WHOLE);
  });
  it('control: a 25 MiB request (a full commit limit) keeps the page-file advice', async () => {
    const d = await diagnosePaste(
      'RuntimeError: [enforce fail at ..\\c10\\core\\impl\\alloc_cpu.cpp:72] data. DefaultCPUAllocator: not enough memory: you tried to allocate 26214400 bytes.',
    );
    expect(first(d)).not.toMatch(WHOLE);
    expect(first(d)).toMatch(/page file/);
  });
});
