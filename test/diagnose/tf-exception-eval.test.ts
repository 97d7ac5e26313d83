// TensorFlow's own exception decides whose evaluation ran (issue 23 item 5: routes by exception type, not by words or the
// user's frames). A traceback that shows only the user's script calling model.predict / evaluate but ends in
// TensorFlow's ResourceExhaustedError ("OOM when allocating tensor ...") ran Keras / TF, which keeps no autograd graph:
// PyTorch's no_grad is no lever; the batch that predict / evaluate runs is. Synthetic variants written from TF's
// exception and message forms (said so); the real blind8/5602 case is in tf-shape-forms.test.ts.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const frames = (call: string) => ['Traceback (most recent call last):', '  File "predict.py", line 20, in <module>', `    ${call}`];

describe('synthetic variants (TF exception forms)', () => {
  it.each([
    [
      'TF 2 errors_impl class',
      'tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[256,512,512,32] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
    ],
    ['bare class name, TF 1 message', 'ResourceExhaustedError: OOM when allocating tensor with shape[128,256,256,64]'],
  ])('%s under model.predict(): the Keras batch, not no_grad', async (_n, error) => {
    const d = first(await diagnosePaste([...frames('preds = model.predict(x_test, batch_size=256)'), error].join('\n')));
    expect(d).toMatch(/Keras/);
    expect(d).not.toMatch(/no_grad\(\)|inference_mode/);
  });
  it('control: a PyTorch OOM under a predict() call keeps the PyTorch reading', async () => {
    const error =
      'RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 10.76 GiB total capacity; 8.10 GiB already allocated; 1.02 GiB free; 8.60 GiB reserved in total by PyTorch)';
    const d = first(await diagnosePaste([...frames('preds = model.predict(x_test)'), error].join('\n')));
    expect(d).not.toMatch(/Keras/);
  });
});
