// One input's spatial size as a lever (issue 23). A vision network's activations (feature maps, attention over
// patches, a VAE's decoder) grow with the pixels of each input: at a stated batch of 1 or 2, or none (inference,
// an unstated batch), halving the batch cannot shrink one large image, so the input size is the first lever
// (a lower image size / resolution / crop, or tiles processed one at a time). The size is read from the settings'
// own names (imgsz, img_size, image_size, input_size, crop_size, resolution, Detectron2's INPUT.MIN/MAX_SIZE_TRAIN,
// with one value or an (H, W) pair), a "W x H" in the paste, and a 4-d tensor shape in the error (TF's NHWC
// "shape[1,5095,3729,3]", PyTorch's NCHW "[1, 3, 2048, 2048]"). Every pattern is bounded and linear.
import { cardMiB, staticOverCard } from './static-fit.js';
import { oomAfterSteps } from './progress.js';
import { LARGE_INPUT_PIXELS } from '../incident/input.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';

export type InputSizeFacts = Pick<InputPart, 'inputPixels' | 'inputSizeSetting' | 'inputSizeNext' | 'inputSaidLarge'>;

const WINDOW = 512 * 1024;
const SMALL_BATCH = 2;

const SIDE = String.raw`(\d{3,5})`;
// YOLOv5's `--img 1280` only as the flag (a bare "img" is any image); Detectron2's TEST sizes are an evaluation's input.
const KEYS = String.raw`imgsz|img[-_]size|image[-_]size|input[-_]size|crop[-_]size|resolution|--img(?![\w-])|INPUT\.M(?:IN|AX)_SIZE_T(?:RAIN|EST)`;
// `crop_size = (512, 1024)`, `image_size: [1024, 2048]`, `--img-size 1280`, `-image_size 800px`, `imgsz=1536`.
const KEY_PAIR = new RegExp(String.raw`(?:${KEYS})['"]?[ \t]{0,2}[=:][ \t]{0,2}[(\[][ \t]{0,2}${SIDE}[ \t]{0,2},[ \t]{0,2}${SIDE}[ \t]{0,2}[)\]]`, 'gi');
// Reports write the pair after the words with a verb: "input image size is [2436,1476]", "image size of (1024, 2048)".
const SAID_PAIR = new RegExp(
  String.raw`\b(?:image|input|img)[ \t]size[ \t]{1,2}(?:is|was|of)[ \t]{1,2}[(\[][ \t]{0,2}${SIDE}[ \t]{0,2},[ \t]{0,2}${SIDE}[ \t]{0,2}[)\]]`,
  'gi',
);
// R-CNN configs (mx-rcnn, py-faster-rcnn) state the training scale as (short side, long side) pairs: "'SCALES': [(600, 1000)]".
const RCNN_SCALES = new RegExp(String.raw`\bSCALES['"]?[ \t]{0,2}[=:][ \t]{0,2}\[?\([ \t]{0,2}${SIDE}[ \t]{0,2},[ \t]{0,2}${SIDE}[ \t]{0,2}\)`, 'g');
// A side ends at a word boundary or a sentence's full stop ("height 1024."), not inside a decimal ("1024.5").
const END = String.raw`(?!\w|\.\d)`;
// kohya's sd-scripts and its configs write the pair bare: "--resolution=1024,1024", "resolution = 768,512".
const KEY_PAIR_BARE = new RegExp(
  String.raw`(?:${KEYS})['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?${SIDE}[ \t]{0,2},[ \t]{0,2}${SIDE}${END}(?![ \t]{0,2},[ \t]{0,2}\d)`,
  'gi',
);
// One value, not the first side of a pair ("resolution 4080 × 3060" is read as the pair below).
const KEY_ONE = new RegExp(
  String.raw`(?:${KEYS})['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})['"]?${SIDE}(?:[ \t]?px)?${END}(?!,[ \t]{0,2}\d|[ \t]?[x×*][ \t]?\d)`,
  'gi',
);
// Chinese reports name the size with its own words: "分辨率为2048", "输入尺寸：1536", "图片大小 4000" (one side).
const ZH_KEY_ONE = new RegExp(
  String.raw`(?:分辨率|尺寸|图像大小|图片大小|输入大小)[ \t]{0,2}(?:为|是|[=:：])?[ \t]{0,2}${SIDE}(?:[ \t]?(?:px|像素))?${END}(?![ \t]?[x×*][ \t]?\d)`,
  'g',
);
// "2048*2048 image size", "1024x1024", "1720 × 1540": both sides at least 256 (3-digit numbers only).
// Not two sides of a 3-D size ("1504x1504x561": VOLUME_SIDES below).
// Markdown escapes the star ("1024\\*1024") and some write a capital X ("1024X1024"): the same size.
const WXH = new RegExp(String.raw`(?<![\w.]|[x×*][ \t]?)${SIDE}[ \t]?(?:\\?\*|[x×X])[ \t]?${SIDE}${END}(?![ \t]?[x×*X][ \t]?\d)`, 'g');
// 4-d tensor shapes: TF's NHWC in "OOM when allocating tensor with shape[1,5095,3729,3]", PyTorch's NCHW.
const NHWC = /shape[ \t]?\[(\d{1,4}),[ \t]?(\d{3,5}),[ \t]?(\d{3,5}),[ \t]?[1-4]\]/g;
const NCHW = /\[(\d{1,4}),[ \t]?[1-4],[ \t]?(\d{3,5}),[ \t]?(\d{3,5})\]/g;
// A feature map in the error at a batch of 1 or 2 (TF prints the shape it failed to allocate): any channels, spatial
// sides of 3+ digits, NHWC "shape[1,2048,2048,64]" or NCHW "shape[1,64,2048,2048]". Early layers run at the input's
// resolution, so the input is at least that large.
const MAP_NHWC = /shape[ \t]?\[([12]),[ \t]?(\d{3,5}),[ \t]?(\d{3,5}),[ \t]?\d{1,5}\]/g;
const MAP_NCHW = /shape[ \t]?\[([12]),[ \t]?\d{1,5},[ \t]?(\d{3,5}),[ \t]?(\d{3,5})\]/g;
// A height and a width set side by side on one line: diffusers' `pipe(prompt, height=1024, width=1024)`, CompVis
// txt2img's `--H 1536 --W 1536`, video samplers' `--height 720 --width 1280`, in either order.
const SIDE_SET = String.raw`['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})${SIDE}${END}`;
const HEIGHT = String.raw`(?<![\w-])(?:--?H|(?:--?)?[Hh]eight|HEIGHT)`;
const WIDTH = String.raw`(?<![\w-])(?:--?W|(?:--?)?[Ww]idth|WIDTH)`;
const HEIGHT_WIDTH = new RegExp(String.raw`${HEIGHT}${SIDE_SET}[^\n]{0,120}?${WIDTH}${SIDE_SET}`, 'g');
const WIDTH_HEIGHT = new RegExp(String.raw`${WIDTH}${SIDE_SET}[^\n]{0,120}?${HEIGHT}${SIDE_SET}`, 'g');
// Named resolutions: "720p", "1080P" (16:9, the number is the height); "4K video", "8k image" (3840×2160, 7680×4320;
// a bare "4k" is as often a context length, so only beside an image or video word).
const NAMED_P = /(?<![\w.])(480|540|576|720|1080|1440|2160|4320)[pP](?!\w)/g;
const NAMED_K = /(?<![\w.])([248])[kK][ \t]{0,2}(?=images?\b|videos?\b|photos?\b|pictures?\b|resolution|upscal|UHD|图|视频|分辨率|画质)/gi;
const K_SIDES: Record<string, [number, number]> = { '2': [1080, 2048], '4': [2160, 3840], '8': [4320, 7680] };
// The report says the input is large without a number ("a big image", "high-resolution images", "large volumes",
// "高分辨率", "大图"): the words people use for this class, weaker evidence than a size, used only outside training.
const SAID_LARGE =
  /\b(?:(?:very\s{1,2})?(?:large|big|huge|bigger|larger)|high[- ]?res(?:olution)?|hi[- ]res)\s{1,2}(?:input\s{1,2})?(?:images?|pictures?|pics|photos?|inputs?|volumes?|scans?|videos?|tiffs?)\b|高分辨率|大分辨率|大尺寸|大图/i;

