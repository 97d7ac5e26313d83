// Principle (issue 23): an evaluation can fail in what it keeps or computes over the whole set rather than in one batch's
// forward: a score or similarity matrix of every query against every candidate, every batch's outputs concatenated on
// the GPU, a data array put on the device whole. Its size grows with the set, so neither the batch nor no_grad is the
// lever: keep each batch's outputs on the CPU and compute over the set in chunks. The evidence is read in fixed forms:
// frames inside the evaluation's own frame with no model call among them; the pass's progress bar complete (or past half
// of many batches) as the last bar before the failure; the report saying the failure came while concatenating the set's
// outputs; TensorFlow's failed tensor whose leading dimension is no batch's. Real logs from the read splits blind6 /
// blind7 beside synthetic variants written from the principle (each says so), in process through the CLI's own entry.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { readEvalOverSet, tfWholeArray, evalWorkAfterForward } from '../../src/diagnose/levers/eval-over-set.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const OVER_SET = /keeps or computes over the whole set/;
/** The first fix is the set's lever: outputs to the CPU, chunks; no batch change, no_grad not offered as the fix. */
function overSetFirst(d: CaseDiagnosis | undefined) {
  expect(d?.category).toBe('cuda_oom');
  expect(first(d)).toMatch(OVER_SET);
  expect(first(d)).toMatch(/CPU/);
  expect(first(d)).toMatch(/chunks/);
  expect(d?.fixes[0]?.changes.batch).toBeUndefined();
}

const SITE = '/usr/lib/python3.10/site-packages';
const frame = (file: string, fn: string, code: string) => [`  File "${file}", line 88, in ${fn}`, `    ${code}`];
const OOM2 =
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 18.63 GiB. GPU 0 has a total capacity of 23.55 GiB of which 3.10 GiB is free. Including non-PyTorch memory, this process has 20.44 GiB memory in use. Of the allocated memory 19.80 GiB is allocated by PyTorch, and 181.00 MiB is reserved by PyTorch but unallocated.';

