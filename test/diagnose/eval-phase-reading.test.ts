// Principles (issue 23), each with synthetic variants written from the principle (other tools, names, numbers,
// Chinese wording) beside real threads of test/fixtures/untuned/eval5, and checked through the CLI
// (`gpu-doctor diagnose --json`):
// - Testing is evaluation: a report that places its failure "while testing", "in test mode", "when attempting to
//   evaluate", "running eval.py", or in Keras's predict_function gets the evaluation's levers, never the training
//   batch. A script's own `def test` frame is evaluation too, except under pytest / unittest.
// - A report that says the forward ran with gradients on ("without torch.no_grad()") names a forward that needs
//   none: no_grad / inference_mode first, quoting the sentence.
// - The whole evaluation set fed as one batch: split it into batches. An evaluation batch above the training batch
//   that ran: bring it down to the training batch.
// - An evaluation at batch 1 cannot shrink its batch: TensorFlow / Keras (no graph kept) have one input too large,
//   tile or shrink it; a PyTorch loop gets the experiment that decides (inference_mode, then the input's size).
// - TensorFlow's own evaluation frames (the Estimator's evaluate, Keras's predict/test functions) are an evaluation
//   that keeps no autograd graph.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { diagnoseFile, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { reportedPhase } from '../../src/diagnose/levers/reported-phase.js';
import { phaseFromFrames, type Frame } from '../../src/diagnose/phase.js';
import { readEvalSettings } from '../../src/diagnose/levers/eval.js';

const dir = mkdtempSync(join(tmpdir(), 'eval-reading-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
async function diagnoseText(text: string): Promise<CaseDiagnosis> {
  const file = join(dir, `case-${n++}.log`);
  writeFileSync(file, text);
  const d = await diagnoseFile(file);
  expect(d, 'a diagnosis').toBeDefined();
  return d!;
}
const first = (d: CaseDiagnosis) => d.fixes[0]?.summary ?? '';
const noTrainingBatch = (d: CaseDiagnosis) => {
  expect(d.fixes[0]?.changes?.batch, 'the first fix does not change the training batch').toBeUndefined();
  expect(first(d)).not.toMatch(/^Reduce the batch/);
};

describe('testing is evaluation (levers/reported-phase.ts)', () => {
  it.each([
    ['cuda out of memory while testing', 'plain'],
    ['CUDA out of memory in test mode', 'plain'],
    ['RuntimeError: CUDA out of memory during the test phase of my detector', 'plain'],
    ['Above code will run out of memory when do a accuracy test every 100 steps.', 'plain'],
    ['I keep getting OOM when attempting to evaluate the model on the dev split', 'plain'],
    ['python tools/test.py configs/x.py gives CUDA out of memory', 'plain'],
    ['Trainer predict method throws out of memory error on a T5 during testing', 'hf'],
    ['ResourceExhaustedError in predict_function', 'plain'],
    ['测试时显存不足，训练是正常的', 'plain'],
  ])('%s -> eval (%s)', (sentence, loop) => {
    const v = reportedPhase(`${sentence}\n`);
    expect(v?.phase).toBe('eval');
    expect(v?.evalLoop).toBe(loop);
  });

  it('Keras named by its compiled function (predict_function, test_function) is a Keras evaluation', () => {
    expect(reportedPhase('ResourceExhaustedError in predict_function\n')?.evalKeras).toBe(true);
    expect(reportedPhase('OOM in test_function after two epochs of fit\n')?.evalKeras).toBe(true);
  });

  it.each([
    'The unit test fails: CUDA out of memory in the unit test of the sampler',
    'CUDA out of memory during training; the test set is only 200 images',
    'pytest tests/test_model.py raised CUDA out of memory',
    'Every time after the test of the first epoch, the training step runs out of memory',
  ])('not an evaluation: %s', (sentence) => {
    expect(reportedPhase(`${sentence}\n`)).toBeUndefined();
  });
});

describe('the report says the forward ran with gradients on: no_grad first', { timeout: 180_000 }, () => {
  it.each([
    ['without torch.no_grad()', 'My inference loop runs without torch.no_grad() and finally CUDA out of memory'],
    [
      "without setting 'with torch.no_grad()'",
      "In the inference process, without setting 'with torch.no_grad()', GPU usage keeps increasing, finally out of memory.",
    ],
    [
      'gradient computations not turned off',
      'OOM when computing on test set.\nThe function test() computes the loss without turning gradient computations off.',
    ],
    ['no_grad is not used', 'RuntimeError: CUDA out of memory\nno_grad() is not used in the evaluation script'],
    ['zh', '推理的时候显存不足 out of memory\n代码里没有加 torch.no_grad()'],
  ])('%s', (_name, text) => {
    const v = reportedPhase(`${text}\n`);
    expect(v?.phase).toBe('eval');
    expect(v?.gradsOnStated).toBeDefined();
  });

  it('a sentence that shows no_grad in use is not that statement', () => {
    expect(reportedPhase('with torch.no_grad() the validation is fine; CUDA out of memory comes in backward\n')?.gradsOnStated).toBeUndefined();
  });

  it('a no_grad the report says is missing is not code shown under no_grad (readEvalSettings)', () => {
    expect(readEvalSettings('the test loop runs without `with torch.no_grad()` and runs out of memory\n').eval.noGradShown).toBeUndefined();
    expect(readEvalSettings('测试代码没有加 with torch.no_grad()\n').eval.noGradShown).toBeUndefined();
    expect(readEvalSettings('    with torch.no_grad():\n        out = model(x)\n').eval.noGradShown).toBe('with torch.no_grad()');
  });

  it.each([
    [
      'a test loop',
      'My classifier hits CUDA out of memory when computing on the test set.\nThe function test(..) computes loss on the test set without turning gradient computations off.\n',
    ],
    [
      'an inference loop with figures',
      "GPU out of memory in the inference process, without setting 'with torch.no_grad()'\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free.\n",
    ],
    ['zh', '测试的时候爆显存 CUDA out of memory\n测试代码没有加 with torch.no_grad()\n'],
  ])('through the CLI (%s): inference_mode / no_grad first, quoting the report', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/the report says it runs with them on \(".+"\).*torch\.inference_mode\(\)/);
    noTrainingBatch(d);
  });

  it('real: jhjacobsen/invertible-resnet#15 (eval5/2001) and zhanhz/PC-NBV_pytorch#3 (eval5/2015)', async () => {
    for (const id of ['2001', '2015']) {
      const d = (await firstOfCase('eval5', id))!;
      expect(first(d), id).toMatch(/runs with them on.*inference_mode/);
    }
  });
});

