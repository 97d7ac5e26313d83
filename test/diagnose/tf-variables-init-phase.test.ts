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
