// The size of one input the paste states (levers/input-size.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface InputPart {
  /** The largest input the paste states, in pixels per image, the text that states it, and half of each side. */
  inputPixels?: number;
  inputSizeSetting?: string;
  inputSizeNext?: string;
}
