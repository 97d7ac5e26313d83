// Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface HolderPart {
  /** Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so. */
  // {holder} in rule templates and the JSON contract's facts.
  verdict?: string;
  // {holderWhy} in rule templates and the JSON contract's facts.
  why?: string;
}
