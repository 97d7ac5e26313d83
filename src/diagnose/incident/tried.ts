// What the user says they already tried.
// A typed part of the incident (index.ts); generated from the Facts fields by scripts/codemods/facts-to-incident.mjs.

export interface TriedPart {
  /** The report says a changed (smaller) batch did not help: "try to change the batch_size, this error still occured". */
  batchChangeNoHelp?: boolean;
}
