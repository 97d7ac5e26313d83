// Issue 23, the memory budget: an fp8 checkpoint ("..._fp8_e4m3fn.safetensors", "-FP8") holds one byte a weight, as
// an 8-bit one does. Its weights are then half their 16-bit size, and where that leaves room on the card, quantizing
// is no lever: the input (resolution, frames, sequence) is. Real example: blind10 6231 (public thread, URL in its
// cases.json); the other texts are synthetic variants written from the principle. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { quantizedNameBits } from '../../src/diagnose/model-facts.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';

describe('an fp8 checkpoint is 8 bits a weight', () => {
  it('real blind10/6231: a 14B fp8 video model on a 22 GB card at 1280x720: the resolution, not quantizing', async () => {
    const d = await firstOfCase('blind10', '6231');
    expect(d?.facts.dtype).toBe('int8');
    expect(first(d)).not.toMatch(/^The weights alone fill the card/);
    expect(first(d)).toMatch(/image size|resolution/);
  });

  // synthetic: the fp8 name forms
  it.each([
    ['Wan2_1-T2V-14B_fp8_e4m3fn.safetensors', 8],
    ['flux1-dev-fp8.safetensors', 8],
    ['Meta-Llama-3.1-70B-Instruct-FP8', 8],
    ['model_fp8_e5m2.safetensors', 8],
    ['Llama-2-13b-chat-hf', undefined],
    ['fp8_training_recipe.md', undefined],
  ])('synthetic: %s -> %s', (name, bits) => {
    expect(quantizedNameBits(`loading ${name}`)).toBe(bits);
  });

  it('synthetic: a 14B fp8 checkpoint on a 24 GB card is not told to quantize first', async () => {
    const d = await diagnosePaste(
      'RTX 4090 24GB\nloading Wan2_1-I2V-14B-720P_fp8_e4m3fn.safetensors\nwidth 1280 height 720, 81 frames\ntorch.OutOfMemoryError: Allocation on device',
    );
    expect(first(d)).not.toMatch(/^The weights alone fill the card/);
  });
  it('synthetic near miss: the same 14B model in bf16 on that card, no input size stated: its 16-bit weights fill it', async () => {
    const d = await diagnosePaste('RTX 4090 24GB\nloading Wan2_1-I2V-14B-720P_bf16.safetensors\ntorch.OutOfMemoryError: Allocation on device');
    expect(first(d)).toMatch(/quantiz/i);
  });
});
