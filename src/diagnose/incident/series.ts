// Memory over time as the paste prints it, its trend, and what growing memory keeps.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.
import type { MemoryShape } from '../memory-series.js';

export interface SeriesPart {
  /** The total loss left its level on the progress lines before the failure: "1.0083 -> 2.3e+5" (levers/loss-diverged.ts). */
  lossJump?: string;
  /** GPU memory per epoch or iteration, in MiB, as the training log printed it. */
  memorySeriesMiB?: number[];
  /** The series' shape (src/diagnose/memory-series.ts) and, for a rising one, where it rises. */
  memoryShape?: MemoryShape;
  memoryGrowsAt?: 'per_iteration' | 'between_epochs';
  /** Host RAM per step or epoch as the paste prints it (RSS / RAM readings), in MiB, and whether it settled (flat, warm-up, back to its level). */
  hostSeriesMiB?: number[];
  hostSettled?: boolean;
  /** That host series' shape (memory-series.ts classifyShape): 'growth' or 'sawtooth_rising' is a climb to the kill. */
  hostShape?: MemoryShape;
  /** The series contradicts a report of growth: flat, a warm-up that stopped, or peaks back to their level (memory-series.ts seriesSettled). */
  memorySettled?: boolean;
  /** The paste's line that shows what growing memory keeps (a loss tensor added to a total, outputs appended), trimmed. */
  keptReference?: string;
  /** A climb of the card's memory the report tells against the run's measure ("with each iteration"), quoted (told-failure.ts). */
  toldClimb?: string;
  /** The report names the input's length or size as what drives the memory ("应该是音频长度的问题"): a rise with the input, not a climb. */
  riseWithInput?: string;
  /** The pasted code or log already calls torch.cuda.empty_cache(): advising it again changes nothing. */
  emptiesCache?: boolean;
}