// A 5-d tensor shape in the error is one batch of volumes (3-D CT/MRI, voxel grids): TF's NDHWC
// "shape[1,160,192,224,16]" or channels first "shape[1,16,160,192,224]"; the three largest of the four sides after
// the batch are the volume, the smallest its channels.
const VOLUME = /shape[ \t]?\[(\d{1,4}),[ \t]?(\d{1,4}),[ \t]?(\d{1,4}),[ \t]?(\d{1,4}),[ \t]?(\d{1,4})\]/g;
const MIN_VOLUME_SIDE = 32;
// A 3-D size written out ("a 1504x1504x561 CT volume", "512x512x512", "patch size 160x160x80"): its voxels.
const VOLUME_SIDES = new RegExp(
  String.raw`(?<![\w.]|[x×*][ \t]?)(\d{2,5})[ \t]?[x×*][ \t]?(\d{2,5})[ \t]?[x×*][ \t]?(\d{2,5})${END}(?![ \t]?[x×*][ \t]?\d)`,
  'g',
);
// An image size in megapixels, the unit photographs and upscalers state: "12 MPix", "3MPX", "a 16MP photo", "12-megapixel".
const MEGAPIXELS = /(?<![\w.])(\d{1,3}(?:\.\d{1,2})?)[ \t-]?(?:MPix|MPX|Mpx|MP|[Mm]ega-?pixels?)(?![A-Za-z])/g;
// A video's frames multiply one input's pixels (every frame's activations are on the card at once in a video model).
// Not a count written before the noun ("1000 frames = 40 seconds": 40 is the duration, not the frames).
const FRAMES =
  /(?<![\w-]|\d[ \t]{1,2})(?:--)?(?:num[-_]frames|video[-_]length|n[-_]frames|frames)['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}|[ \t]{1,3})(\d{1,4})(?![\w.])/i;

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
  const half = (n: number) => Math.max(1, Math.round(n / 2));
  let best: { h: number; w: number; quote: string } | undefined;
  const consider = (h: number, w: number, quote: string) => {
    if (h < MIN_SIDE || w < MIN_SIDE || h > MAX_SIDE || w > MAX_SIDE) return;
    if (!best || h * w > best.h * best.w) best = { h, w, quote: quote.trim() };
  };
  for (const [re, sides] of [
    [KEY_PAIR, (m: RegExpExecArray) => [m[1], m[2]]],
    [KEY_PAIR_BARE, (m: RegExpExecArray) => [m[1], m[2]]],
    [SAID_PAIR, (m: RegExpExecArray) => [m[1], m[2]]],
    [RCNN_SCALES, (m: RegExpExecArray) => [m[1], m[2]]],
    [KEY_ONE, (m: RegExpExecArray) => [m[1], m[1]]],
    [ZH_KEY_ONE, (m: RegExpExecArray) => [m[1], m[1]]],
    [WXH, (m: RegExpExecArray) => [m[1], m[2]]],
    [NHWC, (m: RegExpExecArray) => [m[2], m[3]]],
    [NCHW, (m: RegExpExecArray) => [m[2], m[3]]],
    [MAP_NHWC, (m: RegExpExecArray) => [m[2], m[3]]],
    [MAP_NCHW, (m: RegExpExecArray) => [m[2], m[3]]],
    [HEIGHT_WIDTH, (m: RegExpExecArray) => [m[1], m[2]]],
    [WIDTH_HEIGHT, (m: RegExpExecArray) => [m[2], m[1]]],
    [NAMED_P, (m: RegExpExecArray) => [m[1], String(Math.round((Number(m[1]) * 16) / 9))]],
    [NAMED_K, (m: RegExpExecArray) => K_SIDES[m[1]].map(String)],
  ] as [RegExp, (m: RegExpExecArray) => string[]][]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const [h, w] = sides(m).map(Number);
      consider(h, w, m[0]);
    }
  }
  // Megapixels stand for an image whose sides are not written: the pixels count, "half of each side" is a quarter of them.
  let mega: { pixels: number; quote: string; next: string } | undefined;
  MEGAPIXELS.lastIndex = 0;
  for (let m = MEGAPIXELS.exec(text); m; m = MEGAPIXELS.exec(text)) {
    const pixels = Number(m[1]) * 1e6;
    if (pixels >= 1e6 && pixels <= 1e10 && (!mega || pixels > mega.pixels)) mega = { pixels, quote: m[0], next: `${Number((Number(m[1]) / 4).toFixed(2))} MP` };
  }
  let volume: { voxels: number; quote: string; next: string } | undefined;
  const considerVolume = (sides: number[], quote: string) => {
    const voxels = sides[0] * sides[1] * sides[2];
    if (Math.min(...sides) >= MIN_VOLUME_SIDE && (!volume || voxels > volume.voxels)) volume = { voxels, quote: quote.trim(), next: sides.map(half).join('×') };
  };
  VOLUME.lastIndex = 0;
  for (let m = VOLUME.exec(text); m; m = VOLUME.exec(text)) {
    const four = [m[2], m[3], m[4], m[5]].map(Number);
    considerVolume(
      four.filter((_, i) => i !== four.indexOf(Math.min(...four))),
      m[0],
    );
  }
  VOLUME_SIDES.lastIndex = 0;
  for (let m = VOLUME_SIDES.exec(text); m; m = VOLUME_SIDES.exec(text)) considerVolume([m[1], m[2], m[3]].map(Number), m[0]);
  if (INPUT_NO_HELP.some((re) => re.test(text))) return {};
  const pixels = best ? best.h * best.w : 0;
  if (volume && volume.voxels > Math.max(pixels, mega?.pixels ?? 0))
    return { inputPixels: volume.voxels, inputSizeSetting: volume.quote, inputSizeNext: volume.next };
  if (mega && mega.pixels > pixels) return { inputPixels: mega.pixels, inputSizeSetting: mega.quote, inputSizeNext: mega.next };
  if (!best) {
    const said = SAID_LARGE.exec(text);
    return said ? { inputSaidLarge: said[0] } : {};
  }
  const frames = FRAMES.exec(text);
  const frameCount = frames && Number(frames[1]) >= 2 ? Number(frames[1]) : 1;
  return {
    inputPixels: pixels * frameCount,
    inputSizeSetting: frameCount > 1 ? `${frames![0].trim()}, ${best.quote}` : best.quote,
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

/**
 * The report calls its one input large and states no size: the input is still the first lever outside training (an
 * inference, a generation or a run with no training shown), where no batch was stated above 2 and the other
 * preconditions of inputSizeFirst hold. In training the batch experiment decides instead.
 */
export function inputSaidLargeFirst(f: Incident): boolean {
  if (f.input.inputSaidLarge === undefined || f.input.inputPixels !== undefined || f.input.inputLength !== undefined) return false;
  if (f.run.training === true) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}

/**
 * The report says the run is inference (reported-load.ts) and states no batch above 1, no input size and no model size:
 * outside training a request holds the weights and one input's activations, which grow with that input (an image's
 * pixels, a page rendered to an image, a text's tokens), so the experiment that decides is the same input at half its
 * size, not a training step at batch 1. A sized model is the budget's to judge (holder.ts), a stated size the levers'
 * above.
 */
export function inferenceInputExperiment(f: Incident): boolean {
  if (f.run.training === true || f.run.inference === true || f.run.inferenceSaid === undefined || f.model.paramsB !== undefined) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > 1) return false;
  if (f.input.inputPixels !== undefined || f.input.inputSaidLarge !== undefined || f.input.inputLength !== undefined) return false;
  return INPUT_PHASES.has(f.phase.name) && !grows(f) && !oomAfterSteps(f) && !staticOverCard(f);
}

