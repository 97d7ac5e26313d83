// Principle (issue 23): in evaluation the evaluation batch is the lever only where no kept graph explains the failure,
// and the paste says so: a forward under no_grad (the code, or torch's grad-mode decorator frame, which is a forward
// without gradients and not autograd's backward), the user's own run at a smaller evaluation batch, HF's generating
// evaluation at a stated eval batch (it multiplies the KV cache before beams and new tokens), or a graph framework
// (TensorFlow's ResourceExhaustedError) that keeps no autograd graph at all. A handler that crashed before retrying is no
// "OOM again while handling an OOM". Real logs from test/fixtures/untuned/eval9 (tuned) beside synthetic variants
// written from the principle (said so where they are), all in process through the CLI's own entry.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { evalBatchSaidToFit, predictWithGenerate } from '../../src/diagnose/levers/eval-said.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
/** The first fix names the evaluation batch before no_grad, and changes no training batch. */
function evalBatchFirst(d: CaseDiagnosis | undefined) {
  expect(d?.category).toBe('cuda_oom');
  const s = first(d);
  expect(s).toMatch(/\bbatch\b/i);
  const ng = s.search(/no_grad|inference_mode/);
  if (ng !== -1) expect(s.search(/\bbatch\b/i)).toBeLessThan(ng);
  expect(d?.fixes.every((f) => f.changes.batch === undefined)).toBe(true);
}

const SITE = '/usr/lib/python3.8/site-packages';
const f = (file: string, fn: string, code: string) => [`  File "${file}", line 88, in ${fn}`, `    ${code}`];
const oomLine = (tried: string, total: string, alloc: string, free: string, reserved: string) =>
  `RuntimeError: CUDA out of memory. Tried to allocate ${tried} (GPU 0; ${total} total capacity; ${alloc} already allocated; ${free} free; ${reserved} reserved in total by PyTorch)`;

describe('the grad-mode decorator frame is a forward without gradients, not backward', () => {
  // Synthetic: an evaluate() decorated with @torch.no_grad() at a stated eval batch, on torch < 2.0 (autograd/grad_mode.py)
  // and after (utils/_contextlib.py).
  for (const deco of [`${SITE}/torch/autograd/grad_mode.py`, `${SITE}/torch/utils/_contextlib.py`]) {
    it(`evaluation under ${deco.split('/').slice(-2).join('/')} at a stated eval batch: halve the eval batch`, async () => {
      const log = [
        'python train.py --eval_batch_size 512',
        'Traceback (most recent call last):',
        ...f('train.py', 'main', 'metrics = run_eval(model, loader)'),
        ...f(deco, 'decorate_context', 'return func(*args, **kwargs)'),
        ...f('train.py', 'run_eval', 'out = model(x)'),
        ...f(`${SITE}/torch/nn/modules/module.py`, '_call_impl', 'return forward_call(*input, **kwargs)'),
        oomLine('2.00 GiB', '11.17 GiB', '8.74 GiB', '1.04 GiB', '9.60 GiB'),
      ].join('\n');
      const d = await diagnosePaste(log);
      evalBatchFirst(d);
      expect(first(d)).toMatch(/without gradients/);
      expect(first(d)).toMatch(/256/);
    });
  }

  it('a generate() under the old decorator is inference, not a training step (synthetic)', async () => {
    const log = [
      'Traceback (most recent call last):',
      ...f('generate.py', 'main', 'out = model.generate(ids, max_new_tokens=512)'),
      ...f(`${SITE}/torch/autograd/grad_mode.py`, 'decorate_context', 'return func(*args, **kwargs)'),
      ...f(`${SITE}/transformers/generation_utils.py`, 'generate', 'return self.greedy_search('),
      ...f(`${SITE}/transformers/generation_utils.py`, 'greedy_search', 'outputs = self(**model_inputs)'),
      oomLine('1.00 GiB', '23.70 GiB', '21.90 GiB', '600.00 MiB', '22.40 GiB'),
    ].join('\n');
    const d = await diagnosePaste(log);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/inference/i);
    expect(d?.fixes.every((x) => x.changes.batch === undefined)).toBe(true);
  });
});

