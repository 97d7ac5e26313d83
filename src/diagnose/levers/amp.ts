// Mixed precision as the first lever (issue 23). A training step in fp32 keeps every activation in 4 bytes; autocast
// to bf16 (fp16 with a GradScaler) stores most of them in 2, about half, with the same batch, inputs and model. It is
// one setting and changes neither the data nor the optimization, so where the paste shows fp32 training at a batch
// that is already small (1 or 2) or unstated, it comes before a smaller batch or input. The evidence: a setting that
// turns half precision off (`--fp16 False`, `amp: false`, `mixed_precision: no`, Lightning's `precision=32`), or
// TensorFlow's failed tensor of "type float" (fp32; under a mixed_float16 policy activations are "type half"), with no
// half precision stated anywhere. Cards before Volta (Pascal, Maxwell, Kepler) have no tensor cores and no bf16:
// fp16 there saves memory but runs slower, so the lever is not offered first on them. Patterns bounded and linear.
import { batchLever } from '../levers.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident } from '../incident/index.js';
import { HALF_PRECISION, readSettingWorked } from './setting-experiment.js';

const WINDOW = 512 * 1024;
const OFF = String.raw`['"]?(?:False|false|no|none|0)(?![\w.])`;
const FP32_STATED = [
  new RegExp(String.raw`--(?:fp16|bf16|amp|use[-_]amp|mixed[-_]precision)(?:=|[ \t]{1,3})${OFF}`),
  new RegExp(String.raw`(?<![\w-])['"]?(?:fp16|bf16|amp|use_amp|mixed_precision)['"]?[ \t]{0,2}[=:][ \t]{0,2}${OFF}`),
  /(?<![\w-])(?:--)?precision['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})['"]?32(?:-true)?(?![\w.])/,
];
// TensorFlow names the failed tensor's dtype: "OOM when allocating tensor with shape[8,64,512,512] and type float".
// Keras/TF training shown by its own frames and node names: the fit loop's train_function, a gradient tape's node
// ("gradient_tape/model/conv2d/Conv2DBackpropInput"), Keras' "Epoch 1/10" lines or model.fit( in the report.
const TF_TRAINING = /\btrain_function\b|\bgradient_tape\/|^Epoch \d{1,5}\/\d{1,5}\b|\.fit\(/m;
const TF_MIXED_PRECISION = "tf.keras.mixed_precision.set_global_policy('mixed_float16')";
const TF_FLOAT = /OOM when allocating tensor with shape\[[\d, ]{1,80}\] and type float(?![\w])/;
// Any half precision stated: the run is not fp32 (or not only), so mixed precision is not the missing setting.
const HALF_STATED =
  /(?:--(?:fp16|bf16|amp|half)(?![\w-])(?![ \t=]{1,3}['"]?(?:False|false|no|0)\b)|(?:fp16|bf16|amp|use_amp)['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?(?:True|true|1)\b|mixed_precision['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?(?:fp16|bf16)|precision['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?(?:16|bf16)|autocast|GradScaler|mixed_float16|mixed_bfloat16|\.half\(\)|torch_dtype[ \t]{0,2}=[ \t]{0,2}torch\.(?:b?float16|half)|type half)/;
// Cards without tensor cores or bf16: Pascal (GTX 10xx, Titan X/Xp, P100/P40/P4, Quadro P), Maxwell (GTX 9xx, M40/M60), Kepler (K80).
const PRE_VOLTA = /\b(?:GTX[ \t]?(?:9[5-8]0|10[5-8]0)|TITAN[ \t]?Xp?\b|Tesla[ \t]?[PKM]\d{1,3}|P100|P40|K80|M40|M60|Quadro[ \t]?P\d{3,4})\b/i;

/**
 * The setting or error line that says the training runs in fp32 (model.fp32Setting), when no half precision is
 * stated and no pre-Volta card is named (there the setting is no lever, so it is not recorded).
 */
export function readFp32Training(fullText: string): string | undefined {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  if (HALF_STATED.test(text) || PRE_VOLTA.test(text)) return undefined;
  for (const re of FP32_STATED) {
    const m = re.exec(text);
    if (m) return m[0].trim();
  }
  const tf = TF_FLOAT.exec(text);
  return tf && TF_TRAINING.test(text) ? tf[0] : undefined;
}

/** The report's line that says the run fits with half precision and runs out without it (model.halfPrecisionWorked). */
export const readHalfPrecisionWorked = (text: string) => readSettingWorked(text, HALF_PRECISION);

const SMALL_BATCH = 2;

/**
 * Mixed precision first: fp32 training shown, a training step whose batch preconditions hold (a forward/backward,
 * no growth, no steps done at these settings, a static part that fits), a stated batch of 1 or 2 or none, no tool
 * that turns it on by default, and no pre-Volta card named. Who holds the card is checked beside it (conditions.ts).
 */
export function ampFirst(f: Incident): boolean {
  if (f.run.inference || f.phase.generating) return false;
  // The report's own experiment proves the lever: half precision fits, full precision does not (whatever else is stated).
  if (f.model.halfPrecisionWorked !== undefined)
    return !(f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) && batchLever(f).holds;
  if (f.model.fp32Setting === undefined) return false;
  if (f.run.amp === true || (f.run.ampDefaultOn && f.run.amp !== false)) return false;
  // TensorFlow's evidence is read only beside its training frames (readFp32Training).
  const tfTraining = /^OOM when allocating/.test(f.model.fp32Setting);
  if (f.run.training !== true && !tfTraining && f.phase.name !== 'forward' && f.phase.name !== 'backward') return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  if (f.card.gpuName !== undefined && PRE_VOLTA.test(f.card.gpuName)) return false;
  return batchLever(f).holds;
}

/** The words the reply quotes ({ampWhy}). */
export function ampWords(f: Incident, loc: Locale | undefined): void {
  if (f.model.halfPrecisionWorked !== undefined) {
    f.model.ampWhy = t(loc, 'lever.amp.experiment', { setting: f.model.halfPrecisionWorked });
    return;
  }
  if (f.model.fp32Setting === undefined) return;
  const tf = /^OOM when allocating/.test(f.model.fp32Setting);
  f.model.ampWhy = t(loc, tf ? 'lever.amp.tfFloat' : 'lever.amp.stated', { setting: f.model.fp32Setting });
  // TensorFlow's own switch, whichever tool wrote the log (PyTorch's autocast does not apply to a TF graph).
  if (tf) f.run.ampHow = TF_MIXED_PRECISION;
}