/** Tokens of one sequence or context whose attention takes gigabytes (sequence.ts LONG_SEQUENCE, generation-length.ts LONG_REQUEST). */
const LONG_TOKENS = 8192;

/**
 * An impossible request (many times the card) beside a stated large input, image or volume (inputPixels), a long
 * clip or recording (input-length.ts), or a long sequence or context (sequence.ts): the request is that one input's
 * attention or feature maps, which grow with the square of its tokens, so the input is the first lever, not a shape
 * that blew up. The text that states the input, or undefined.
 */
export function absurdInput(f: Incident): string | undefined {
  if (f.input.inputPixels !== undefined && f.input.inputPixels >= LARGE_INPUT_PIXELS) return f.input.inputSizeSetting;
  if (f.input.inputLength !== undefined) return f.input.inputLengthSetting;
  // An upscaler run on one image whole (levers/tiled-restoration.ts): its feature maps at the output's size.
  if (f.input.tileWhy !== undefined) return f.input.tileWhy;
  if (f.sequence.seqLen !== undefined && f.sequence.seqLen >= LONG_TOKENS) return f.sequence.seqLenSetting;
  if (f.sequence.generateLen !== undefined && f.sequence.generateLen >= LONG_TOKENS) return f.sequence.generateLenSetting;
  return undefined;
}

