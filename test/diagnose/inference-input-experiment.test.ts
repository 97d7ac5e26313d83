// Issue 23, one input too large: a run the report says is inference (an inference script, a serving command, a
// `.predict(` call) that states no batch, no input size and no model size holds its weights and one input's
// activations; the experiment that decides is that input at half its size, not a training step at batch 1 (the
// generic fallback). Real examples: blind8 5659, blind9 5700 (public threads, URLs in their cases.json); every other text is a synthetic variant written from the
// principle. In process (corpus-case.ts), a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = (d: Awaited<ReturnType<typeof diagnosePaste>>) => d?.fixes[0]?.summary ?? '';
const FALLBACK = /does not state the batch|nor the batch/;
const INPUT_FIRST = /^The paste runs inference .*Run the same input at half its image size/;
const TORCH_OOM = `RuntimeError: CUDA out of memory. Tried to allocate 3.00 GiB (GPU 0; 7.79 GiB total capacity; 3.90 GiB already allocated; 1.20 GiB free; 6.30 GiB reserved in total by PyTorch)`;
const PADDLE_OOM = `Out of memory error on GPU 0. Cannot allocate 1.250000GB memory on GPU 0, available memory is only 312.500000MB.`;

describe('inference with no batch, input or model size: the experiment is the input at half its size', () => {
  it('real blind8/5659: PaddleHub serving an OCR pipeline: the input first, not one step at batch 1', async () => {
    const d = await firstOfCase('blind8', '5659');
    expect(first(d)).toMatch(INPUT_FIRST);
    expect(first(d)).not.toMatch(FALLBACK);
  });
  it('real blind9/5700: tagger.predict() on one very long text: the input first', async () => {
    const d = await firstOfCase('blind9', '5700');
    expect(first(d)).toMatch(INPUT_FIRST);
  });

  // synthetic: inference said in several forms, this process's own tensors (or nothing stated) filling the card
  const inference: Record<string, string> = {
    'a predict call, PyTorch figures': `results = model.predict(frame)\n${TORCH_OOM}`,
    'an inference script, Paddle figures': `python infer.py --image_dir ./scans\n${PADDLE_OOM}`,
    'inference in words': `When I run inference on a scanned page I get:\n${TORCH_OOM}`,
    'deployment, Chinese': `部署之后识别一张图片就报错\n${PADDLE_OOM}`,
  };
  for (const [name, paste] of Object.entries(inference))
    it(`synthetic: ${name}`, async () => {
      const d = await diagnosePaste(paste);
      expect(first(d)).toMatch(INPUT_FIRST);
      expect(first(d)).not.toMatch(FALLBACK);
    });

  // synthetic: where it does not apply
  it('synthetic: a training run keeps the batch experiment', async () => {
    expect(first(await diagnosePaste(`Epoch 1/10\nloss.backward()\n${TORCH_OOM}`))).not.toMatch(INPUT_FIRST);
  });
  it('synthetic: a stated batch of 16 at inference is not this experiment', async () => {
    expect(first(await diagnosePaste(`python infer.py --batch_size 16\n${TORCH_OOM}`))).not.toMatch(INPUT_FIRST);
  });
  it('synthetic: a stated input size answers with the input-size lever itself', async () => {
    expect(first(await diagnosePaste(`python infer.py --img-size 4096\n${TORCH_OOM}`))).not.toMatch(INPUT_FIRST);
  });
});
