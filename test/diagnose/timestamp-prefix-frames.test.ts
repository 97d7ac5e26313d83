// Frames under a container's log timestamps and a script's inference-epoch function (issue 23: the phase from frames).
// Docker's and Kubernetes' `--timestamps` prefix every line with RFC 3339 UTC to the nanosecond ("2023-06-15T23:39:48.836381821Z
// "): normalize.ts strips it like a launcher's rank prefix, so the traceback's frames read at a line start. A function
// named with the word "inference" ("inference_one_epoch", "run_inference_loop") is an evaluation pass like "val_one_epoch".
// Real thread (blind8 read split) beside synthetic variants written from the formats (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { normalizeLog } from '../../src/diagnose/normalize.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('real thread (blind8 read split)', () => {
  it('5605: ACE inline inference epoch under docker timestamps, failing while packing the whole rollout: not the batch', async () => {
    const d = first(await firstOfCase('blind8', '5605'));
    expect(d).toMatch(/^The card ran out in evaluation in what it keeps or computes over the whole set/);
    expect(d).toMatch(/packer\.py, in pack/);
  });
});

describe('synthetic variants (from the formats)', () => {
  it('the timestamp prefix is stripped at every line start, nanoseconds or none', () => {
    const log = ['2024-01-02T03:04:05.123456789Z Traceback (most recent call last):', '2024-01-02T03:04:05Z   File "a.py", line 1, in <module>'].join('\n');
    expect(normalizeLog(log)).toBe(['Traceback (most recent call last):', '  File "a.py", line 1, in <module>'].join('\n'));
  });
  it('a timestamp inside a line is kept', () => {
    expect(normalizeLog('step 5 at 2024-01-02T03:04:05Z loss 1.0')).toBe('step 5 at 2024-01-02T03:04:05Z loss 1.0');
  });
  it("a script's inference epoch that stacks every step's outputs on the device", async () => {
    const ts = '2024-05-01T10:00:00.000000001Z ';
    const paste = [
      'Traceback (most recent call last):',
      '  File "train.py", line 90, in train',
      '    logs = self.run_inference_epoch()',
      '  File "train.py", line 120, in run_inference_epoch',
      '    out = pack(all_preds)',
      '  File "utils.py", line 12, in pack',
      '    return torch.stack(tensors, dim=0)',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 2.10 GiB is free. Of the allocated memory 20.10 GiB is allocated by PyTorch, and 1.02 GiB is reserved by PyTorch but unallocated.',
    ]
      .map((l) => ts + l)
      .join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/^The card ran out in evaluation in what it keeps or computes over the whole set/);
  });
});
