// The size of one input the paste states (levers/input-size.ts).
// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.

export interface InputPart {
  /** The largest input the paste states, in pixels per image, the text that states it, and half of each side. */
  inputPixels?: number;
  inputSizeSetting?: string;
  inputSizeNext?: string;
}
