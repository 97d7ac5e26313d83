// Standalone Keras and TensorFlow's bug template name the stack (issue 23, non-PyTorch): "import keras", "from keras.x
// import", or the template's fixed lines ("TensorFlow version (use command below)", "TensorFlow installed from (source
// or binary)"). A climb there gets TensorFlow's levers (model(x) / predict_on_batch, a newer TensorFlow), not
// torch.cuda advice. Synthetic variants beside the real blind9 thread.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('a Keras or TensorFlow climb gets TensorFlow levers', () => {
  it.each([
    [
      'import keras',
      'import keras\nmodel = keras.models.load_model("m.h5")\nfor x in batches:\n    y = model.predict(x)\nThe memory usage keeps increasing until the machine runs out of memory.',
    ],
    ['from keras.models import', 'from keras.models import load_model\nGPU memory keeps increasing with every call to predict.'],
    [
      "TensorFlow's bug template",
      '- TensorFlow installed from (source or binary): binary\n- TensorFlow version (use command below): 2.3.0\nGPU memory keeps increasing while calling predict in a loop.',
    ],
  ])('synthetic: %s', async (_name, text) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('growing_memory_leak');
    expect(first(d)).toMatch(/model\(x, training=False\)|predict_on_batch/);
    expect(first(d)).not.toMatch(/torch\.cuda/);
  });
  it('real thread (blind9/5746, Keras 2.2.4 predict in a loop on CPU)', async () => {
    const d = await firstOfCase('blind9', '5746');
    expect(first(d)).toMatch(/predict_on_batch/);
  });
});
