// Principle (issue 23): an OOM in evaluation, validation or predict is fixed by what that phase keeps, never by
// the training batch. HF Trainer keeps every eval batch's logits on the GPU unless eval_accumulation_steps is set;
// Seq2SeqTrainer's generation keeps a KV cache per beam; a script's own loop keeps graphs without no_grad and
// every output it collects as a GPU tensor; Keras evaluates batch by batch without gradients. The evaluation
// batch is a lever only where the paste states it above 1. Each case goes through the CLI
// (`gpu-doctor diagnose --json`): synthetic variants written from the frames' fixed formats, and the real
// Transformers4Rec#693 log (the maintainers' answer there was eval_accumulation_steps).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile, type CaseDiagnosis } from './corpus-case.js';

const dir = mkdtempSync(join(tmpdir(), 'eval-levers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function diagnoseText(text: string): Promise<CaseDiagnosis> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  const d = await diagnoseFile(file);
  expect(d, 'a diagnosis').toBeDefined();
  return d!;
}

const SITE = '/usr/local/lib/python3.12/dist-packages';
const frame = (file: string, fn: string, code = 'return fn(*args, **kwargs)') => [`  File "${file}", line 2207, in ${fn}`, `    ${code}`];
const tb = (frames: string[][], error: string, prefix = '') =>
  ['Traceback (most recent call last):', ...frames.flat(), error].map((l) => prefix + l).join('\n');
const oom = (tried: string, total: string, free: string, alloc: string) =>
  `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which ${free} is free. Of the allocated memory ${alloc} is allocated by PyTorch, and 212.00 MiB is reserved by PyTorch but unallocated.`;
const FORWARD = [
  frame(`${SITE}/torch/nn/modules/module.py`, '_wrapped_call_impl'),
  frame(`${SITE}/torch/nn/modules/module.py`, '_call_impl'),
  frame(`${SITE}/transformers/models/qwen2/modeling_qwen2.py`, 'forward', 'logits = self.lm_head(hidden_states)'),
];
const HF_EVAL = [
  frame('run.py', 'main', 'metrics = trainer.evaluate()'),
  frame(`${SITE}/transformers/trainer.py`, 'evaluate'),
  frame(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
  frame(`${SITE}/transformers/trainer.py`, 'prediction_step', 'outputs = model(**inputs)'),
  ...FORWARD,
];
const OOM = oom('4.64 GiB', '79.19 GiB', '2.10 GiB', '75.90 GiB');

const first = (d: CaseDiagnosis) => d.fixes[0].summary;
/** No fix changes or halves the training batch. */
const trainingBatchUntouched = (d: CaseDiagnosis) => {
  expect(d.fixes.every((f) => f.changes.batch === undefined)).toBe(true);
  expect(d.fixes.some((f) => /^(?:Reduce|Halve) the batch|per_device_train_batch_size/.test(f.summary))).toBe(false);
};

describe('HF Trainer evaluation: eval_accumulation_steps first, the eval batch only when stated above 1', () => {
  it.each([
    ['a plain traceback, no settings', tb(HF_EVAL, OOM)],
    ['an eval-only command with a training batch of 32', 'python run_eval.py --per_device_train_batch_size 32 --do_eval\n' + tb(HF_EVAL, OOM)],
    [
      'trainer.predict under [rank0]: prefixes',
      tb(
        [
          frame('src/train.py', 'run_sft', 'predict_results = trainer.predict(dataset_module["eval_dataset"])'),
          frame(`${SITE}/transformers/trainer.py`, 'predict'),
          frame(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
          frame(`${SITE}/transformers/trainer.py`, 'prediction_step'),
          ...FORWARD,
        ],
        OOM,
        '[rank0]: ',
      ),
    ],
    ['a stated eval batch of 1 (TrainingArguments dump)', 'per_device_eval_batch_size=1,\nper_device_train_batch_size=4,\n' + tb(HF_EVAL, OOM)],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/sets no eval_accumulation_steps/);
    expect(first(d)).toMatch(/preprocess_logits_for_metrics.*prediction_loss_only=True/);
    expect(d.fixes.some((f) => /halve it to/.test(f.summary))).toBe(false);
    trainingBatchUntouched(d);
  });

  it.each([
    ['--per_device_eval_batch_size 16', 16, 8],
    ['--per_device_eval_batch_size="64"', 64, 32],
    ['eval_batch_size: 6', 6, 3],
  ])('a stated eval batch (%s) above the training batch comes down to it first; eval_accumulation_steps follows', async (setting, batch) => {
    // Since 59caade (eval5's threads): an evaluation batch above the training batch that ran is the first lever.
    const d = await diagnoseText(`python run.py --per_device_train_batch_size 4 --do_eval\n${setting}\n${tb(HF_EVAL, OOM)}`);
    expect(first(d)).toMatch(new RegExp(`evaluation batch \\(.*${batch}.*\\) is larger than the training batch`));
    expect(d.fixes.slice(1).some((f) => /eval_accumulation_steps/.test(f.summary))).toBe(true);
    trainingBatchUntouched(d);
  });

  it.each([
    ['--per_device_eval_batch_size 16', 16, 8],
    ['eval_batch_size: 6', 6, 3],
  ])('a stated eval batch (%s) at or under the training batch is the second lever, halved', async (setting, batch, next) => {
    const d = await diagnoseText(`python run.py --per_device_train_batch_size 32 --do_eval\n${setting}\n${tb(HF_EVAL, OOM)}`);
    expect(first(d)).toMatch(/eval_accumulation_steps/);
    const evalBatch = d.fixes.find((f) => /evaluation batch is stated/.test(f.summary));
    expect(evalBatch?.summary).toMatch(new RegExp(`${batch}\\)? and above 1: halve it to ${next}`));
    trainingBatchUntouched(d);
  });

  it('eval_accumulation_steps already set: the experiment that decides (one evaluation at eval batch 1)', async () => {
    const d = await diagnoseText('eval_accumulation_steps=8,\n' + tb(HF_EVAL, OOM));
    expect(first(d)).toMatch(/eval_accumulation_steps 8 already set/);
    expect(first(d)).toMatch(/experiment that decides: one evaluation at per_device_eval_batch_size 1/);
    trainingBatchUntouched(d);
  });

  it("Seq2SeqTrainer generating in evaluation: beams and new tokens, not 'inference' and not the batch", async () => {
    const d = await diagnoseText(
      tb(
        [
          frame('run_summarization.py', 'main', 'metrics = trainer.evaluate(max_length=max_length, num_beams=num_beams)'),
          frame(`${SITE}/transformers/trainer_seq2seq.py`, 'evaluate'),
          frame(`${SITE}/transformers/trainer.py`, 'evaluate'),
          frame(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
          frame(`${SITE}/transformers/trainer_seq2seq.py`, 'prediction_step', 'generated_tokens = self.model.generate(**generation_inputs, **gen_kwargs)'),
          frame(`${SITE}/torch/utils/_contextlib.py`, 'decorate_context'),
          frame(`${SITE}/transformers/generation/utils.py`, 'generate'),
          frame(`${SITE}/transformers/generation/utils.py`, '_beam_search'),
          ...FORWARD,
        ],
        oom('1.02 GiB', '39.39 GiB', '640.00 MiB', '37.90 GiB'),
      ),
    );
    expect(d.facts.phase).toBe('eval');
    expect(first(d)).toMatch(/generation_num_beams and generation_max_length/);
    expect(first(d)).not.toMatch(/This is inference/);
    trainingBatchUntouched(d);
  });

  it('real: NVIDIA-Merlin/Transformers4Rec#693 (trainer.evaluate in a notebook): eval_accumulation_steps first', async () => {
    const d = (await diagnoseFile(resolve(import.meta.dirname, '../fixtures/phase-levers/transformers4rec-693-trainer-evaluate.log')))!;
    expect(first(d)).toMatch(/^The card ran out in the Trainer's evaluation .*sets no eval_accumulation_steps/);
    expect(first(d)).not.toMatch(/per_device_eval_batch_size/);
    trainingBatchUntouched(d);
  });
});

describe("a script's own evaluation loop: what the paste shows decides between no_grad and what is collected", () => {
  const validate = (code: string) => [frame('train.py', 'main', 'val_loss = validate(model, val_loader)'), frame('train.py', 'validate', code)];
  it.each([
    ['torch.cat of every batch', validate('all_logits = torch.cat(all_logits, dim=0)')],
    ['a list of outputs', validate('preds.append(model(images))')],
    ['torch.stack of embeddings', validate('embeddings = torch.stack(outs)')],
  ])('the failing line collects outputs (%s): move them off the GPU per batch', async (_name, frames) => {
    const d = await diagnoseText(tb(frames, OOM));
    expect(first(d)).toMatch(/on a line that collects outputs.*\.detach\(\)\.cpu\(\)/);
    trainingBatchUntouched(d);
  });

  it.each([
    ['a with-block', '    with torch.no_grad():\n        for images, labels in val_loader:'],
    ['a decorator', '@torch.no_grad()\ndef validate(model, loader):'],
    ['inference_mode', '    with torch.inference_mode():'],
  ])('the pasted code runs evaluation under no_grad (%s): not "wrap it in no_grad", but what is kept', async (_name, code) => {
    const d = await diagnoseText(`${code}\n${tb([...validate('out = model(images)'), ...FORWARD], OOM)}`);
    expect(first(d)).toMatch(/the paste shows evaluation code under .*(?:no_grad|inference_mode)\(\)/);
    expect(first(d)).not.toMatch(/Wrap the loop/);
    trainingBatchUntouched(d);
  });

  it('no no_grad anywhere in the paste: wrap the loop in inference_mode, and the reply says what it read', async () => {
    const d = await diagnoseText('python train.py --batch-size 64\n' + tb([...validate('out = model(images)'), ...FORWARD], OOM));
    expect(first(d)).toMatch(/nothing in the paste runs it under torch\.no_grad\(\).*Wrap the loop in `with torch\.inference_mode\(\):`/);
    trainingBatchUntouched(d);
  });
});

describe('Lightning and Keras evaluation', () => {
  it("Lightning's validation_step: what it keeps first, the loader's batch only if above 1", async () => {
    const d = await diagnoseText(
      tb(
        [
          frame(`${SITE}/lightning/pytorch/loops/fit_loop.py`, 'advance'),
          frame(`${SITE}/lightning/pytorch/loops/training_epoch_loop.py`, 'on_advance_end'),
          frame(`${SITE}/lightning/pytorch/loops/training_epoch_loop.py`, '_run_validation'),
          frame(`${SITE}/lightning/pytorch/loops/evaluation_loop.py`, 'run'),
          frame(`${SITE}/lightning/pytorch/strategies/strategy.py`, 'validation_step'),
          frame('model.py', 'validation_step', 'logits = self(x)'),
          ...FORWARD,
        ],
        OOM,
      ),
    );
    expect(first(d)).toMatch(/^The card ran out in Lightning's validation \([^)]*\), which already runs without gradients: keep what validation_step returns/);
    trainingBatchUntouched(d);
  });

  it("Keras's evaluate: its batch_size, not no_grad", async () => {
    const d = await diagnoseText(
      tb(
        [
          frame('train.py', '<module>', 'model.evaluate(test_ds)'),
          frame(`${SITE}/keras/src/utils/traceback_utils.py`, 'error_handler'),
          frame(`${SITE}/keras/src/backend/tensorflow/trainer.py`, 'evaluate'),
        ],
        'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[64,512,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
      ),
    );
    expect(first(d)).toMatch(/Keras's evaluation or prediction.*batch_size to model\.evaluate\(\)/);
    expect(first(d)).not.toMatch(/no_grad/);
  });
});