describe('real evaluations that failed over the set (read splits)', () => {
  it('blind6/3825: MUSE word translation, scores.sub_ below the evaluator with no model call', async () => {
    const d = await firstOfCase('blind6', '3825');
    overSetFirst(d);
    expect(first(d)).toMatch(/get_word_translation_accuracy/);
  });
  it('blind6/3826: czsl evaluate_predictions -> score_fast_model over every image x pair', async () => {
    overSetFirst(await firstOfCase('blind6', '3826'));
  });
  it('blind6/3844: bert4torch evaluate dies at 3025/3799 batches', async () => {
    const d = await firstOfCase('blind6', '3844');
    overSetFirst(d);
    expect(first(d)).toMatch(/3025\/3799/);
  });
  it('blind7/3924: MTEB MSMARCO, both encode passes at 100%, then 93.68 GiB', async () => {
    overSetFirst(await firstOfCase('blind7', '3924'));
  });
  it('blind7/3900: tf.keras predict ran every batch, failed concatenating the predictions', async () => {
    const d = await firstOfCase('blind7', '3900');
    overSetFirst(d);
    expect(first(d)).toMatch(/concating the predictions/);
  });
  it('blind6/3827: Keras validation_split put shape[160000,64,64,1] double on the GPU: the whole array, not a batch', async () => {
    const d = await firstOfCase('blind6', '3827');
    expect(first(d)).toMatch(/shape\[160000,64,64,1\] double/);
    expect(first(d)).toMatch(/from_tensor_slices/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
});

describe('an evaluation script or a metrics module places the failure in the evaluation', () => {
  it('eval10/5100 (tuned, real): fld metrics/PrecisionRecall.py get_nn_dists -> torch.cdist, 50.10 GiB', async () => {
    const d = await firstOfCase('eval10', '5100');
    overSetFirst(d);
    expect(first(d)).toMatch(/cdist/);
  });
  it('synthetic: an eval_*.py script whose scoring function fails with no model call', async () => {
    const log = [
      'Traceback (most recent call last):',
      ...frame('tools/eval_retrieval.py', '<module>', 'main()'),
      ...frame('tools/eval_retrieval.py', 'main', 'r1 = recall_at_k(q, g, 1)'),
      ...frame('tools/eval_retrieval.py', 'recall_at_k', 'd = torch.cdist(q, g)'),
      OOM2,
    ].join('\n');
    overSetFirst(await diagnosePaste(log));
  });
  it("synthetic control: a test_*.py file is pytest's, not an evaluation script", async () => {
    const log = [
      'Traceback (most recent call last):',
      ...frame('tests/test_ops.py', 'test_big_matmul', 'c = helper(a, b)'),
      ...frame('tests/test_ops.py', 'helper', 'return a @ b'),
      OOM2,
    ].join('\n');
    expect(first(await diagnosePaste(log))).not.toMatch(OVER_SET);
  });
});

describe('synthetic variants written from the principle', () => {
  it('synthetic: a retrieval metric multiplies all query and corpus embeddings under evaluate() (PyTorch 2.x message)', async () => {
    const log = [
      'Traceback (most recent call last):',
      ...frame('eval_retrieval.py', '<module>', 'metrics = evaluate(model, queries, corpus)'),
      ...frame('eval_retrieval.py', 'evaluate', 'ranks = rank_all(q_emb, c_emb)'),
      ...frame('eval_retrieval.py', 'rank_all', 'sim = q_emb @ c_emb.T'),
      OOM2,
    ].join('\n');
    const d = await diagnosePaste(log);
    overSetFirst(d);
    expect(first(d)).toMatch(/rank_all/);
  });

  it('synthetic: old PyTorch frames (module.py __call__) below the evaluation are a model call, not the set', async () => {
    const log = [
      'Traceback (most recent call last):',
      ...frame('train.py', 'validate', 'out = net(images)'),
      ...frame(`${SITE}/torch/nn/modules/module.py`, '__call__', 'result = self.forward(*input, **kwargs)'),
      ...frame('models/unet.py', 'up', 'x = torch.cat([x1, x2], dim=1)'),
      'RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.92 GiB total capacity; 9.80 GiB already allocated; 300.00 MiB free; 60.00 MiB cached)',
    ].join('\n');
    expect(first(await diagnosePaste(log))).not.toMatch(OVER_SET);
  });

  it('synthetic: a tqdm evaluation bar at 100% right before the OOM, the phase said in the title', async () => {
    const log = ['OOM at the end of evaluation', 'Evaluating: 100%|██████████| 812/812 [04:10<00:00,  3.24it/s]', OOM2].join('\n');
    overSetFirst(await diagnosePaste(log));
  });

  it('synthetic: Chinese report with an inference bar complete, then the OOM', async () => {
    const log = ['推理时显存不足', '推理: 100%|██████████| 200/200 [01:02<00:00,  3.20it/s]', OOM2].join('\n');
    overSetFirst(await diagnosePaste(log));
  });

  it('synthetic control: an evaluation bar at 10 of 500 batches is one batch failing, not the set', async () => {
    const log = ['CUDA out of memory during validation', 'Validation:   2%|▏         | 10/500 [00:03<02:40,  3.05it/s]', OOM2].join('\n');
    expect(first(await diagnosePaste(log))).not.toMatch(OVER_SET);
  });

  it("synthetic control: a training epoch's bar at 100% says nothing of the evaluation after it", async () => {
    const log = ['CUDA out of memory during validation', 'Epoch 3: 100%|██████████| 500/500 [05:00<00:00,  1.66it/s, loss=0.31]', OOM2].join('\n');
    expect(first(await diagnosePaste(log))).not.toMatch(OVER_SET);
  });

  it('synthetic: Keras predict said to fail while concatenating the outputs', async () => {
    const log = [
      'ResourceExhaustedError when calling model.predict on a big array',
      'All batches finish, then it fails while concatenating the outputs of every batch.',
      'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[4096,512,512,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:ConcatV2]',
    ].join('\n');
    overSetFirst(await diagnosePaste(log));
  });

  it('synthetic: a whole NumPy array handed to fit() lands on the GPU (a leading dimension no batch has)', async () => {
    const log = [
      'model.fit(x_train, y_train, batch_size=32, epochs=5)',
      'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[50000,224,224,3] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:GatherV2]',
    ].join('\n');
    const d = await diagnosePaste(log);
    expect(first(d)).toMatch(/shape\[50000,224,224,3\] float/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
});

describe('outputs said to be kept on the GPU across the pass', () => {
  it('eval10/5105 (tuned, real): fastinference get_preds stores the inputs on the GPU until the loop ends', async () => {
    overSetFirst(await firstOfCase('eval10', '5105'));
  });
  it('synthetic: predictions said to be accumulated on the device during evaluation', async () => {
    const log = ['CUDA out of memory during evaluation', 'The predictions are accumulated on the device for the whole validation set.'].join('\n');
    overSetFirst(await diagnosePaste(log));
  });
});

describe('the readers, on their own (synthetic lines)', () => {
  it('a complete or late bar before the failure counts; an early or training bar does not', () => {
    expect(readEvalOverSet('Batches: 100%|█| 31/31 [00:01<00:00]\nCUDA out of memory')).toMatch(/31\/31/);
    expect(readEvalOverSet('Eval:  60%|██  | 600/1000 [00:30<00:20]\nTraceback (most recent call last):')).toMatch(/600\/1000/);
    expect(readEvalOverSet('Eval:  60%|██  | 60/100 [00:30<00:20]\nCUDA out of memory')).toBeUndefined();
    expect(readEvalOverSet('Epoch 1: 100%|█| 31/31 [00:01<00:00]\nCUDA out of memory')).toBeUndefined();
    expect(readEvalOverSet('Loading checkpoint shards: 100%|█| 33/33 [00:12<00:00]\nCUDA out of memory')).toBeUndefined();
    expect(readEvalOverSet('Map: 100%|█| 5000/5000 [00:02<00:00]\nCUDA out of memory')).toBeUndefined();
    expect(readEvalOverSet('1532/1532 [==============================] - 40s\nResourceExhaustedError')).toMatch(/1532\/1532/);
    expect(readEvalOverSet('在拼接预测结果时显存不足')).toMatch(/拼接/);
  });
  it('a TensorFlow tensor is a whole array only past any batch, with 3 dimensions or more', () => {
    expect(tfWholeArray('OOM when allocating tensor with shape[160000,64,64,1] and type double on GPU')).toBe('shape[160000,64,64,1] double');
    expect(tfWholeArray('OOM when allocating tensor with shape[64,64,64,1] and type float on GPU')).toBeUndefined();
    expect(tfWholeArray('OOM when allocating tensor with shape[250000,1024] and type float on GPU')).toBeUndefined();
  });
  it('frames inside the evaluation frame with no model call are its own work; a forward among them is not', () => {
    const own = [
      { file: 'metrics.py', fn: 'score_all', code: 'scores = a @ b.T' },
      { file: 'eval.py', fn: 'evaluate' },
    ];
    expect(evalWorkAfterForward(own, 1)).toMatch(/score_all/);
    const model = [
      { file: 'metrics.py', fn: 'score_all', code: 'scores = self.model(x)' },
      { file: 'eval.py', fn: 'evaluate' },
    ];
    expect(evalWorkAfterForward(model, 1)).toBeUndefined();
    expect(evalWorkAfterForward(own, 0)).toBeUndefined();
    // A traceback cut above the model's frames: a step function, or the model handed to a call, is a model call.
    const cut = [
      { file: 'trainer.py', fn: 'valid_step', code: 'loss = self.task.valid_step(sample, self.model, crit)' },
      { file: 'eval.py', fn: 'validate' },
    ];
    expect(evalWorkAfterForward(cut, 1)).toBeUndefined();
  });
});
