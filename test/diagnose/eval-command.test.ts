// Principle (issue 23): a paste whose run is the repository's own evaluation script (`python test.py ...`, `python
// tools/test.py cfg ckpt`, `python eval.py`), with no training script run beside it, is an eval-only run: its OOM is the
// evaluation's, whatever line the failure is told on. An inference script (infer.py, inference.py) keeps its own levers
// (the weights', the request's). The real CRAFT report (eval9 4209) beside synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const OOM =
  'RuntimeError: CUDA out of memory. Tried to allocate 100.00 MiB (GPU 0; 3.95 GiB total capacity; 2.88 GiB already allocated; 58.25 MiB free; 42.71 MiB cached)';
const first = async (text: string) => (await diagnosePaste(text))?.fixes[0]?.summary ?? '';

describe("the repository's own evaluation script names the phase", () => {
  it('real: CRAFT `python test.py --trained_model=...` on a 4 GB card (eval9 4209)', async () => {
    const d = await firstOfCase('eval9', '4209');
    expect(d?.fixes[0].summary).toMatch(/evaluation/);
    expect(d?.fixes[0].summary).toMatch(/no_grad|inference_mode/);
  });
  it.each([
    ['I ran\n`python tools/test.py configs/model.py work_dirs/latest.pth --eval mAP`\nand got', 'tools/test.py'],
    ['$ python3 eval.py --ckpt best.pth\nit fails with', 'eval.py'],
    ['command: python -u scripts/validate.py --data val\nerror:', 'validate.py'],
  ])('synthetic: %j is an evaluation (%s)', async (text) => {
    expect(await first(`${text}\n${OOM}`)).toMatch(/evaluation/);
  });
  it('synthetic: a training script beside it keeps the failure unplaced by the command', async () => {
    expect(await first(`python train.py --epochs 10\npython test.py --ckpt last.pth\n${OOM}`)).not.toMatch(/evaluation/);
  });
  it('synthetic: an inference script is not read as an evaluation', async () => {
    expect(await first(`python inference.py -i ./in -o ./out\n${OOM}`)).not.toMatch(/evaluation loop/);
  });
});