describe("the user's own run at a smaller evaluation batch decides", () => {
  it('real: DB validation fits at 12 where training runs at 24 (eval9 4213)', async () => {
    const d = await firstOfCase('eval9', '4213');
    evalBatchFirst(d);
    expect(first(d)).toMatch(/12/);
  });
  it('real: TALLRec evaluate runs once the batch is 1 (zh, eval9 4212)', async () => {
    const d = await firstOfCase('eval9', '4212');
    evalBatchFirst(d);
  });

  // Synthetic sentences, both orders, English and Chinese.
  it.each([
    ['OOM during validation. With validation batch size = 8 it works.', 8],
    ['Validation runs out of memory, but eval_batch_size=4 runs fine.', 4],
    ["I don't get OOM during evaluation when I set the test batch_size to 2.", 2],
    ['验证时显存不足，把 batch_size 改为 2 就可以正常运行', 2],
  ])('reads "%s" as a batch that fits (%i)', (text, batch) => {
    expect(evalBatchSaidToFit(text)?.batch).toBe(batch);
  });
  it.each([
    'Even with batch size 1 it still does not work during validation.',
    'Training with batch size 24 works, validation runs out of memory.',
    'I use a batch_size of 96-128 and validation fails; I can only fit 64 examples.',
    'batch_size=1 也不行，验证时还是显存不足',
  ])('does not read "%s" as a batch that fits', (text) => {
    expect(evalBatchSaidToFit(text)).toBeUndefined();
  });
  it('a synthetic validation OOM with the batch said to fit gets the evaluation batch, not no_grad first', async () => {
    const d = await diagnosePaste(
      ['Out of memory during validation', 'Training at batch 32 is fine.', 'With val batch size = 4 it works.', 'RuntimeError: CUDA error: out of memory'].join(
        '\n',
      ),
    );
    evalBatchFirst(d);
  });
});

describe("HF's generating evaluation at a stated eval batch: the batch multiplies the KV cache first", () => {
  it('real: LLaMA-Factory --predict_with_generate at per_device_eval_batch_size 8 (zh, eval9 4205)', async () => {
    const d = await firstOfCase('eval9', '4205');
    evalBatchFirst(d);
    expect(first(d)).toMatch(/predict_with_generate[^.]*per_device_eval_batch_size 8/);
    expect(first(d)).toMatch(/to 4/);
  });
  it.each([
    ['--predict_with_generate', true],
    ['predict_with_generate: true', true],
    ['predict_with_generate=True,', true],
    ['predict_with_generate: false', false],
    ['--no_predict_with_generate_here', false],
  ])('predictWithGenerate(%j) is %s (synthetic)', (text, on) => {
    expect(predictWithGenerate(text)).toBe(on);
  });
  it('without a stated eval batch, beams and max length come first (synthetic)', async () => {
    const d = await diagnosePaste(
      [
        'Seq2SeqTrainer OOM during evaluation',
        'predict_with_generate: true',
        'generation_num_beams: 8',
        'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB',
      ].join('\n'),
    );
    expect(first(d)).toMatch(/generation_num_beams/);
    expect(first(d)).not.toMatch(/Halve the eval batch/);
  });
});

describe("a script's own evaluation that calls generate(): prompts per call first, never no_grad", () => {
  it('real: TALLRec evaluate.py -> evaluate() -> model.generate on a 24 GB card (eval9 4204)', async () => {
    const d = await firstOfCase('eval9', '4204');
    evalBatchFirst(d);
    expect(first(d)).toMatch(/while the evaluation generated \(evaluate\.py, in evaluate\)/);
    expect(first(d)).toMatch(/already runs without gradients/);
  });
  const gen = (outer: string[][]) =>
    [
      'Traceback (most recent call last):',
      ...outer.flat(),
      ...f(`${SITE}/torch/utils/_contextlib.py`, 'decorate_context', 'return func(*args, **kwargs)'),
      ...f(`${SITE}/transformers/generation/utils.py`, 'generate', 'return self._sample('),
      ...f(`${SITE}/transformers/generation/utils.py`, '_sample', 'outputs = self(**model_inputs)'),
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.',
    ].join('\n');
  it('synthetic: a validation loop of its own that generates', async () => {
    const d = await diagnosePaste(
      gen([
        f('run.py', 'main', 'scores = run_validation(model, tok, data)'),
        f('run.py', 'run_validation', 'out = model.generate(**batch, max_new_tokens=512)'),
      ]),
    );
    evalBatchFirst(d);
    expect(first(d)).toMatch(/max_new_tokens/);
  });
  it('synthetic: a generate() with no evaluation function above it stays inference', async () => {
    const d = await diagnosePaste(gen([f('chat.py', 'main', 'reply = answer(model, prompt)'), f('chat.py', 'answer', 'out = model.generate(**ids)')]));
    expect(first(d)).not.toMatch(/while the evaluation generated/);
  });
});

