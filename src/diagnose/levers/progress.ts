// How far training got before the OOM (issue 23), read from the progress lines frameworks print in a
// fixed format: HF Trainer's log dicts ("{'loss': 0.71, ..., 'epoch': 0.56}"), tqdm bars that carry a
// loss or Lightning's "Epoch N:" prefix, Keras's "Epoch N/M" and step lines. Steps that ran at the same
// settings say the step fits: an OOM after them is something kept across steps or one larger input,
// and the experiment that tells them apart is the lever, not the batch. Bounded per line: linear.

// HF Trainer: "{'loss': 0.7091, 'learning_rate': 8.7e-06, 'epoch': 0.56}" (also with double quotes).
import { newIncident, type Incident, type PhasePart } from '../incident/index.js';
import { boundedLines } from '../lines.js';
const HF_LOG = /\{['"]loss['"]: ?[\d.eE+-]{1,24},[^\n{}]{0,400}?['"]epoch['"]: ?(\d{1,6}(?:\.\d{1,8})?)\}/;
// tqdm: " 56%|█████▋    | 16000/28347 [23:35<17:18, 11.89it/s, loss=0.7]"
const TQDM = /(\d{1,3})%\|[^|\n]{0,200}\| {0,2}(\d{1,9})\/(\d{1,9}) \[([^\]\n]{0,300})\]/;
// Lightning's bar: "Epoch 3:  45%|████▌     | 450/1000 [..., v_num=7, train_loss=0.3]"
const LIGHTNING_EPOCH = /(?:^|\s)Epoch (\d{1,5}):\s{0,4}\d{1,3}%\|/;
// Keras: "Epoch 3/10" on its own line, then "450/1000 [====>....] - ETA: 1:00 - loss: 0.3012".
const KERAS_EPOCH = /^\s{0,4}Epoch (\d{1,5})\/\d{1,5}\s*$/;
const KERAS_STEP = /^\s{0,4}(\d{1,9})\/(\d{1,9}) \[[=>.]{1,80}\][^\n]{0,200}?\bloss: [\d.]/;

const MAX_LINES = 20_000;
const MAX_LINE = 2000;

/** Steps and epochs the paste's training progress lines show done, with the last such line as evidence. */
export function trainingProgress(text: string): Incident {
  let steps: number | undefined;
  let epochs: number | undefined;
  let line: string | undefined;
  for (const raw of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!raw) continue;
    // tqdm redraws with carriage returns: the last redraw is what the terminal showed.
    const cut = raw.lastIndexOf('\r', raw.length - 2);
    const l = cut >= 0 ? raw.slice(cut + 1) : raw;
    const hf = HF_LOG.exec(l);
    const bar = TQDM.exec(l);
    const lightning = LIGHTNING_EPOCH.exec(l);
    if (hf) {
      epochs = Math.max(epochs ?? 0, Math.floor(Number(hf[1])));
      line = l;
    }
    if (bar && (hf || lightning || /\bloss[=:]/.test(bar[4]))) {
      steps = Number(bar[2]);
      if (lightning) epochs = Math.max(epochs ?? 0, Number(lightning[1]));
      line = l;
      continue;
    }
    const ke = KERAS_EPOCH.exec(l);
    if (ke) {
      epochs = Math.max(epochs ?? 0, Number(ke[1]) - 1);
      // The epoch line is the evidence until a step line follows it (the reply quotes one).
      if (epochs > 0) line = l;
      continue;
    }
    const ks = KERAS_STEP.exec(l);
    if (ks) {
      steps = Number(ks[1]);
      line = l;
    }
  }
  const incident: Incident = newIncident();
  if (steps !== undefined) incident.progress.stepsDone = steps;
  if (epochs !== undefined && epochs > 0) incident.progress.epochsDone = epochs;
  if (line !== undefined && (incident.progress.stepsDone !== undefined || incident.progress.epochsDone !== undefined))
    incident.progress.progressLine = line.trim().slice(0, 160);
  return incident;
}

/** Steps in one run that say the step fit: fewer can be the first steps' warm-up or one unlucky batch. */
const STEPS_THAT_FIT = 50;
/** Phases of a training step (or none known): evaluation, the load and the rest have their own levers. */
const TRAINING_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'optimizer']);

/**
 * The OOM came after the paste shows training running at these settings (a whole epoch, or 50 steps),
 * with no flat series saying each step needs the same and no user's sentence already saying so.
 */
export function oomAfterSteps(f: Incident): boolean {
  if (f.run.inference || f.phase.generating || !TRAINING_PHASES.has(f.phase.name)) return false;
  if (f.series.memoryShape === 'flat' || f.progress.oomAfterEpochs !== undefined) return false;
  return (f.progress.epochsDone ?? 0) >= 1 || (f.progress.stepsDone ?? 0) >= STEPS_THAT_FIT;
}
