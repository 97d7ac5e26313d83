// One host allocation of a tebibyte or more is a garbage size, not capacity (issue 23, item 5: an absurd request from a
// broken build or shape is no memory shortage): src/diagnose/levers/host-request.ts hostRequestAbsurd, the first fix
// of knowledge/host-alloc-failed. Real case: blind10/6290 (a read split: PaddleNLP's CPU allocator asked for 3.79 TiB
// for one sentence). Every other paste here is a SYNTHETIC variant written from the principle, not copied from a thread.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const NOT_CAPACITY = /not capacity/;

describe('an absurd host request: a garbage size, not RAM', () => {
  it("blind10/6290: 3.79 TiB from Paddle's CPU allocator", async () => {
    const d = await firstOfCase('blind10', '6290');
    expect(d?.fixes[0].summary).toMatch(NOT_CAPACITY);
  });
  it.each([
    'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\nnumpy.core._exceptions._ArrayMemoryError: Unable to allocate 2.50 TiB for an array with shape (600000, 600000) and data type float64',
    "RuntimeError: [enforce fail at alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 1649267441664 bytes. Error code 12 (Cannot allocate memory)",
    // NumPy prints a whole size with a trailing point ("115. TiB")
    'numpy.core._exceptions._ArrayMemoryError: Unable to allocate 115. TiB for an array with shape (3983360, 3983360) and data type float64',
    'MemoryError: (ResourceExhausted) Fail to alloc memory of 2199023255552 size, error code is 12.\n  [Hint: Expected error == 0, but received error:12 != 0:0.] (at /paddle/paddle/fluid/memory/allocation/cpu_allocator.cc:50)',
  ])('synthetic %#', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(d?.fixes[0].summary).toMatch(NOT_CAPACITY);
  });
});

describe('near misses: a large but possible host request stays the RAM answer (synthetic)', () => {
  it('61 GiB for a video array: the data materialised whole', async () => {
    const d = await diagnosePaste(
      'numpy.core._exceptions._ArrayMemoryError: Unable to allocate 61.1 GiB for an array with shape (2600, 1080, 1920, 3) and data type float32',
    );
    expect(d?.fixes[0].summary).not.toMatch(NOT_CAPACITY);
  });
  it("926. GiB (NumPy's trailing point) for a dense matrix: the as-large-as-RAM answer, not a garbage size", async () => {
    const d = await diagnosePaste(
      'numpy.core._exceptions.MemoryError: Unable to allocate 926. GiB for an array with shape (6794880, 36601) and data type float32',
    );
    expect(d?.fixes[0].summary).toMatch(/One allocation of 926\.00 GiB/);
    expect(d?.fixes[0].summary).not.toMatch(NOT_CAPACITY);
  });
  it('a 1.5 TiB request on a machine whose stated RAM is 2 TB is a real shortage', async () => {
    const d = await diagnosePaste(
      'The server has 2048 GB RAM.\nnumpy.core._exceptions._ArrayMemoryError: Unable to allocate 1.50 TiB for an array with shape (450000, 450000) and data type float64',
    );
    expect(d?.fixes[0].summary).not.toMatch(NOT_CAPACITY);
  });
});
