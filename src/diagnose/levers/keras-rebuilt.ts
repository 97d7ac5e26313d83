// A Keras model built and trained again and again in one TensorFlow 1.x graph (a notebook re-running its cells):
// Keras opens a name scope per trained model ("with K.name_scope('training')" in _make_train_function, "loss" in
// compile), and TensorFlow makes a scope name unique in its graph by a suffix, so the 13th model's optimizer slots are
// "training_12/Adam/...". The failed op's name says how many models the graph (and its session's memory) holds: every
// earlier model's weights and optimizer state stay allocated beside the new one. The lever is a fresh graph
// (keras.backend.clear_session(), or a restarted kernel), not the batch. Read from TensorFlow's own op names:
// "Caused by op 'training_12/Adam/zeros', defined at:", "[[Node: training_12/Adam/zeros = Fill[...]",
// "[[{{node training_12/Adam/zeros}}]]". Bounded patterns (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const KERAS_SCOPE_OP = /(?:Caused by op '|\[\[Node: |\{\{node )((training|loss|metrics)_(\d{1,4})\/[\w/.-]{0,160})/;
/** At this many models in one graph (two is a GAN's or a fine-tune's second compile) the graph is being rebuilt. */
const REBUILT_AT = 3;

/** The Keras scope of the failed op and how many models the graph holds. */
export function readKerasRebuilt(log: LogText): Partial<StackPart> {
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!line.includes('ode') && !line.includes('Caused by op')) continue;
    const m = KERAS_SCOPE_OP.exec(line);
    if (m && Number(m[3]) + 1 >= REBUILT_AT) return { kerasGraphModels: Number(m[3]) + 1, kerasOp: m[1] };
  }
  return {};
}

/** The failed op belongs to the third or later Keras model trained in one graph. */
export const kerasGraphRebuilt = (i: Incident) => i.stack.kerasGraphModels !== undefined;

export const KERAS_REBUILT_CONDITIONS = {
  keras_graph_rebuilt: ({ incident: i }: { incident: Incident }) => kerasGraphRebuilt(i),
};
