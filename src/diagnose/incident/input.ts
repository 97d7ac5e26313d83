// The size of one input the paste states (levers/input-size.ts), its length in frames or seconds (levers/input-length.ts)
// and a smaller size or length the report says worked (levers/smaller-input.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface InputPart {
  /** The largest input the paste states, in pixels per image, the text that states it, and half of each side. */
  inputPixels?: number;
  inputSizeSetting?: string;
  inputSizeNext?: string;
  /** The report's own words that its input is large, when it states no size ("a big image", "高分辨率"). */
  inputSaidLarge?: string;
  /** The longest clip (frames) or recording / video (seconds) the paste states, the text that states it, and a shorter one to test. */
  inputLength?: number;
  inputLengthKind?: 'frames' | 'video' | 'audio';
  inputLengthSetting?: string;
  inputLengthNext?: string;
  /** The traceback frame that places the failure in a VAE decode (levers/vae-decode.ts), as quoted. */
  vaeDecodeFrame?: string;
  /** The report says the run works at a smaller input size or length and fails at a larger one: both as stated. */
  smallerWorked?: string;
  largerFailed?: string;
  /** A restoration / upscaling tool's tiling as the paste states it, and whether it names the tool (levers/tiled-restoration.ts). */
  tileWhy?: string;
  tileToolNamed?: boolean;
  /** The input a per-input skip line names over its OOM ("Skip a.png due to an error:"; levers/input-skipped.ts). */
  skippedInput?: string;
  /** The failed tensor's one-sample share when it alone rules every batch out (levers/single-tensor.ts), as quoted. */
  sampleTensorWhy?: string;
  /** One failed request of half the card or more, against the card (levers/single-tensor.ts), as quoted. */
  singleTensorWhy?: string;
}

/**
 * About half a megapixel (724 × 724) per input and more: at a batch of 1 or 2 one such image's activations are the
 * step's largest part for detection, segmentation and diffusion networks (YOLO's default 640 stays under it). Kept
 * with the input's part so every lever that weighs an input (levers/input-size.ts, eval.ts, input-length.ts) reads
 * it from here rather than from one another.
 */
export const LARGE_INPUT_PIXELS = 512 * 1024;
