// Issue 23, the phase from frames: a TensorFlow 1.x OOM raised under `sess.run(tf.global_variables_initializer())`
// (also initialize_all_variables / tf.compat.v1's, local_variables_initializer) happens while the variables are
// created, before any batch is fed: the weights and their optimizer slots are what does not fit, so the lever is a
// smaller model (or a larger card), never the batch. Real log: blind9/5786 (a read split); the rest synthetic,
// written from TF 1.x's traceback form. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const tb = (code: string) => `Traceback (most recent call last):
  File "train.py", line 88, in <module>
    main()
  File "train.py", line 61, in main
    ${code}
  File "/usr/local/lib/python3.6/dist-packages/tensorflow/python/client/session.py", line 929, in run
    run_metadata_ptr)
tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[25088,4096] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc`;

describe("TensorFlow's variables initializer is the load phase", () => {
  it('real blind9/5786: VGG16 fc6 at global_variables_initializer on a 2 GB card', async () => {
    const d = await firstOfCase('blind9', '5786');
    expect(d?.fixes[0].summary).toMatch(/smaller model/);
    expect(d?.fixes[0].summary).toMatch(/No batch size fixes that/);
  });

  // synthetic: the initializer's spellings across TF 1.x releases
  it.each([
    ['global', 'sess.run(tf.global_variables_initializer())'],
    ['compat.v1', 'session.run(tf.compat.v1.global_variables_initializer())'],
    ['initialize_all_variables', 'sess.run(tf.initialize_all_variables())'],
  ])('synthetic: %s', async (_n, code) => {
    const d = await diagnosePaste(tb(code));
    expect(d?.fixes[0].summary).toMatch(/before any batch ran/);
    expect(d?.fixes[0].changes.batch).toBeUndefined();
  });

  it('synthetic: a training step in the same session is not the load phase', async () => {
    const d = await diagnosePaste(tb('_, loss = sess.run([train_op, loss_op], feed_dict={x: batch_x, y: batch_y})'));
    expect(d?.fixes[0].summary).not.toMatch(/before any batch ran/);
  });
});

// TensorFlow names the failed op beside its error; ops under a variable's "Initializer" scope (and its optimizer slots')
// compute initial values: the load phase when the failed tensor is a real share of the card (levers/tf-initializer.ts).
// Real: stacks12/6453 (tuned, read after its first run); synthetic variants of TF 1.x's three spellings of the op.
describe("TensorFlow's failed op under a variable's Initializer scope", () => {
  const oom = (shape: string, op: string, card = '') =>
    `${card}2018-08-28 00:33:52.727597: E tensorflow/core/common_runtime/executor.cc:630] Executor failed to create kernel. Resource exhausted: OOM when allocating tensor of shape [${shape}] and type float\n${op}`;

  it('real stacks12/6453: the Adam slot of a 24576x2400 dense kernel is the load phase', async () => {
    const d = await firstOfCase('stacks12', '6453');
    expect(d?.fixes[0].summary).toMatch(/before any batch ran/);
  });

  it.each([
    ['[[Node:', '\t [[Node: fc6/weights/Initializer/random_uniform/RandomUniform = RandomUniform[T=DT_INT32, dtype=DT_FLOAT]()]]'],
    ['{{node', '\t [[{{node dense_7/kernel/Adam/Initializer/zeros}} = Const[dtype=DT_FLOAT]()]]'],
    ['Caused by op', "Caused by op 'rnn/lstm_cell/kernel/Initializer/random_uniform/RandomUniform', defined at:"],
  ])('synthetic: a 256 MiB initializer (%s) with no card stated is the load phase', async (_n, op) => {
    const d = await diagnosePaste(oom('8192,8192', op));
    expect(d?.fixes[0].summary).toMatch(/before any batch ran/);
  });

  it.each([
    ['a 4 KiB slot', oom('1024', '\t [[Node: conv6/biases/Adam/Initializer/zeros = Const[dtype=DT_FLOAT]()]]')],
    [
      '3% of a stated 16 GB card',
      oom('563354,256', '\t [[Node: embeddings/Adam/Initializer/zeros = Const[dtype=DT_FLOAT]()]]', 'Machine: 4 * Tesla P100-PCIE-16GB\n'),
    ],
    ['a training op', oom('8192,8192', '\t [[{{node dense_7/MatMul}}]]')],
  ])('synthetic: %s is not read as the weights filling the card', async (_n, text) => {
    const d = await diagnosePaste(text);
    expect(d?.fixes[0].summary).not.toMatch(/before any batch ran/);
  });
});
