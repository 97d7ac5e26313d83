// The VAE decode as a phase with its own lever (issue 23). A latent-diffusion pipeline (images or video) samples in
// the small latent space, then its VAE decodes the result to pixels in one pass: the decoder's activations grow with
// the output's pixels (and frames), so an OOM inside the decode, after sampling finished, is one output too large to
// decode at once. The lever is decoding in tiles or chunks (diffusers' enable_vae_tiling(), ComfyUI's VAE Decode
// (Tiled), a smaller decode chunk) or a lower resolution / fewer frames, not the batch and not the sampler. Read
// from the traceback's frames, the frameworks' own names: a frame in a VAE / autoencoder module's decode, CompVis'
// decode_first_stage, diffusers' decode_latents, ComfyUI's VAEDecode node. Bounded per line: linear.
import { staticOverCard } from './static-fit.js';
import type { Incident, InputPart, PhasePart } from '../incident/index.js';
import { boundedLines } from '../lines.js';

export type VaeDecodeFacts = Pick<InputPart, 'vaeDecodeFrame'>;

const MAX_LINES = 20_000;
const MAX_LINE = 600;
const SMALL_BATCH = 2;

// 'File ".../diffusers/models/autoencoders/autoencoder_kl.py", line 305, in decode', '.../wan/modules/vae2_2.py", line
// 1043, in decode', 'comfy/sd.py", line 612, in decode' (ComfyUI's VAE class), '..., in decode_first_stage'.
const VAE_FILE_FRAME = /File "[^"\n]{0,300}?(?:vae|autoencoder)[^"\n/\\]{0,60}\.py", line \d{1,6}, in (_?decode\w{0,20}|forward)\b/i;
const COMFY_VAE_FRAME = /File "[^"\n]{0,300}?comfy[\\/]sd\.py", line \d{1,6}, in (decode\w{0,20})\b/;
const DECODE_FN_FRAME = /File "[^"\n]{0,300}", line \d{1,6}, in (decode_first_stage|decode_latents|vae_decode|decode_latent\w{0,10})\b/;
// ComfyUI's node and a decode call quoted in a traceback's code line: "VAEDecode", "image = vae.decode(latents ...".
const DECODE_CODE = /\bVAEDecode\b|\b(?:self\.)?(?:vae|first_stage_model)\.decode\(/;

/** The traceback frame (or code line) that places the failure in a VAE decode, as quoted. */
export function readVaeDecode(text: string): VaeDecodeFacts {
  let code: string | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!line) continue;
    for (const re of [VAE_FILE_FRAME, COMFY_VAE_FRAME, DECODE_FN_FRAME]) {
      const m = re.exec(line);
      // "forward" only in a decoder's own file: an encoder's forward is no decode.
      if (m && !(m[1] === 'forward' && !/decoder/i.test(line))) return { vaeDecodeFrame: line.trim().replace(/^File /, '') };
    }
    if (!code && DECODE_CODE.test(line)) code = line.trim();
  }
  return code ? { vaeDecodeFrame: code } : {};
}

const grows = (f: Incident) => f.series.memoryShape === 'growth' || f.series.memoryShape === 'sawtooth_rising';
const DECODE_PHASES = new Set<PhasePart['name']>([undefined, 'forward', 'generate']);

/**
 * The failure is in the VAE decode: decoding in tiles or at a lower resolution is the first lever, where no batch
 * above 2 is stated (several images decoded at once are the batch's), nothing grows, the weights fit, and the
 * phase is no backward (a decode inside a training step's loss is the step's).
 */
export function vaeDecodeFirst(f: Incident): boolean {
  if (f.input.vaeDecodeFrame === undefined) return false;
  if (f.run.batch !== undefined && f.run.batchDefaultOf === undefined && f.run.batch > SMALL_BATCH) return false;
  return DECODE_PHASES.has(f.phase.name) && !grows(f) && !staticOverCard(f);
}
