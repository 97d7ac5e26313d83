// A Keras model trained again and again in one TensorFlow 1.x graph (levers/keras-rebuilt.ts): Keras opens a scope
// "training" per trained model and TensorFlow makes it unique by a suffix, so a failed op named "training_12/Adam/zeros"
// is in the 13th model of the graph, and every earlier one is still held. The lever is a fresh graph (clear_session or a
// restarted kernel), not the batch. Read from TensorFlow's op-name forms: "Caused by op '...'", "[[Node: ... = ...",
// "[[{{node ...}}]]". Real thread (blind8 read split) beside synthetic variants written from the format (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const OOM =
  'ResourceExhaustedError: OOM when allocating tensor with shape[50000,300] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc';

describe('real thread (blind8)', () => {
  it("5662: 'training_12/Adam/zeros' in a notebook: clear_session / restart the kernel, not the batch", async () => {
    const d = await firstOfCase('blind8', '5662');
    expect(d?.facts.kerasGraphModels).toBe(13);
    expect(first(d)).toMatch(/clear_session[\s\S]*restart the kernel[\s\S]*not the batch/);
  });
});

describe('the op-name forms (synthetic)', () => {
  it.each([
    ['Caused by op', "Caused by op 'training_4/Adam/Variable_3/Assign', defined at:", 5],
    ['TF 1.x node', '\t [[Node: training_2/RMSprop/zeros_7 = Fill[T=DT_FLOAT, index_type=DT_INT32]()]]', 3],
    ['TF 1.13+ node', '\t [[{{node loss_6/dense_1_loss/Mean}}]]', 7],
  ])('%s: the model count read from the suffix, fresh graph first', async (_n, line, models) => {
    const d = await diagnosePaste([OOM, line].join('\n'));
    expect(d?.facts.kerasGraphModels).toBe(models);
    expect(first(d)).toMatch(/^The failed op/);
  });
  it("a second compile ('training_1/...', a GAN's two models) is no evidence of rebuilding", async () => {
    const d = await diagnosePaste([OOM, "Caused by op 'training_1/Adam/zeros', defined at:"].join('\n'));
    expect(d?.facts.kerasGraphModels).toBeUndefined();
    expect(first(d)).not.toMatch(/^The failed op/);
  });
  it('a layer name with a suffix (dense_12) is not a trained model', async () => {
    const d = await diagnosePaste([OOM, "Caused by op 'dense_12/MatMul', defined at:"].join('\n'));
    expect(d?.facts.kerasGraphModels).toBeUndefined();
  });
});
