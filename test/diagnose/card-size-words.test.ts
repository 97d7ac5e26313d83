// A size the report says is left or free on the card is not the card's size ("还剩接近18G的显存": nearly 18G remaining):
// read as the card, it made a reply say "this process holds 20.43 GiB of 18.00 GiB" (model-facts.ts USAGE_BEFORE). The
// real example is a case of the read split blind6 (a real public thread, its cases.json); the others are synthetic
// variants of the two phrasings, and say so in their names.
import { describe, expect, it } from 'vitest';
import { statedGpuMemoryMiB } from '../../src/diagnose/model-facts.js';
import { firstOfCase } from './corpus-case.js';

describe('what is left of the card is not its size', () => {
  it('real: blind6/3856 (two 3090s, "还剩接近18G的显存") reads no 18 GB card', async () => {
    const d = await firstOfCase('blind6', '3856');
    expect(d!.facts.statedGpuMemoryMiB).toBeUndefined();
    expect(String(d!.facts.holderWhy)).not.toMatch(/of 18\.00 GiB/);
  }, 180_000);

  it('synthetic: remaining / free sizes are skipped, the card stated beside them is read', () => {
    expect(statedGpuMemoryMiB('nvidia-smi 显示还剩 10G 显存')).toBeUndefined();
    expect(statedGpuMemoryMiB('remaining 12GB GPU memory after the model loads')).toBeUndefined();
    expect(statedGpuMemoryMiB('我的是24G显存的卡，空闲 20G 显存')).toBe(24 * 1024);
    expect(statedGpuMemoryMiB('I have only 8GB VRAM')).toBe(8 * 1024);
  });
});
