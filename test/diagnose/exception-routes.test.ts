// Routes by exception type and stack, not by words in prose (issue 23 item 3): the exception's own type
// and fixed message decide the route; a user's sentence never overrides it. Variants written from each
// library's message format (test/fixtures/phase-levers/routes/README.md).
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';
import { diagnose } from '../../src/diagnose/diagnose.js';

const base = await loadRuleBase();
const fixture = (name: string) => readFileSync(new URL(`../fixtures/phase-levers/routes/${name}`, import.meta.url), 'utf8');
const SITE = '/usr/lib/python3.10/site-packages';

describe('a non-memory exception is not turned into a memory diagnosis by a remark in prose', () => {
  const mismatch = (remark: string, message: string) =>
    [
      remark,
      'Traceback (most recent call last):',
      '  File "train.py", line 77, in <module>',
      '    out = model(x)',
      `  File "${SITE}/torch/nn/modules/module.py", line 1501, in _call_impl`,
      '    return forward_call(*args, **kwargs)',
      `RuntimeError: ${message}`,
    ].join('\n');
  it.each([
    ['the fixture', fixture('device-mismatch-with-memory-remark.log')],
    [
      '"the GPU is out of memory" remark, same-device error',
      mismatch('maybe my GPU is out of memory?', 'Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!'),
    ],
    [
      'VRAM remark, input/weight type error',
      mismatch('VRAM usage looks high, 3090 out of memory maybe', 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same'),
    ],
    [
      'GPU remark, old device-type message',
      mismatch('GPU out of memory again', "Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_mm"),
    ],
  ])('%s', (_name, text) => {
    const r = diagnose(text, base);
    expect(r.diagnoses.filter((d) => d.category === 'cuda_oom' || d.category === 'host_oom_killed')).toEqual([]);
  });

  it('an OOM exception before the same error still counts (the OOM came first, its aftermath raised the last one)', () => {
    const text = [
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free.',
      mismatch('', 'Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!'),
    ].join('\n');
    expect(diagnose(text, base).diagnoses[0]?.category).toBe('cuda_oom');
  });
});

describe("a library's own memory exception is read for what it is", () => {
  it.each([
    ['the fixture', fixture('pycuda-cumemalloc.log')],
    ['bare driver wrapper line', 'pycuda._driver.MemoryError: cuMemAlloc failed: out of memory'],
  ])('pycuda: %s -> the GPU ran out (cuda_oom), not host RAM', (_name, text) => {
    expect(diagnose(text, base).diagnoses[0]?.category).toBe('cuda_oom');
  });

  it.each([
    ['the fixture', fixture('ray-memory-monitor.log')],
    ['the exception line alone', 'ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.'],
    [
      'raylet only',
      '(raylet) node_manager.cc:3084: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 1f, IP: 10.0.0.7) over the last time period.',
    ],
  ])("Ray's memory monitor: %s -> host RAM (host_oom_killed), not a CUDA OOM", (_name, text) => {
    expect(diagnose(text, base).diagnoses[0]?.category).toBe('host_oom_killed');
  });

  it.each([['MemoryError'], ['builtins.MemoryError: out of memory'], ['  File "x.py", line 3, in f\nMemoryError: ']])(
    "Python's own MemoryError stays host memory: %s",
    (text) => {
      expect(diagnose(text, base).diagnoses[0]?.category).toBe('host_oom_killed');
    },
  );
});

describe('a lone "Process N has" in the OOM message is this process unless the totals say otherwise', () => {
  it('the container fixture: no "this process has" line, the listed process holds what PyTorch allocated', () => {
    const [d] = diagnose(fixture('container-lone-process.log'), base).diagnoses;
    expect(d.category).toBe('cuda_oom');
    expect(d.incident.holder.verdict).not.toBe('other_processes');
    expect(d.fixes[0].kind).not.toBe('free_other_processes');
  });
  it('with "this process has" beside it, the listed process is another one', () => {
    const text =
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.19 GiB of which 1.10 GiB is free. Process 2210411 has 61.20 GiB memory in use. Including non-PyTorch memory, this process has 16.88 GiB memory in use. Of the allocated memory 16.02 GiB is allocated by PyTorch, and 300.11 MiB is reserved by PyTorch but unallocated.';
    expect(diagnose(text, base).diagnoses[0].incident.holder.verdict).toBe('other_processes');
  });
});