describe('the evaluation batch: the whole set at once, above the training batch, at batch 1', { timeout: 180_000 }, () => {
  it.each([
    [
      'markdown emphasis',
      'The **whole** validation dataset (`batch_size = 6,854`) was passed in after a training epoch. Then it caused CUDA out of memory ERROR.',
    ],
    ['feeds in', 'CUDA out of memory at the end of each epoch: the script feeds the entire test set into the network'],
  ])('the whole evaluation set as one batch (%s): split it into batches', async (_name, text) => {
    const d = await diagnoseText(`${text}\n`);
    expect(first(d)).toMatch(/the whole evaluation set goes through the model as one batch.*Split the evaluation into batches/);
    noTrainingBatch(d);
  });

  const SITE = '/opt/conda/lib/python3.11/site-packages';
  const f = (file: string, fn: string, code = 'return fn(*args, **kwargs)') => `  File "${file}", line 812, in ${fn}\n    ${code}`;
  const hfEval = [
    'Traceback (most recent call last):',
    f('run_glue.py', 'main', 'metrics = trainer.evaluate()'),
    f(`${SITE}/transformers/trainer.py`, 'evaluate'),
    f(`${SITE}/transformers/trainer.py`, 'evaluation_loop'),
    f(`${SITE}/transformers/trainer.py`, 'prediction_step', 'outputs = model(**inputs)'),
    f(`${SITE}/torch/nn/modules/module.py`, '_call_impl'),
    f(`${SITE}/transformers/models/bert/modeling_bert.py`, 'forward', 'attention_probs = nn.functional.softmax(attention_scores, dim=-1)'),
  ].join('\n');
  it.each([
    ['HF flags', 'python run_glue.py --per_device_train_batch_size 8 --per_device_eval_batch_size 128', 'per_device_eval_batch_size 128', '8'],
    ['YAML keys', 'batch_size: 16\neval_batch_size: 64', 'eval_batch_size 64', '16'],
  ])('an evaluation batch above the training batch (%s): bring it down to the training batch first', async (_name, settings, setting, train) => {
    const d = await diagnoseText(
      `${settings}\n${hfEval}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.21 GiB is free.\n`,
    );
    expect(first(d)).toContain(`the evaluation batch (${setting}) is larger than the training batch (${train})`);
    noTrainingBatch(d);
  });

  it('eval batch equal to the training batch: not that lever (the Trainer keeps the logits: eval_accumulation_steps)', async () => {
    const d = await diagnoseText(
      `python run_glue.py --per_device_train_batch_size 32 --per_device_eval_batch_size 32\n${hfEval}\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.00 GiB. GPU 0 has a total capacity of 15.77 GiB of which 1.21 GiB is free.\n`,
    );
    expect(first(d)).not.toContain('is larger than the training batch');
    expect(first(d)).toContain('eval_accumulation_steps');
  });

  const tfEval = [
    'Traceback (most recent call last):',
    f('train.py', 'main', 'classifier.evaluate(input_fn=eval_input_fn, hooks=eval_hooks)'),
    f('/home/u/.local/lib/python3.6/site-packages/tensorflow/python/estimator/estimator.py', 'evaluate', 'name=name)'),
    f('/home/u/.local/lib/python3.6/site-packages/tensorflow/python/estimator/estimator.py', '_evaluate_model'),
    f('/home/u/.local/lib/python3.6/site-packages/tensorflow/python/training/evaluation.py', '_evaluate_once', 'session.run(eval_ops, feed_dict)'),
  ].join('\n');
  it.each([
    ['a segmentation map', 'shape[1,256,2268,1134]'],
    ['a volume', 'shape[1,64,512,512,32]'],
  ])('TensorFlow evaluation failing on a tensor of batch 1 (%s): one input too large, tile or shrink it', async (_name, shape) => {
    const d = await diagnoseText(
      `${tfEval}\ntensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with ${shape} and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n`,
    );
    expect(first(d)).toMatch(
      /TensorFlow \/ Keras evaluation or prediction \(evaluation\.py, in _evaluate_once\) at batch 1.*in tiles.*smaller input image size/,
    );
    expect(first(d)).not.toMatch(/no_grad|inference_mode/);
  });

  it.each([
    ['sequence tagger', 'I keep getting out of memory when attempting to evaluate the models on CoNLL. I reduced to `batch_size=1` and still get it.'],
    ['detector', 'CUDA out of memory while testing, even with batch size 1, on a 6 GB card'],
  ])('a PyTorch evaluation at batch 1 (%s): the experiment that decides, not a smaller batch', async (_name, text) => {
    const d = await diagnoseText(`${text}\n`);
    expect(first(d)).toMatch(/at batch 1, so a smaller batch is not possible\. The experiment that decides: .*inference_mode.*sequence length/);
    noTrainingBatch(d);
  });

  it('real: PL-Marker#7 (eval5/2012) and tensorflow-deeplab-v3-plus#19 (eval5/2014)', async () => {
    expect(first((await firstOfCase('eval5', '2012'))!)).toMatch(/at batch 1, so a smaller batch is not possible/);
    expect(first((await firstOfCase('eval5', '2014'))!)).toMatch(/at batch 1: no gradients are kept there/);
  });
});

