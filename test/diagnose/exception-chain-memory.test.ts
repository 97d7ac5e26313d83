// Which exception is the run's failure (issue 23, item 5: routes by the exception and its own words).
//
// Principle 1: Python prints a chain in two fixed forms. "During handling of the above exception, another exception
// occurred:" means the later one arose while handling the first: the first is the failure. "The above exception was the
// direct cause of the following exception:" means the later one wraps the first: its innermost cause is the failure.
// So a memory exception in an earlier link decides, whatever the last link's type (final-error.ts ownStart, diagnose.ts).
// Principle 2: an exception whose own message says the GPU's memory is not enough, none is left, or the engine's cache
// has none, is a memory failure whatever its class (knowledge/device-memory-named-in-exception,
// knowledge/serving-cache-memory-named). A message that only names a memory type or attribute stays out.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('the first link of an exception chain is the failure', () => {
  it('real: CTranslate2 out of memory, then an AttributeError in the handler (blind13/7674)', async () => {
    const d = await firstOfCase('blind13', '7674');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/compute type|smaller model/);
  });

  // Synthetic variants, written from the principle.
  const oom = [
    'Traceback (most recent call last):',
    '  File "train.py", line 40, in step',
    '    out = model(x)',
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free.',
    '',
  ];
  const later = (kind: string, final: string) => [
    ...oom,
    kind,
    '',
    'Traceback (most recent call last):',
    '  File "train.py", line 44, in step',
    '    logger.write(msg)',
    final,
  ];

  it('synthetic: OOM, "During handling", an AttributeError', async () => {
    const text = later('During handling of the above exception, another exception occurred:', "AttributeError: 'NoneType' object has no attribute 'write'");
    expect((await diagnosePaste(text.join('\n')))?.category).toBe('cuda_oom');
  });

  it('synthetic: OOM as the direct cause of a ValueError', async () => {
    const text = later('The above exception was the direct cause of the following exception:', 'ValueError: step 12 failed');
    expect((await diagnosePaste(text.join('\n')))?.category).toBe('cuda_oom');
  });

  it('synthetic: OOM, "During handling", a device-mismatch RuntimeError known by its message', async () => {
    const text = later(
      'During handling of the above exception, another exception occurred:',
      'RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!',
    );
    // A memory verdict, not the device error's abstention (which memory rule answers is not this principle's question).
    expect(['cuda_oom', 'growing_memory_leak']).toContain((await diagnosePaste(text.join('\n')))?.category);
  });

  it('near miss (synthetic): a chain of non-memory exceptions stays without a memory diagnosis', async () => {
    const text = [
      'Traceback (most recent call last):',
      '  File "/opt/app/oom_guard.py", line 12, in load',
      '    cfg = table[key]',
      "KeyError: 'gpu_memory'",
      '',
      'During handling of the above exception, another exception occurred:',
      '',
      'Traceback (most recent call last):',
      '  File "/opt/app/oom_guard.py", line 15, in load',
      '    raise FileNotFoundError(path)',
      'FileNotFoundError: config.yaml',
    ];
    const d = await diagnosePaste(text.join('\n'));
    expect(['cuda_oom', 'fragmentation', 'growing_memory_leak']).not.toContain(d?.category);
  });
});

describe('a memory failure named in a non-memory exception is a memory failure', () => {
  it('real: SGLang ValueError, weights leave no GPU memory for the KV cache (blind13/7673)', async () => {
    const d = await firstOfCase('blind13', '7673');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/--mem-fraction-static/);
  });

  it('real: DirectML RuntimeError "not enough GPU video memory", first link of a chain (chain14/7510)', async () => {
    expect((await firstOfCase('chain14', '7510'))?.category).toBe('cuda_oom');
  });

  it('real: an AssertionError, cache budget too small (chain14/7513)', async () => {
    const d = await firstOfCase('chain14', '7513');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/memory ratio/);
  });

  // Synthetic variants, written from the principle.
  it.each([
    'AssertionError: insufficient GPU memory for the requested workspace',
    'ValueError: Not enough device memory to hold the model weights',
    'RuntimeError: GPU memory is insufficient for this resolution',
    'RuntimeError: 显存不足，无法加载模型',
    '[12:00:01] ERROR  ValueError: no free GPU memory left after loading the engine',
  ])('synthetic: %s', async (line) => {
    const text = ['Traceback (most recent call last):', '  File "run.py", line 3, in <module>', '    main()', line].join('\n');
    expect((await diagnosePaste(text))?.category).toBe('cuda_oom');
  });

  it('synthetic: a KV cache left no memory gets the serving share, not the batch', async () => {
    const d = await diagnosePaste('ValueError: There is no GPU memory left for the KV cache after loading weights.');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(/gpu-memory-utilization|mem-fraction-static/);
  });

  it('near miss (real): an AttributeError that names torch.cuda.OutOfMemoryError is no memory failure (chain14/7514, 7515)', async () => {
    for (const n of ['7514', '7515']) {
      const d = await firstOfCase('chain14', n);
      expect(['cuda_oom', 'fragmentation', 'growing_memory_leak']).not.toContain(d?.category);
    }
  });

  it.each([
    'ValueError: --gpu-memory-utilization must be between 0 and 1',
    'NotImplementedError: no device memory stats for this backend',
    'TypeError: memory_format must be a torch.memory_format, not str',
  ])('near miss (synthetic): %s', async (line) => {
    const text = ['Traceback (most recent call last):', '  File "run.py", line 3, in <module>', '    main()', line].join('\n');
    const d = await diagnosePaste(text);
    expect(['cuda_oom', 'fragmentation', 'growing_memory_leak']).not.toContain(d?.category);
  });
});
