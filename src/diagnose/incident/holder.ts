// Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so.
// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.

export interface HolderPart {
  /** Who holds the GPU memory (src/diagnose/holder.ts) and the arithmetic that says so. */
  // {holder} in rule templates and the JSON contract's facts.
  verdict?: string;
  // {holderWhy} in rule templates and the JSON contract's facts.
  why?: string;
}