describe('evaluation read from frames (phase.ts)', { timeout: 180_000 }, () => {
  const fr = (file: string, fn: string): Frame => ({ file, fn });
  it.each([
    ['Keras predict', [fr('/x/keras/engine/training.py', 'predict_function'), fr('/x/keras/engine/training.py', 'predict'), fr('run.py', '<module>')]],
    [
      'tf.keras test_function',
      [fr('/x/tensorflow/python/keras/engine/training.py', 'test_function'), fr('/x/tensorflow/python/keras/engine/training.py', 'evaluate')],
    ],
    ['TF Estimator', [fr('/x/tensorflow/python/training/evaluation.py', '_evaluate_once'), fr('/x/tensorflow/python/estimator/estimator.py', 'evaluate')]],
  ])('%s: evaluation without an autograd graph', (_name, frames) => {
    const v = phaseFromFrames(frames);
    expect(v?.phase).toBe('eval');
    expect(v?.evalKeras).toBe(true);
  });

  it.each([
    ['def test', 'test'],
    ['test_epoch', 'test_epoch'],
    ['run_test', 'run_test'],
  ])("a script's own %s frame is evaluation", (_name, fn) => {
    const v = phaseFromFrames([fr('/x/torch/nn/modules/module.py', '_call_impl'), fr('main.py', fn), fr('main.py', 'main')]);
    expect(v?.phase).toBe('eval');
    expect(v?.evalLoop).toBe('plain');
  });

  it('under pytest a test_* function is a test runner, not an evaluation', () => {
    const v = phaseFromFrames([
      fr('/x/torch/nn/modules/module.py', '_call_impl'),
      fr('tests/test_model.py', 'test_forward'),
      fr('/x/site-packages/_pytest/python.py', 'pytest_pyfunc_call'),
    ]);
    expect(v?.phase).not.toBe('eval');
  });

  it("through the CLI: a script's own test() without no_grad gets inference_mode, not the batch", async () => {
    const d = await diagnoseText(
      [
        'python main.py --batch-size 128',
        'Traceback (most recent call last):',
        '  File "main.py", line 201, in <module>',
        '    acc = test(model, test_loader)',
        '  File "main.py", line 88, in test',
        '    output = model(data)',
        '  File "/usr/lib/python3/site-packages/torch/nn/modules/module.py", line 1501, in _call_impl',
        '    return forward_call(*args, **kwargs)',
        'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB (GPU 0; 7.79 GiB total capacity; 6.62 GiB already allocated; 52.31 MiB free; 6.80 GiB reserved in total by PyTorch)',
      ].join('\n') + '\n',
    );
    expect(first(d)).toMatch(/evaluation loop \(main\.py, in test\).*inference_mode/);
    noTrainingBatch(d);
  });
});
