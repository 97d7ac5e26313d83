// The YOLO family's per-epoch validation inside train.py (issue 23: each phase has its own levers): it runs under
// no_grad at twice the training batch, so the validation batch is the lever and no_grad is not.
import type { Incident } from '../incident/index.js';
import type { PhaseVerdict } from '../phase.js';
import { boundedLines } from '../lines.js';

const inEval = (f: Incident) => f.phase.name === 'eval';

// The YOLO family's own train.py validates after every epoch by a fixed call, whose first line a traceback quotes:
// ultralytics/yolov3 "results, maps = test.test(cfg, data, batch_size=batch_size * 2, ...)", YOLOv5 before v6 and YOLOv7
// "results, maps, times = test.test(data_dict, batch_size=batch_size * 2, ...)", YOLOv5 6+ "results, maps, _ =
// validate.run(data_dict, batch_size=batch_size // WORLD_SIZE * 2, ...)"; and its validation table's header line
// ("Class Images Labels P R mAP@.5", "Class Images Instances Box(P R mAP50", "Class Images Targets P R mAP@0.5").
// Bounded, per line.
const YOLO_VAL_CALL = /\bresults,\s{0,2}maps(?:,\s{0,2}\w{1,8})?\s{0,2}=\s{0,2}(?:test\.test|val\.run|validate\.run)\(/;
const YOLO_VAL_HEADER = /\bClass\s{1,20}Images\s{1,20}(?:Labels|Instances|Targets)\s{1,20}(?:Box\()?P\s{1,20}R\s{1,20}mAP/;

const QUOTE_CHARS = 100;

function quoteLine(line: string): string {
  const t = line.trim();
  return t.length <= QUOTE_CHARS ? `"${t}"` : `"${t.slice(0, QUOTE_CHARS)}…"`;
}

/** The YOLO family's per-epoch validation call or table header, quoted (trimmed). */
export function readYoloTrainVal(text: string): string | undefined {
  // The call says which validation ran; the table header only that one was under way (its last one, the failing pass).
  let header: string | undefined;
  for (const line of boundedLines(text, 20_000, 600)) {
    if (YOLO_VAL_CALL.test(line)) return quoteLine(line);
    if (YOLO_VAL_HEADER.test(line)) header = line;
  }
  return header === undefined ? undefined : quoteLine(header);
}

/**
 * A YOLO-family train.py (YOLOv5 before 6, YOLOv7, ultralytics/yolov3 and their forks, not recognised as a tool) failed
 * in its per-epoch validation: that call runs under no_grad at twice the training batch (rect batches of varying
 * shape), so the validation batch, not no_grad, is the lever. Not where the report says gradients are on.
 */
export const evalYoloTrainVal = (f: Incident) =>
  inEval(f) &&
  f.eval.evalYoloVal !== undefined &&
  !ultralyticsValForm(f) &&
  f.run.tool !== 'ultralytics' &&
  f.run.tool !== 'yolov5' &&
  f.eval.gradsOnStated === undefined;

// Ultralytics' own forms of the same validation (YOLOv5 6+ train.py's validate.run, the Instances / Box(P header of
// YOLOv5 7 and YOLOv8+): its trainer's text answers (levers/eval.ts evalUltralyticsVal), with its own flags.
const ULTRALYTICS_VAL = /\b(?:validate|val)\.run\(|\bInstances\b|\bBox\(P\b/;
/** The validation form quoted is Ultralytics' own (YOLOv5 6+, YOLOv8+), not an older train.py's test.test. */
export const ultralyticsValForm = (f: Incident) => f.eval.evalYoloVal !== undefined && ULTRALYTICS_VAL.test(f.eval.evalYoloVal);

// The YOLO family's training progress: its header ("Epoch   gpu_mem   box ...", YOLOv8's "Epoch    GPU_mem   box_loss")
// and its per-epoch bar ("2/299     7.09G    0.1008 ..."). A failure whose last progress line is the validation table's
// header ran in that validation, not in training. Bounded, per line.
const YOLO_TRAIN = /\bEpoch\s{1,20}(?:gpu_mem|GPU_mem)\b|^\s{0,12}\d{1,5}\/\d{1,5}\s{1,20}[\d.]{1,6}G\s/;
const FAILURE_START = /^\s{0,8}Traceback \(most recent call last\)|out of memory/i;

/**
 * The validation as the phase where no frame says it: the last YOLO progress line before the paste's last failure
 * (a traceback's start, else an OOM line after the progress) is the validation table's header.
 */
export function yoloValPhase(text: string): PhaseVerdict | undefined {
  let lastProgress: 'train' | 'val' | undefined;
  let atFailure: { kind: 'train' | 'val' | undefined; line: string } | undefined;
  let valLine = '';
  for (const line of boundedLines(text, 20_000, 600)) {
    if (YOLO_VAL_HEADER.test(line)) {
      lastProgress = 'val';
      valLine = line;
    } else if (YOLO_TRAIN.test(line)) lastProgress = 'train';
    else if (lastProgress !== undefined && FAILURE_START.test(line)) atFailure = { kind: lastProgress, line: valLine };
  }
  if (atFailure?.kind !== 'val') return undefined;
  return { phase: 'eval', frame: quoteLine(atFailure.line), evalLoop: 'plain' };
}

export const EVAL_YOLO_CONDITIONS = {
  phase_eval_yolo_train_val: ({ incident }: { incident: Incident }) => evalYoloTrainVal(incident),
};