describe('TensorFlow keeps no autograd graph: its evaluation OOM is the batch it evaluates, never no_grad', () => {
  it('real: slim eval_image_classifier.py on shape[100,64,224,224] (eval9 4221)', async () => {
    const d = await firstOfCase('eval9', '4221');
    evalBatchFirst(d);
    expect(first(d)).not.toMatch(/no_grad|inference_mode/);
  });
  it('real: the official MNIST evaluates its 10,000 test images at once (eval9 4218)', async () => {
    const d = await firstOfCase('eval9', '4218');
    evalBatchFirst(d);
    expect(first(d)).toMatch(/TensorFlow/);
  });
  it('synthetic: evaluation named by the title, the error in TF2 RESOURCE_EXHAUSTED form', async () => {
    const d = await diagnosePaste(
      [
        'OOM during evaluation of my model',
        'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,128,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Conv2D]',
      ].join('\n'),
    );
    evalBatchFirst(d);
    expect(first(d)).not.toMatch(/no_grad|inference_mode/);
  });
});

describe('a title that names the evaluation by its verb places the failure there', () => {
  it('real: "Abort Validate" over one 7.08 GiB request of a 12 GB card: one full-size validation image (eval9 4210)', async () => {
    const d = await firstOfCase('eval9', '4210');
    expect(d?.fixes[0].summary).toMatch(/in evaluation \("Abort Validate"\) on one request of 59%/);
    expect(d?.fixes[0].summary).toMatch(/in pieces/);
  });
  it('synthetic: "Validate fails" titled, the message below', async () => {
    const d = await diagnosePaste(['Validate fails on the second epoch', oomLine('3.00 GiB', '23.70 GiB', '19.20 GiB', '1.10 GiB', '20.10 GiB')].join('\n'));
    expect(d?.fixes[0].summary).toMatch(/evaluation/);
  });
});

describe('a proposal to add no_grad says the forward runs with gradients on', () => {
  it('real: TANGO "eval.py里可以加下torch.no_grad()，不然显存撑不住" (zh, eval9 4217)', async () => {
    const d = await firstOfCase('eval9', '4217');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0].summary).toMatch(/runs with them on/);
  });
  it.each([
    ['Validation OOM\nYou should add torch.no_grad() in validate(), otherwise it runs out of memory.'],
    ['验证时显存不足\n应该加上 torch.no_grad()，否则显存放不下'],
  ])('synthetic: %j gets no_grad first', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.fixes[0].summary).toMatch(/no_grad|inference_mode/);
    expect(d?.fixes[0].summary).toMatch(/runs with them on/);
  });
  it('synthetic: code already under no_grad is no such proposal', async () => {
    const d = await diagnosePaste('Validation OOM\nwith torch.no_grad():\n    out = model(x)\nRuntimeError: CUDA error: out of memory');
    expect(d?.fixes[0].summary ?? '').not.toMatch(/runs with them on/);
  });
});

describe('a handler that crashed before retrying is not an OOM again while handling an OOM', () => {
  it('real: TabR evaluation whose OOM handler hits a missing torch.cuda.OutOfMemoryError (eval9 4219)', async () => {
    const d = await firstOfCase('eval9', '4219');
    expect(d?.category).toBe('cuda_oom');
    evalBatchFirst(d);
  });
  it('synthetic: the same crash in a training step stays a plain OOM', async () => {
    const d = await diagnosePaste(
      [
        oomLine('1.50 GiB', '11.17 GiB', '9.20 GiB', '800.00 MiB', '9.90 GiB'),
        '',
        'During handling of the above exception, another exception occurred:',
        '',
        'Traceback (most recent call last):',
        ...f('train.py', 'step', 'except torch.cuda.OutOfMemoryError:'),
        "AttributeError: module 'torch.cuda' has no attribute 'OutOfMemoryError'",
      ].join('\n'),
    );
    expect(d?.rule).not.toBe('oom-retained-by-exception');
  });
});
