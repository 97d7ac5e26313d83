// Issue 23, the memory budget: a checkpoint's name says how its weights are stored, and fp8 names (ComfyUI's
// "_fp8_e4m3fn" / "_fp8_e5m2" / "_fp8_scaled", vLLM's "-FP8", "float8") are one byte a weight, like int8, not the fp16 the
// budget assumes when no dtype is stated. Real example: blind10 6231 (public thread, URL in its cases.json): a 14B
// fp8 model on a 22 GB card fits, so the 1280x720 input, not the weights, leads. The other texts are synthetic.
import { describe, expect, it } from 'vitest';
import { quantizedNameBits } from '../../src/diagnose/model-facts.js';
import { firstOfCase } from './corpus-case.js';

describe('fp8 in a checkpoint name is 8 bits a weight', () => {
  it('real blind10/6231: Wan2_1-I2V-14B-720P_fp8_e4m3fn on a 22 GB card: the input size leads, not the weights', async () => {
    const d = await firstOfCase('blind10', '6231');
    expect(d?.fixes[0]?.summary).toMatch(/^One input is large/);
  });
  const names: Record<string, 8 | undefined> = {
    'flux1-dev-fp8.safetensors': 8,
    'Wan2_1-T2V-14B_fp8_e5m2.safetensors': 8,
    'hunyuan_video_720_cfgdistill_fp8_e4m3fn.safetensors': 8,
    't5xxl_fp8_e4m3fn_scaled.safetensors': 8,
    'neuralmagic/Meta-Llama-3-8B-Instruct-FP8': 8,
    'model_float8_e4m3fn.safetensors': 8,
    'model-fp16.safetensors': undefined,
    'fp8 training is on': undefined,
  };
  for (const [name, bits] of Object.entries(names))
    it(`synthetic: ${name} -> ${bits ?? 'none'}`, () => {
      expect(quantizedNameBits(`loading ${name}`)).toBe(bits);
    });
});
