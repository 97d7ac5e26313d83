// One input's spatial size as a lever (issue 23). A vision network's activations (feature maps, attention over
// patches, a VAE's decoder) grow with the pixels of each input: at a stated batch of 1 or 2, or none (inference,
// an unstated batch), halving the batch cannot shrink one large image, so the input size is the first lever
// (a lower image size / resolution / crop, or tiles processed one at a time). The size is read from the settings'
// own names (imgsz, img_size, image_size, input_size, crop_size, resolution, Detectron2's INPUT.MIN/MAX_SIZE_TRAIN,
// with one value or an (H, W) pair), a "W x H" in the paste, and a 4-d tensor shape in the error (TF's NHWC
// "shape[1,5095,3729,3]", PyTorch's NCHW "[1, 3, 2048, 2048]"). Every pattern is bounded and linear.
import { staticOverCard } from '../levers.js';
import { oomAfterSteps } from './progress.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';

export type InputSizeFacts = Pick<InputPart, 'inputPixels' | 'inputSizeSetting' | 'inputSizeNext'>;

const WINDOW = 512 * 1024;
/**
 * About half a megapixel (724 × 724) per input and more: at a batch of 1 or 2 one such image's activations are the
 * step's largest part for detection, segmentation and diffusion networks (YOLO's default 640 stays under it).
 */
export const LARGE_INPUT_PIXELS = 512 * 1024;
const SMALL_BATCH = 2;

const SIDE = String.raw`(\d{3,5})`;
const KEYS = String.raw`imgsz|img[-_]size|image[-_]size|input[-_]size|crop[-_]size|resolution|INPUT\.M(?:IN|AX)_SIZE_TRAIN`;
// `crop_size = (512, 1024)`, `image_size: [1024, 2048]`, `--img-size 1280`, `-image_size 800px`, `imgsz=1536`.
const KEY_PAIR = new RegExp(String.raw`(?:${KEYS})['"]?[ \t]{0,2}[=:][ \t]{0,2}[(\[][ \t]{0,2}${SIDE}[ \t]{0,2},[ \t]{0,2}${SIDE}[ \t]{0,2}[)\]]`, 'gi');
const KEY_ONE = new RegExp(String.raw`(?:${KEYS})['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})['"]?${SIDE}(?:[ \t]?px)?(?![\w.]|,[ \t]{0,2}\d)`, 'gi');
// "2048*2048 image size", "1024x1024", "1720 × 1540": both sides at least 256 (3-digit numbers only).
const WXH = new RegExp(String.raw`(?<![\w.])${SIDE}[ \t]?[x×*][ \t]?${SIDE}(?![\w.])`, 'g');
// 4-d tensor shapes: TF's NHWC in "OOM when allocating tensor with shape[1,5095,3729,3]", PyTorch's NCHW.
const NHWC = /shape[ \t]?\[(\d{1,4}),[ \t]?(\d{3,5}),[ \t]?(\d{3,5}),[ \t]?[1-4]\]/g;
const NCHW = /\[(\d{1,4}),[ \t]?[1-4],[ \t]?(\d{3,5}),[ \t]?(\d{3,5})\]/g;

// The report says a smaller input was tried and the error stayed ("I still encounter this problem when I change it to
// 512*512", "lowered the resolution to 768x768 and it still fails", "改成512*512还是爆显存"): the input is not the lever.
const SMALLER = String.raw`(?:\d{3,5}[ \t]?[x×*][ \t]?\d{3,5}|smaller|lower (?:size|resolution)|尺寸|分辨率)`;
const INPUT_NO_HELP = [
  new RegExp(String.raw`\bstill\b[^\n.]{0,60}\b(?:chang|lower|reduc|resiz|shrink|set)\w{0,4}\b[^\n.]{0,24}\b(?:to|into)[ \t]{1,2}(?:an?[ \t])?${SMALLER}`, 'i'),
  new RegExp(
    String.raw`\b(?:chang|lower|reduc|resiz|shrink|decreas)\w{0,4}\b[^\n.]{0,40}${SMALLER}[^\n.]{0,60}\b(?:still|same error|no (?:help|difference)|does(?:n't| not) help)\b`,
    'i',
  ),
  new RegExp(String.raw`(?:改|调|降|缩)[^\n。]{0,20}${SMALLER}[^\n。]{0,30}(?:还是|仍然|依然|照样)`),
];

const MIN_SIDE = 256;
const MAX_SIDE = 65536;

/** The largest stated input in pixels, its text and half its sides (facts.inputPixels, inputSizeSetting, inputSizeNext). */
export function readInputSize(fullText: string): InputSizeFacts {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  let best: { h: number; w: number; quote: string } | undefined;
  const consider = (h: number, w: number, quote: string) => {
    if (h < MIN_SIDE || w < MIN_SIDE || h > MAX_SIDE || w > MAX_SIDE) return;
    if (!best || h * w > best.h * best.w) best = { h, w, quote: quote.trim() };
  };
  for (const [re, sides] of [
    [KEY_PAIR, (m: RegExpExecArray) => [m[1], m[2]]],
    [KEY_ONE, (m: RegExpExecArray) => [m[1], m[1]]],
    [WXH, (m: RegExpExecArray) => [m[1], m[2]]],
    [NHWC, (m: RegExpExecArray) => [m[2], m[3]]],
    [NCHW, (m: RegExpExecArray) => [m[2], m[3]]],
  ] as [RegExp, (m: RegExpExecArray) => string[]][]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const [h, w] = sides(m).map(Number);
      consider(h, w, m[0]);
    }
  }
  if (!best || INPUT_NO_HELP.some((re) => re.test(text))) return {};
  const half = (n: number) => Math.max(1, Math.round(n / 2));
  return {
    inputPixels: best.h * best.w,
    inputSizeSetting: best.quote,
    inputSizeNext: best.h === best.w ? String(half(best.h)) : `${half(best.h)}×${half(best.w)}`,
  };
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
/** Phases where one input's activations are on the card: a forward or backward, generation, or none known. */
const INPUT_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'backward', 'generate']);

/**
 * One large input is the first lever: a stated input of LARGE_INPUT_PIXELS or more, a stated batch of 1 or 2 or
 * none (a tool's default is not stated), in a phase that runs inputs, with no growth, no steps done at these
 * settings, and a static part that fits. Who holds the card is checked beside it (conditions.ts).
 */
export function inputSizeFirst(f: Incident): boolean {
  if (f.input.inputPixels === undefined || f.input.inputPixels < LARGE_INPUT_PIXELS) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}
