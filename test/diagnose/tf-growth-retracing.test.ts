// A TensorFlow climb in TensorFlow's words (issue 23, F, from TensorFlow's own warning and stack): "N out of the last M
// calls to <function …> triggered tf.function retracing" (polymorphic_function; behind "WARNING:tensorflow:" or another
// logger, TF 2.2-2.16 and Keras 3 wording) names what grows when a TF run's memory climbs: a graph per new shape or
// Python argument. A TF run's climb without it still grows in graphs and traced functions, not in tensors a torch loop
// keeps: its first fix is TensorFlow's, not torch.cuda's. Real thread (blind8 read split) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const RETRACE = [
  'WARNING:tensorflow:5 out of the last 5 calls to <function Model.make_predict_function.<locals>.predict_function at 0x7f8ad8436790> triggered tf.function retracing. Tracing is expensive and the excessive number of tracings could be due to (1) creating @tf.function repeatedly in a loop, (2) passing tensors with different shapes, (3) passing Python objects instead of tensors.',
  '2022-06-30 14:16:00,769 - tensorflow - WARNING - 11 out of the last 11 calls to <function train_step at 0x7f288c319af0> triggered tf.function retracing. Tracing is expensive and the excessive number of tracings is likely due to passing python objects instead of tensors.',
  'WARNING:tensorflow:5 out of the last 15 calls to <function TensorFlowTrainer.make_predict_function.<locals>.one_step_on_data_distributed at 0x16d347d80> triggered tf.function retracing. Tracing is expensive',
];

describe("TensorFlow's retracing warning beside a climb", () => {
  it.each(RETRACE)('synthetic: told growth with the warning: the traced graphs first (%#)', async (warning) => {
    const paste = `Memory leak in a loop\nimport tensorflow as tf\n${warning}\nThe GPU memory keeps increasing with every call until it runs out of memory.`;
    const d = await diagnosePaste(paste);
    expect(d?.category).toBe('growing_memory_leak');
    expect(d?.fixes[0]?.summary).toMatch(/^TensorFlow says it traced a function again and again \(\d+ out of the last \d+ calls to <function [^>]/);
    expect(d?.fixes[0]?.summary).not.toMatch(/ at 0x/);
  });
  it('synthetic: a printed series climbing with the warning: the traced graphs first', async () => {
    const series = [300, 420, 540, 660].map((m, i) => `step ${i}: GPU memory ${m} MB`).join('\n');
    const d = await diagnosePaste(`import tensorflow as tf\n${RETRACE[0]}\n${series}`);
    expect(d?.fixes[0]?.summary).toMatch(/^TensorFlow says it traced/);
  });
  it('synthetic control: the warning alone, no climb and no failure, is no memory diagnosis', async () => {
    expect((await diagnosePaste(`import tensorflow as tf\n${RETRACE[0]}`))?.category).not.toBe('growing_memory_leak');
  });
});

describe('a TensorFlow climb without the warning', () => {
  it("blind8/5630: Keras predict() in a loop, host RSS climbing: TensorFlow's levers, not torch.cuda's", async () => {
    const d = await firstOfCase('blind8', '5630');
    expect(d?.fixes[0]?.summary).toMatch(/^The memory climbs from call to call in TensorFlow[\s\S]*model\(x, training=False\)[\s\S]*upgrade TensorFlow/);
  });
  it('synthetic control: a PyTorch climb keeps the torch.cuda experiment', async () => {
    const series = [3000, 4200, 5400, 6600].map((m, i) => `iter ${i}: allocated ${m} MB`).join('\n');
    expect((await diagnosePaste(`import torch\n${series}`))?.fixes[0]?.summary).toMatch(/torch\.cuda\.memory_allocated/);
  });
});

describe('the same forms in the host-RAM rules', () => {
  it("series11/5861: Mava's RAM climbs to the kill with TF's warning behind absl's prefix: the retraced graphs first", async () => {
    expect((await firstOfCase('series11', '5861'))?.fixes[0]?.summary).toMatch(
      /^TensorFlow says it traced a function again and again \(6 out of the last 6 calls to <function MADQNFeedForwardExecutor\._policy>/,
    );
  });
  it('series11/5862: RAM grows per tf.function call in TF 2.8-2.10: the TensorFlow branch, with its version', async () => {
    expect((await firstOfCase('series11', '5862'))?.fixes[0]?.summary).toMatch(/^The memory climbs from call to call in TensorFlow[\s\S]*upgrade TensorFlow/);
  });
});
