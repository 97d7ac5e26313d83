// TensorFlow names the op that failed beside its error ("[[Node: NAME = ...", "[[{{node NAME}}", "Caused by op 'NAME'"),
// and a variable's initial value is computed by ops under its "Initializer" name scope (variables.py), its optimizer
// slots' too ("dense_7/kernel/Adam/Initializer/zeros"). An OOM there is the variables being created, before any batch:
// the load phase, whose lever is the model's size. Only when the failed tensor is a real share of the card: a slot of a
// few MB (or a few percent of a stated card) failing at initialisation says the card was already held, by earlier
// kernels or another job, not that these weights fill it (tuned stacks11/5906, blind7/3950). Bounded patterns, linear.
import type { Incident } from '../incident/index.js';
import type { LogText } from '../normalize.js';
import type { PhaseVerdict } from '../phase.js';
import { cardMiB } from './static-fit.js';

const MAX_LINE = 2000;
const MAX_LINES = 20000;
const TF_FAILED_OP = /(?:\[\[Node: |\{\{node |Caused by op ')([\w./-]{1,200}?\/Initializer\/[\w./-]{0,100})/;
/** The failed tensor's share of a stated card, and its size where no card is stated, that make the weights the lever. */
const CARD_SHARE = 0.1;
const UNSTATED_CARD_MIB = 64;

/** The load phase from a TensorFlow initializer op that failed with a tensor large enough to be the weights' (none: undefined). */
export function tfInitializerPhase(log: LogText, incident: Incident): PhaseVerdict | undefined {
  const tensor = incident.stack.tfTensorMiB;
  if (tensor === undefined) return undefined;
  const card = cardMiB(incident);
  if (card !== undefined ? tensor < CARD_SHARE * card : tensor < UNSTATED_CARD_MIB) return undefined;
  for (let l = 0; l < log.lineCount && l < MAX_LINES; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    const m = line.includes('Initializer/') ? TF_FAILED_OP.exec(line) : null;
    if (m) return { phase: 'load', frame: `TensorFlow op ${m[1]}` };
  }
  return undefined;
}
