// Principle (issue 23, evaluation levers): a sequence-to-sequence toolkit validates periodically inside its own trainer,
// under no_grad, and builds its validation batches by a setting of its own (OpenNMT-py's -valid_batch_size, fairseq's
// --batch-size-valid / --max-tokens-valid), not the training batch. An OOM in that validation is fixed by that setting;
// no_grad is no lever there, and the training command can stay. The toolkit is read by its fixed vocabulary (its package
// path, its console command). The real log is from the read split blind7; the others are synthetic variants.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';

describe("a toolkit's own validation: its validation batch first", () => {
  it('blind7/3940 (real): OpenNMT-py "CUDA outof memory on validation loop"', async () => {
    const s = (await firstOfCase('blind7', '3940'))?.fixes[0]?.summary ?? '';
    expect(s).toMatch(/-valid_batch_size/);
    expect(s).not.toMatch(/inference_mode/);
  });
  it('synthetic: fairseq-train failing in its validate step', async () => {
    const log = [
      'fairseq-train data-bin/wmt --arch transformer --max-tokens 4096',
      'Traceback (most recent call last):',
      '  File "/opt/conda/lib/python3.10/site-packages/fairseq_cli/train.py", line 420, in validate',
      '    trainer.valid_step(sample)',
      '  File "/opt/conda/lib/python3.10/site-packages/fairseq/trainer.py", line 1100, in valid_step',
      '    _loss, sample_size, logging_output = self.task.valid_step(sample, self.model, self.criterion)',
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free.',
    ].join('\n');
    expect(await first(log)).toMatch(/--batch-size-valid/);
  });
  it('synthetic: onmt_train with the OOM told during validation', async () => {
    expect(await first('onmt_train -config en-de.yaml\nCUDA out of memory during validation at step 10000')).toMatch(/-valid_batch_size/);
  });
  it("synthetic control: a script's own validation loop still gets no_grad first", async () => {
    const log = [
      'Traceback (most recent call last):',
      '  File "train.py", line 80, in validate',
      '    out = model(x)',
      '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
      '    return forward_call(*args, **kwargs)',
      'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free.',
    ].join('\n');
    expect(await first(log)).toMatch(/inference_mode/);
  });
});
