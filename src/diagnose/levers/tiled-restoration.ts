// Tiles as the lever of image restoration and upscaling (issue 23). Super-resolution and restoration tools (Real-ESRGAN,
// Real-CUGAN, SwinIR, BasicSR's testers) run one image at a time with no batch: the network's feature maps at the
// input's (and, after upsampling, 2-4× the input's) resolution fill the card, and their one memory knob is tiling,
// cutting the image into pieces processed one after another and stitched. Real-ESRGAN's inference_realesrgan.py and
// SwinIR's main_test_swinir.py take a tile size in pixels (--tile, default 0 / none: the whole image at once);
// Real-CUGAN a tile mode (tile=0 whole image, a higher mode more pieces); each has a half-precision switch (Real-ESRGAN
// runs fp16 unless --fp32, Real-CUGAN half=True). So where the paste runs such a tool (its name, its inference
// script or RealESRGANer in a frame) or states a tile setting, outside training, at no batch above 2, the tile
// setting is the first lever, quoted with what the paste states; the batch never is. Read per line, bounded: linear.
import { staticOverCard } from './static-fit.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

export type TiledRestorationFacts = Pick<InputPart, 'tileWhy' | 'tileToolNamed'>;

const MAX_LINES = 20_000;
const MAX_LINE = 1200;
const SMALL_BATCH = 2;
const MAX_QUOTES = 3;

// The tools' own names and entry points, fixed vocabulary (case-insensitive): "Real-ESRGAN", "RealESRGAN_x4plus",
// "RealESRGANer", "realesr-animevideov3", "RealCUGAN_for_win10", "Real-CUGAN", "cugan", "SwinIR", "main_test_swinir.py".
// StableSR (a diffusion upscaler) by its name and its sampling scripts ("sr_val_ddpm_text_T_vqganfin_oldcanvas_tile.py",
// "sr_val_ddpm_text_T_vqganfin_old.py"); its tiles are --vqgantile_size / --vqgantile_stride (1280 / 1000 by default).
const TOOL =
  /(?<![\w-])(Real[-_ ]?ESRGAN(?:er)?|realesr-\w{1,20}|(?:Real[-_ ]?)?CUGAN|SwinIR|StableSR)(?=[\w.-]{0,40})|(inference_realesrgan(?:_video)?\.py|main_test_swinir\.py|sr_val_ddpm_text_T_vqganfin\w{0,40}\.py)/i;
// A training run of those tools: BasicSR's / Real-ESRGAN's train script with an options file.
const TRAIN_SCRIPT = /(?:^|[\s/\\])(?:realesrgan[\\/])?train\.py\s{1,3}-opt\b|\btrain_realesr\w{0,20}\.yml\b/i;
// The tile setting as the tools write it: "tile=0", "--tile 400", "-t 256" only with the inference script, "tile: 4",
// "tile_size = 512", "tile_pad=10" is padding, not the tile; Chinese "分块" settings are rare and left out.
const TILE_SETTING = /(?<![\w-])(?:--?)?((?:vqgan)?tile(?:[_-]?size|[_-]?mode|_stride)?)['"]?[ \t]{0,2}(?:[=:：][ \t]{0,2}|[ \t]{1,3})(\d{1,5})(?![\w./])/gi;
// Half precision turned off: Real-CUGAN's "half=False", Real-ESRGAN's "--fp32".
const HALF_OFF = /(?<![\w-])half[ \t]{0,2}[=:][ \t]{0,2}False\b|(?<![\w-])--fp32\b/;
// The inference script's command line: where it is shown without --tile, the whole image is upscaled at once.
const COMMAND = /(?:inference_realesrgan(?:_video)?|main_test_swinir)\.py\b[^\n]{0,400}/i;

/** The tool's own spelling of its name, from any of its names or scripts. */
const toolName = (found: string) =>
  /cugan/i.test(found) ? 'Real-CUGAN' : /swinir/i.test(found) ? 'SwinIR' : /stablesr|vqganfin/i.test(found) ? 'StableSR' : 'Real-ESRGAN';

/** What the paste states of a restoration tool's tiling ({tileWhy}), or nothing where it runs none. */
export function readTiledRestoration(text: string): TiledRestorationFacts {
  let tool: string | undefined;
  let training = false;
  let command: string | undefined;
  let halfOff: string | undefined;
  const tiles: string[] = [];
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!line) continue;
    const t = TOOL.exec(line);
    if (t && !tool) tool = toolName(t[0]);
    if (TRAIN_SCRIPT.test(line)) training = true;
    if (!command) command = COMMAND.exec(line)?.[0];
    if (!halfOff) halfOff = HALF_OFF.exec(line)?.[0];
    TILE_SETTING.lastIndex = 0;
    for (let m = TILE_SETTING.exec(line); m && tiles.length < MAX_QUOTES; m = TILE_SETTING.exec(line)) {
      const quote = `${m[1]}=${m[2]}`;
      if (!tiles.includes(quote)) tiles.push(quote);
    }
  }
  if (training) return {};
  const half = halfOff ? [halfOff.replace(/\s/g, '')] : [];
  const named = tool ? { tileToolNamed: true as const } : {};
  if (tiles.length) return { tileWhy: [...tiles, ...half].join(', ') + (tool ? ` (${tool})` : ''), ...named };
  if (!tool) return {};
  const noTile = command && !/--tile\b|(?<![\w-])-t\s/.test(command) ? '; no --tile in the command: the whole image at once' : '';
  return { tileWhy: `${tool}${noTile}${half.length ? `, ${half[0]}` : ''}`, ...named };
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
const IMAGE_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'generate', 'eval']);

/**
 * A restoration or upscaling run whose tiling the paste states or whose tool it names: tiles first, where no batch
 * above 2 is stated, the phase runs images, nothing grows and the weights fit. A training run (words or script) is the
 * batch's and the patch size's, not this lever's; training words with no such tool named leave a bare tile setting out.
 */
export function tiledRestorationFirst(f: Incident): boolean {
  if (f.input.tileWhy === undefined || (f.run.training === true && f.input.tileToolNamed !== true)) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return IMAGE_PHASES.has(f.phase.name) && !grows(f) && !staticOverCard(f);
}
