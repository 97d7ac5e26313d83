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
  const told = toldRunBeforeFailure(text);
  if (told) incident.progress.runToldBeforeFailure = told;
  if (steps !== undefined) incident.progress.stepsDone = steps;
  if (epochs !== undefined && epochs > 0) incident.progress.epochsDone = epochs;
  if (line !== undefined && (incident.progress.stepsDone !== undefined || incident.progress.epochsDone !== undefined))
    incident.progress.progressLine = line.trim().slice(0, 160);
  // The report's own words are the evidence the reply quotes where no progress line shows the run.
  else if (told) incident.progress.progressLine = told;
  return incident;
}

// The report's own words that the run went on at its settings for a while before the failure: "after a few iterations",
// "after several iterations", "after 2000 steps", "after training for a while", "训练一段时间后", "跑了几个step之后".
// A step that ran before the failure fit (levers above); a count said in words is what a report has of it. Epochs
// said in words are settings.ts's oomAfterEpochs. Bounded, per line: linear.
const TOLD_RUN = [
  /\bafter\s{1,3}(?:(?:a\s{1,3})?(?:few|several|some|many|multiple|couple\s{1,3}of|hundreds\s{1,3}of|thousands\s{1,3}of)|(?:(?:nearly|almost|about|around|over|roughly|more\s{1,3}than|~)\s{0,3})?\d{2,7}[kK]?)\s{1,3}(?:training\s{1,3})?(?:iterations?|iters?|steps?|batch(?:es)?)\b/i,
  /\bafter\s{1,3}(?:training|running)\s{1,3}(?:for\s{1,3})?(?:a\s{1,3}while|some\s{1,3}time|a\s{1,3}period\s{1,3}of\s{1,3}time)\b/i,
  /(?:训练|跑|运行|迭代)了?\s{0,2}(?:一段时间|一会儿?|(?:几|若干|\d{2,7})\s{0,2}个?\s{0,2}(?:step|iter|iteration|batch|迭代|次迭代|批次?)s?)\s{0,2}(?:之?后|以后)/i,
];
const MAX_TOLD_LINES = 200;
// A batch size tried in the same sentence ("If I try to use a batch size like 16 it starts training and after 10
// iterations it throws a Cuda oom error"): the point of failure moves with the batch, a trial of the batch, no climb.
const BATCH_TRIAL = /\b(?:if|when|once)\s{1,3}I\s{1,3}(?:try|tried|use|used|set|increase|raise|run)\b[^\n]{0,60}\bbatch|(?:如果|当|一旦)[^\n]{0,12}batch/i;
// A row of a trial table: the line sets the batch to another value than the line before it did ("batch_size: 300; fails
// OOM after 540th batch" under "batch_size: 500; ..."): the failure point moves with the batch, a trial, no climb.
const BATCH_SET = /\bbatch[_ -]?size\s{0,2}[:=]\s{0,2}(\d{1,6})\b/i;

/** The phrase that says the run went on for a while before it failed, if the report says so. */
export function toldRunBeforeFailure(text: string): string | undefined {
  const lines = [...boundedLines(text, MAX_TOLD_LINES, MAX_LINE)];
  const batchOf = (i: number) => (lines[i] === undefined ? undefined : BATCH_SET.exec(lines[i])?.[1]);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const batch = batchOf(i);
    const [before, after] = [batchOf(i - 1), batchOf(i + 1)];
    const tableRow = batch !== undefined && ((before !== undefined && before !== batch) || (after !== undefined && after !== batch));
    // A sentence the paste wrapped ("after nearly 3000" / "iterations with batchsize 128"): the line read with the end of
    // the one before it, where that one ends mid-sentence (no closing punctuation).
    const previous = lines[i - 1] ?? '';
    const joined = previous && !/[.!?:;。！？]\s*$/.test(previous) ? `${previous.slice(-60)} ${line}` : line;
    if (!line || tableRow || BATCH_TRIAL.test(joined)) continue;
    // Only a phrase that reaches into this line: one wholly in the line before was read there.
    const from = joined.length - line.length;
    for (const re of TOLD_RUN) {
      const m = re.exec(joined);
      if (m && m.index + m[0].length > from) return m[0].replace(/\s+/g, ' ').trim();
    }
  }
  return undefined;
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
  return (f.progress.epochsDone ?? 0) >= 1 || (f.progress.stepsDone ?? 0) >= STEPS_THAT_FIT || f.progress.runToldBeforeFailure !== undefined;
}
