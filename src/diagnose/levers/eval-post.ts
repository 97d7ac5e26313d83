// What an evaluation or prediction computes from the model's outputs, named by the library that computes it (issue 23:
// each phase has its own levers). None of these grows with the model's batch, so neither the batch nor no_grad is the
// lever; each library's own knob is. Read from fixed forms only:
// - non-maximum suppression: the YOLO family's `non_max_suppression` (general.py / ops.py), torchvision's `nms` /
//   `batched_nms` (torchvision/ops/boxes.py), mmcv's `batched_nms` / `multiclass_nms`, detectron2's `batched_nms`,
//   mmdet's `mask_matrix_nms` (SOLO's pairwise mask IoU), as
//   the innermost frames of the traceback or the call on their source line: the failure is in the candidate boxes of one
//   image, which an untrained or low-threshold model floods (the test pass's conf_thres 0.001);
// - a metric library's frames (torchmetrics, torcheval, Ignite's metrics, Lightning < 1.3's own pytorch_lightning/metrics,
//   MONAI's cumulative metrics, whose buffers keep every batch's results):
//   its states keep every batch's predictions on the device until compute() (curve metrics such as AUROC, ROC,
//   PrecisionRecallCurve, AveragePrecision without fixed thresholds, and any metric whose states are lists);
// - faiss-gpu's allocation failure, in its versions' texts (StandardGpuResources.cpp): 1.6 "Failed to cudaMalloc N bytes
//   on device D (error 2 out of memory)" with "Outstanding allocations:", 1.7+ "StandardGpuResources: alloc fail type …
//   size N bytes (cudaMalloc error out of memory [2])", older builds "Failed to cudaMalloc N bytes" and MemorySpace.cpp's
//   "failed to cudaMalloc N bytes (error 2 out of memory)" (allocMemorySpaceV, faiss <= 1.6): a k-NN search keeps
//   queries × k distances and ids plus its tiles, so the queries searched at once, k and the index's place are the levers.
// Every pattern is bounded and applied per line: linear in the paste's length.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { frameOf } from '../phase.js';
import { EVAL_YOLO_CONDITIONS } from './eval-yolo.js';
import { LIBRARY_GRAD_CONDITIONS } from './library-grad-default.js';

const MAX_LINES = 20_000;
const MAX_LINE = 600;
const INNERMOST = 3;

const NMS_FN =
  /^(?:non_max_suppression\w{0,12}|nms|batched_nms|_batched_nms_\w{1,20}|multiclass_nms\w{0,8}|nms_rotated|batched_rotated_nms|(?:mask_)?matrix_nms)$/;
const NMS_CALL = /\b(?:torchvision\.ops\.nms|torchvision\.nms|ops\.nms|batched_nms|non_max_suppression\w{0,12}|multiclass_nms)\s{0,2}\(/;
const NMS_FILE = /torchvision[\\/]ops[\\/]boxes\.py$|mmcv[\\/]ops[\\/]nms\.py$/;
const METRIC_FILE =
  /(?:^|[\\/])(?:torchmetrics|torcheval[\\/]metrics|ignite[\\/](?:contrib[\\/])?metrics|pytorch_lightning[\\/]metrics|monai[\\/]metrics)[\\/]/;
const TRACEBACK_HEAD = /^\s{0,4}Traceback \(most recent call last\)/;
const FAISS_ALLOC = /[Ff]ailed to cudaMalloc (\d{1,16}) bytes|StandardGpuResources: alloc fail [^\n]{0,200}?size (\d{1,16}) bytes[^\n]{0,20}\(cudaMalloc error/;

export interface EvalPostWork {
  /** The NMS frame or call among the traceback's innermost frames, quoted ("general.py, in non_max_suppression"). */
  nms?: string;
  /** A metric library's frame in the traceback, quoted ("torchmetrics/collections.py, in forward"). */
  metric?: string;
  /** faiss-gpu's failed cudaMalloc, its size in MiB and GiB as the reply states it ("1.50 GiB"). */
  faiss?: string;
}

const base = (file: string) => file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
const sized = (bytes: number) => (bytes >= 2 ** 30 ? `${(bytes / 2 ** 30).toFixed(2)} GiB` : `${Math.round(bytes / 2 ** 20)} MiB`);

/** The library-named work after the forward that the paste's last traceback or messages show. */
export function readEvalPostWork(text: string): EvalPostWork {
  const found: EvalPostWork = {};
  // The last traceback's frames, outermost first, each with the source line printed under it.
  let frames: { file: string; fn: string; code: string }[] = [];
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (TRACEBACK_HEAD.test(line)) frames = [];
    const frame = frameOf(line);
    if (frame) frames.push({ ...frame, code: '' });
    else if (frames.length && frames[frames.length - 1].code === '' && /^\s{2,16}\S/.test(line)) frames[frames.length - 1].code = line.trim();
    if (found.faiss === undefined && line.includes('cudaMalloc')) {
      const m = FAISS_ALLOC.exec(line);
      if (m) found.faiss = sized(Number(m[1] ?? m[2]));
    }
  }
  const inner = frames.slice(-INNERMOST).reverse();
  const nms = inner.find((f) => NMS_FN.test(f.fn) || NMS_FILE.test(f.file) || NMS_CALL.test(f.code));
  if (nms) found.nms = `${base(nms.file)}, in ${nms.fn}${nms.code ? `: ${nms.code.slice(0, 80)}` : ''}`;
  const metric = frames.find((f) => METRIC_FILE.test(f.file));
  if (metric) {
    const m = METRIC_FILE.exec(metric.file)!;
    found.metric = `${metric.file.slice(m.index).replace(/^[\\/]/, '')}, in ${metric.fn}`;
  }
  return found;
}

// Training's own NMS (a detector's RPN filter_proposals) is capped by its pre_nms_top_n: the candidate flood is the
// prediction pass's. A forward or backward phase read from the frames is training's.
const notTraining = (f: Incident) => f.phase.name !== 'backward' && f.phase.name !== 'optimizer' && f.run.training !== true;
/** NMS among the innermost frames, in evaluation or prediction. */
const nmsCandidates = (f: Incident) => f.eval.evalNms !== undefined && (f.phase.name === 'eval' || notTraining(f));

/** These conditions with the YOLO family's validation ones (eval-yolo.ts) and library defaults' (library-grad-default.ts), for conditions.ts to spread. */
export const EVAL_POST_CONDITIONS = {
  ...EVAL_YOLO_CONDITIONS,
  ...LIBRARY_GRAD_CONDITIONS,
  eval_nms_candidates: ({ incident }: { incident: Incident }) => nmsCandidates(incident),
  // The fragmentation rule yields to it: a request made by NMS is one image's box set, not an allocator split.
  not_eval_nms_candidates: ({ incident }: { incident: Incident }) => !nmsCandidates(incident),
  // A TorchMetrics list-state metric read by levers/metric-states.ts has that module's fix (one text, not two).
  eval_metric_states: ({ incident }: { incident: Incident }) =>
    incident.eval.evalMetricState !== undefined && incident.eval.gradsOnStated === undefined && incident.stack.metricListState === undefined,
  // Code for PyTorch <= 0.3 run on 0.4+ (levers/volatile.ts): its no-graph forwards keep their graphs; not in a backward or step.
  volatile_removed: ({ incident }: { incident: Incident }) =>
    incident.eval.volatileRemoved !== undefined &&
    incident.phase.name !== 'backward' &&
    incident.phase.name !== 'optimizer' &&
    incident.eval.evalKeras !== true,
  faiss_gpu_alloc: ({ incident }: { incident: Incident }) => incident.stack.faissAlloc !== undefined,
};
