// Growth by accumulation: a TensorFlow/Keras model built or loaded again per iteration in one process
// (levers/model-rebuilt.ts). The evidence is TensorFlow's unique-name suffix on the failed op's layer scope at 20 copies
// or more where the op creates variables (or the run is told to have gone on first), or the report telling a model
// built / loaded / fit per unit of a loop in a TF/Keras paste. The verdict is growth, the first fix what accumulates
// (build once outside the loop, clear_session), not the batch. Real read-split cases beside synthetic variants written
// from the principle (said so), and near misses where it must not fire.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const REBUILT = /^The memory accumulates because the model is built again/;
const TF2_OOM = (op: string) =>
  `tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[4096,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc [Op:Mul] name: ${op}`;
const TF1_OOM =
  'ResourceExhaustedError: OOM when allocating tensor with shape[3,3,256,256] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';

describe('real threads (read splits)', () => {
  it('blind12/7165: "fc1_24/kernel/Initializer": the 25th copy of a layer being created, growth, build once', async () => {
    const d = await firstOfCase('blind12', '7165');
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(REBUILT);
    expect(first(d)).toMatch(/copy number 25[\s\S]*clear_session/);
  });
  it('blind13/7667: a model loaded "so many times" before a TF OOM: growth, clear_session before each reload', async () => {
    const d = await firstOfCase('blind13', '7667');
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(REBUILT);
  });
  it('blind13/7663: Model.fit() in a loop with memory climbing: growth (the told version regression keeps its first place)', async () => {
    const d = await firstOfCase('blind13', '7663');
    expect(d?.category).toBe('growing_memory_leak');
  });
  it("blind8/5662: Keras's per-model 'training_12' scope keeps its own fix and verdict", async () => {
    const d = await firstOfCase('blind8', '5662');
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/^The failed op 'training_12/);
  });
});

describe('the layer scope suffix (synthetic)', () => {
  it.each([
    ['TF2 eager name:', TF2_OOM('dense_31/kernel/Initializer/random_uniform/'), 32],
    ['TF1 Caused by op', [TF1_OOM, "Caused by op 'conv2d_57/kernel/Initializer/random_uniform/RandomUniform', defined at:"].join('\n'), 58],
    ['TF1.13 node', [TF1_OOM, '\t [[{{node block1_conv1_40/kernel/Initializer/random_uniform}}]]'].join('\n'), 41],
  ])('%s: a layer created for the Nth time is growth', async (_n, paste, copies) => {
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(REBUILT);
    expect(first(d)).toContain(`copy number ${copies}`);
  });
  it('a forward op of a layer copied 200 times after a run told before it: growth (synthetic)', async () => {
    const d = await diagnosePaste(
      ['Self-play after 50 iterations ran out of GPU memory with keras.', "Caused by op 'conv2d_399/Conv2D', defined at:"].join('\n'),
    );
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toContain('copy number 400');
  });
  it('a forward op of a deep model (no Initializer, no run told before) is not taken', async () => {
    const d = await diagnosePaste([TF1_OOM, "Caused by op 'batch_normalization_52/FusedBatchNorm', defined at:"].join('\n'));
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(REBUILT);
  });
  it('a TF-slim model scope with a version and depth (resnet_v1_101) is a name, not a copy count', async () => {
    const d = await diagnosePaste(TF2_OOM('resnet_v1_101/conv1/weights/Initializer/truncated_normal/'));
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(REBUILT);
  });
  it('a few copies (dense_5 at its initializer) are one model, not a rebuild', async () => {
    const d = await diagnosePaste(TF2_OOM('dense_5/kernel/Initializer/random_uniform/'));
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).not.toMatch(REBUILT);
  });
});

describe('a model built per iteration, told (synthetic)', () => {
  it.each([
    ['load_model in a loop', 'I call load_model inside a for loop to evaluate each checkpoint and after a while:'],
    ['a new model every game', 'The worker creates a new model every game, and after two days it crashes with'],
    ['model.fit() repeatedly', 'We call model.fit() repeatedly for hyper-parameter search and get'],
    ['zh: 每次循环都创建模型', '每次循环都重新创建模型，跑了几十轮之后报错：'],
    ['re-build more than once', 'Re-building the model more than once in the notebook ends with'],
    ['two words qualify the model', 'We are instantiating `tf.keras.applications` models inside a for loop for the benchmark and get'],
  ])('%s: growth, build once first', async (_n, sentence) => {
    const d = await diagnosePaste([sentence, TF1_OOM].join('\n'));
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(REBUILT);
  });
  it('the model loaded once and used for every image is not a rebuild', async () => {
    const d = await diagnosePaste(['I load the model once and then predict on every image in the folder:', TF1_OOM].join('\n'));
    expect(first(d)).not.toMatch(REBUILT);
  });
  it('a PyTorch OOM beside the same words is not read as a TF graph', async () => {
    const d = await diagnosePaste(
      [
        'I load a new model every iteration of my search and then:',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free.',
      ].join('\n'),
    );
    expect(first(d)).not.toMatch(REBUILT);
  });
  it('training the model for many epochs is no rebuild', async () => {
    const d = await diagnosePaste(['Training the model for 100 epochs, each epoch is fine until epoch 40:', TF1_OOM].join('\n'));
    expect(first(d)).not.toMatch(REBUILT);
  });
});