/**
 * Tools whose models are vision networks (tools.yaml ids): their weights are tens or hundreds of MB, so at a batch of 1
 * one image's activations (feature maps at every scale) are most of a step and the image size is what is left to cut.
 */
const VISION_TOOLS = new Set(['ultralytics', 'yolov5', 'mmengine', 'mmcv', 'detectron2', 'timm', 'kohya-sd-scripts']);

/** The usual training size of detection and classification tools (YOLO's 640, ImageNet crops below it). */
const STANDARD_PIXELS = 640 * 640;
/** A card this small can be filled by one standard-size image's activations in a large vision model. */
const SMALL_CARD_MIB = 16 * 1024;

/**
 * A vision network's training or forward at a stated batch of 1 (a vision tool, or an image size stated in the paste)
 * where one image can explain the card being full: the image is larger than the usual 640 px, or the card is small.
 * One 640 px image's activations are a few GiB, so a large card full at that size says the static part or something
 * else holds it, and the experiment decides (levers.ts batch_one_experiment).
 */
export function visionAtBatchOne(f: Incident): boolean {
  if (f.run.batch !== 1 || f.run.batchDefaultOf !== undefined) return false;
  if (!((f.run.tool !== undefined && VISION_TOOLS.has(f.run.tool)) || f.input.inputPixels !== undefined)) return false;
  const card = cardMiB(f);
  return (f.input.inputPixels !== undefined && f.input.inputPixels > STANDARD_PIXELS) || (card !== undefined && card <= SMALL_CARD_MIB);
}
