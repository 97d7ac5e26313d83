// How far training got before the failure (levers/progress.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface ProgressPart {
  /** Training steps a progress line showed done before the failure, and that line (trimmed) as evidence. */
  stepsDone?: number;
  /** Whole epochs a progress line showed done before the failure. */
  epochsDone?: number;
  progressLine?: string;
  /** The report says in words that the run went on at its settings for a while before it failed ("after a few iterations", "训练一段时间后"). */
  runToldBeforeFailure?: string;
  /** The report says the run trained several epochs at these settings before the GPU ran out ("after 21 epochs", "after several epochs"). */
  oomAfterEpochs?: string;
}
