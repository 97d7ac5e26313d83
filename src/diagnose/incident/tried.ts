// What the user says they already tried.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface TriedPart {
  /** The report says a changed (smaller) batch did not help: "try to change the batch_size, this error still occured". */
  batchChangeNoHelp?: boolean;
}
