// Principle: the batch a fix halves is the one each device runs. A total, global or effective batch (every
// device and accumulation step together) is not it; trainers' "batch size per device = N" lines are.
// Variants written from the principle (Unsloth's and HF Trainer's banners, Megatron-style and Chinese prose);
// the Unsloth banner is the one in test/fixtures/untuned/blind/1054 (tuned split).
import { describe, expect, it } from 'vitest';
import { extractSettings } from '../../src/diagnose/settings.js';

const batchOf = (text: string) => extractSettings(text).run.batch;

describe('the per-device batch, never the total', () => {
  it('reads the per-device line of a banner that also prints the total', () => {
    expect(
      batchOf('   \\\\   /|    Batch size per device = 2 | Gradient Accumulation steps = 4\nO^O/ \\_/ \\    Total batch size = 8 | Total steps = 60'),
    ).toBe(2);
    expect(batchOf('  Total train batch size (w. parallel, distributed & accumulation) = 64\n  Instantaneous batch size per device = 4')).toBe(4);
    expect(batchOf('batch size per GPU: 3, total batch size: 24')).toBe(3);
  });

  it('does not take a total, global or effective batch for the batch', () => {
    expect(batchOf('Total batch size = 8 | Total steps = 60')).toBeUndefined();
    expect(batchOf('effective batch size = 32')).toBeUndefined();
    expect(batchOf('global batch size: 256')).toBeUndefined();
    expect(batchOf('总batch size为64')).toBeUndefined();
    expect(batchOf('global batch size: 256, micro batch size: 4')).toBe(4);
  });

  it('still reads a plain batch in prose', () => {
    expect(batchOf('I set batch size = 3 and it still fails')).toBe(3);
    expect(batchOf('batch size为2')).toBe(2);
  });
});
