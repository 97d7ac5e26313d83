// What a run outside training holds when its own tensors fill the card (issue 23, "the static part does not fit").
// Inference keeps the model's weights and one request's tensors on the card, nothing per step accumulates and there
// is no optimizer state: when a process that is not training holds nearly all of the card and fails on a request that
// is small beside it, what fills the card is the weights, and the lever is fewer bytes per weight (quantize, half
// precision), fewer weights, or fewer of them on this card (offload, split), never a batch. Two readers of the paste:
// - the report places the failure at the model's load or start-up ("when the model is loaded", "at startup", "the
//   weights are transferred to the device", "启动的时候", "加载模型时"), read only where no frame places it and nothing
//   in the paste trains: the load phase, whose holder is the weights (holder.ts);
// - the report says the run is inference (an inference or demo script by its conventional name, "inference",
//   "deploy", "use the model", a `.predict(` call, "推理", "部署"): with no training in the paste, a process that holds most of the card on
//   a small request holds its weights.
// The words are the vocabulary of running a model, never a thread's; every pattern is bounded and read per line.
import { boundedLines } from '../lines.js';
import type { PhaseVerdict } from '../phase.js';
import type { Incident } from '../incident/index.js';

const MAX_LINES = 400;
const MAX_LINE = 600;
const QUOTE_CHARS = 140;

// The model's load or the program's start-up named as when it failed.
const LOAD_WORDS =
  /\b(?:when|while|during|at|on|upon)\s{1,3}(?:the\s{1,3}|program\s{1,3}|app\s{1,3}|server\s{1,3})?(?:model\s{1,3}|weights?\s{1,3}|checkpoint\s{1,3})?(?:loading|load|start[- ]?up|initiali[sz](?:ing|ation))\b|\b(?:model|weights|checkpoint|pipeline|tensors)\s{1,3}(?:is|are|was|were|gets?|got)\s{1,3}(?:first\s{1,3}|being\s{1,3})?(?:loaded|transferred|moved|copied|placed)\b|\b(?:loading|load)\s{1,3}(?:the\s{1,3}|a\s{1,3}|my\s{1,3}|this\s{1,3})?(?:pre-?trained\s{1,3})?(?:model|weights|checkpoint)\b|\b(?:transferred|moved|copied)\s{1,3}to\s{1,3}(?:the\s{1,3})?(?:GPU|device|cuda)\b|启动(?:的)?时(?:候)?|加载模型|模型加载|载入模型|加载(?:权重|checkpoint)/i;
// The failure named on the same line, in words or by its message (a log line such as "Load weights from x.pth" is no
// report of where it failed); a line that names a batch places the failure in a step, not at the load.
const FAILURE =
  /out of memory|outof memory|\bOOM\b|OutOfMemory|memory (?:error|exception)|\bnot\s{1,3}enough\s{1,3}(?:GPU\s{1,3}|CUDA\s{1,3}|VRAM\s{1,3})?memory\b|显存|现存不足|报错|内存不足|爆/i;
const BATCH = /\bbatch|批/i;
// The report says it trains, or that the failure came after the load: no load phase then.
const NOT_AT_LOAD = /\bafter\s{1,3}(?:the\s{1,3})?(?:model\s{1,3})?(?:load(?:ing|ed)?|start[- ]?up)\b|加载(?:完|之后|后|成功)/i;

// Inference said: an inference or demo script by its conventional name, the words of running a trained model, or a call of
// the predict API (Keras, scikit-learn, flair, Ultralytics all name it `.predict(`).
const INFERENCE_WORDS =
  /\b(?:infer|inference|generate|demo|cli_demo|web_demo|txt2img|img2img)\w{0,20}\.py\b|\binferenc(?:e|ing)\b|\bdeploy(?:ing|ment|ed)?\b|\b(?:use|using|run|running)\s{1,3}(?:the|this|a|my)\s{1,3}(?:[\w.-]{1,30}\s{1,3})?model\b|\bquick\s?start\b|\.predict\(|推理|部署/i;

const quoted = (line: string) => `"${line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + '…' : line}"`;

/** The load phase the report names in words (a run that is not training, no frame placing it): that sentence as the frame. */
export function reportedLoad(text: string): PhaseVerdict | undefined {
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (NOT_AT_LOAD.test(line)) return undefined;
    if (LOAD_WORDS.test(line) && FAILURE.test(line) && !BATCH.test(line)) return { phase: 'load', frame: quoted(line.trim()) };
  }
  return undefined;
}

/** The report's line that says the run is inference (an inference script, "inference", "deploy", "use the model"). */
export function readInferenceSaid(text: string): string | undefined {
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) if (INFERENCE_WORDS.test(line)) return quoted(line.trim());
  return undefined;
}

/** This process's share of the card at or above which, outside training, what it holds is the weights. */
const HOLDS_CARD = 0.85;
/** A failed request under this share of the card is one request's tensor, not a model's worth. */
const SMALL_REQUEST = 0.1;

/**
 * A run the paste does not show training, said to be inference, whose own process holds most of the card and failed
 * on a small request: the weights fill the card.
 */
export function inferenceWeightsFill(f: Incident, mine: number | undefined, total: number | undefined): boolean {
  // A serving tool (vLLM, TGI, web UIs) has its own knobs for what it keeps (conditions.ts inference_tool).
  if (f.run.training === true || f.run.inference === true || f.run.inferenceSaid === undefined || mine === undefined || total === undefined) return false;
  // A stated batch above 1 (not a tool's default) puts that batch's activations beside the weights, and a stated input
  // size, clip or generation length is the request's own evidence (input-size.ts, input-length.ts, generation-length.ts).
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > 1) return false;
  if (f.input.inputSizeSetting !== undefined || f.input.inputLengthSetting !== undefined || f.sequence.generateLenSetting !== undefined) return false;
  if (f.phase.name !== undefined && f.phase.name !== 'load' && f.phase.name !== 'generate') return false;
  const tried = f.figures.triedAllocMiB;
  return mine >= HOLDS_CARD * total && (tried === undefined || tried < SMALL_REQUEST * total);
}
