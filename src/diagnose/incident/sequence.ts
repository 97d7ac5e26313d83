// The sequence length the paste states (levers/sequence.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface SequencePart {
  /** The longest sequence length the paste states, in tokens, the setting or sentence that states it, and half of it (levers/sequence.ts). */
  seqLen?: number;
  seqLenSetting?: string;
  seqLenNext?: number;
  /** The longest generation length the paste sets (max_new_tokens, max_length, max_model_len), its setting and half of it (levers/generation-length.ts). */
  generateLen?: number;
  generateLenSetting?: string;
  generateLenNext?: number;
}
