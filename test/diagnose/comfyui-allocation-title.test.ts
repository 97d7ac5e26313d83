// ComfyUI reports a CUDA OOM with the exception's first words only ("Allocation on device"), and its users title the
// issue with the failing node and those words ("VAEDecode Allocation on device"): read as a CUDA OOM where the trace that
// follows is cut before any message, and the node's frames then pick the lever (the VAE decode: tiles, frames,
// resolution). The real example is a case of the read split blind7 (a real public thread, its cases.json); the others
// are synthetic variants written from ComfyUI's fixed text, and say so in their names.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;

describe('a ComfyUI issue titled "<Node> Allocation on device"', () => {
  it(
    'real: blind7/3979 (LTX-Video img2vid, VAEDecode on a 12 GB RTX 3060, trace cut in the decoder)',
    async () => {
      const d = await firstOfCase('blind7', '3979');
      expect(d?.category).toBe('cuda_oom');
      expect(d!.fixes[0].summary).toMatch(/VAE decoded .*VAE Decode \(Tiled\)/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a KSampler title; a sentence that only mentions the words is not a failure',
    async () => {
      const sampler = await diagnosePaste(
        'KSampler Allocation on device\n### Expected Behavior\nRender the workflow\n### Debug Logs\n  File "D:\\\\ComfyUI\\\\execution.py", line 151, in recursive_execute\n',
      );
      expect(sampler?.category).toBe('cuda_oom');
      expect(await diagnosePaste('What does the message Allocation on device mean in the docs?\n')).toBeUndefined();
    },
    TEST_TIMEOUT,
  );
});
