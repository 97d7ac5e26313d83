// A script that skips one input after its CUDA OOM and goes on with the next (src/diagnose/levers/input-skipped.ts):
// Bringing-Old-Photos-Back-to-Life's "Skip %s due to an error:\n%s" and "Skip photo due to an error:\n%s". One input per
// call and the other inputs fit: that input's size is the lever, never the batch. Real: blind9/5701 (a read split,
// https://github.com/microsoft/Bringing-Old-Photos-Back-to-Life/issues/54); the others are synthetic variants written
// from the format (the error on the next line, the pipeline's "photo" form, a non-OOM error, a training run).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const TEST_TIMEOUT = 180_000;
const first = async (paste: string) => (await diagnosePaste(paste))?.fixes[0]?.summary ?? '';
const oom =
  'CUDA out of memory. Tried to allocate 1.92 GiB (GPU 0; 11.00 GiB total capacity; 7.10 GiB already allocated; 1.20 GiB free; 8.35 GiB reserved in total by PyTorch)';

describe('an input skipped after its OOM while the others ran: that input is too large', () => {
  it(
    'real: blind9/5701 ("Skip a.png due to an error:" then the OOM, 3.10 GiB on an 8 GB card)',
    async () => {
      expect((await firstOfCase('blind9', '5701'))?.fixes[0].summary).toMatch(/^The script skipped a\.png after this CUDA out-of-memory error.*resolution/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: the error on the same line, on the next line, and the pipeline\'s "Skip photo" form',
    async () => {
      expect(await first(`Skip IMG_0042.jpg due to an error: ${oom}`)).toMatch(/^The script skipped IMG_0042\.jpg/);
      expect(await first(`Processing 12 images\nSkip scan_1999.tif due to an error:\n${oom}\nFinish Stage 1 ...`)).toMatch(
        /^The script skipped scan_1999\.tif/,
      );
      expect(await first(`Skip photo due to an error:\n${oom}`)).toMatch(/^The script skipped a photo/);
    },
    TEST_TIMEOUT,
  );

  it(
    'synthetic: a skip over another error, or the OOM of a training run, is not this lever',
    async () => {
      expect(await first(`Skip a.png due to an error:\ncannot identify image file 'a.png'\n${oom}`)).not.toMatch(/^The script skipped/);
      expect(await first(`Epoch 3: loss.backward()\nSkip b.png due to an error:\n${oom}\noptimizer.step()`)).not.toMatch(/^The script skipped/);
    },
    TEST_TIMEOUT,
  );
});
