// The stricter lever figure of the corpus scorer (eval-score.ts): the expected lever counts only when the first fix
// names it before any other lever, from the first clause that tells the user what to do. Fallback texts that list
// several levers must not earn it; descriptions of the failure and negated mentions name no lever.
import { describe, expect, it } from 'vitest';
import { leverNamedFirst } from './eval-score.js';

const fix = (summary: string, changes: Record<string, unknown> = {}) => ({ summary, changes });

describe('the stricter lever figure: the expected lever is the first one the fix names as an action', () => {
  it('a fallback that names the batch first does not earn the input-size lever it lists later', () => {
    const f = fix(
      'The log does not say who holds the memory. If it fits, use the largest batch that fits; else shorten the inputs (image size, sequence length)',
    );
    expect(leverNamedFirst('imgsz', f, 'cuda_oom')).toBe(false);
    expect(leverNamedFirst('batch', f, 'cuda_oom')).toBe(true);
  });

  it('a negated mention names no lever: "the batch is not the lever: shorten the sequence length"', () => {
    const f = fix('The batch is already 1, so halving it is not the lever: shorten the sequence length (max_length 512)');
    expect(leverNamedFirst('imgsz', f, 'cuda_oom')).toBe(true);
  });

  it('what the failure is described with before the first action names no lever', () => {
    const f = fix('The host ran out of RAM while the checkpoint shards were loading in fp16. Load with low_cpu_mem_usage=True, or use ZeRO-3 init');
    expect(leverNamedFirst('low_cpu_mem_usage', f, 'host_oom_killed')).toBe(true);
    expect(leverNamedFirst('offload_or_zero', f, 'host_oom_killed')).toBe(false);
  });

  it('a structured change is named first; a lever the loose check does not see is never named first', () => {
    expect(leverNamedFirst('batch', fix('Halve it and accumulate', { batch: 8 }), 'cuda_oom')).toBe(true);
    expect(leverNamedFirst('no_grad', fix('Use a smaller image size'), 'cuda_oom')).toBe(false);
  });

  it('levers judged by the category keep the loose verdict', () => {
    expect(leverNamedFirst('nccl_timeout_debug', fix('Set NCCL_DEBUG=INFO and lower the batch'), 'nccl_or_distributed')).toBe(true);
  });
});
