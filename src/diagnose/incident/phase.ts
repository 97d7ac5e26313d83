// Where the run was when it failed (src/diagnose/phase.ts, holder-phase.ts), from frames and log lines.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.
import type { OomPhase } from '../holder-phase.js';
import type { Phase } from '../phase.js';

export interface PhasePart {
  /** What the run was doing when it failed (src/diagnose/phase.ts), the frame that showed it, and for evaluation whose loop it is. */
  // {phase} in rule templates and the JSON contract's facts.
  name?: Phase;
  phaseFrame?: string;
  /** What the run was doing when the allocation failed, from the traceback's frames. */
  oomPhase?: OomPhase;
  evalLoop?: 'hf' | 'lightning' | 'plain';
  /** HF Trainer was concatenating every batch's predictions on the GPU (nested_concat). */
  gathersPredictions?: boolean;
  /** The traceback runs through generation or a diffusion pipeline and no training step: inference. */
  generating?: boolean;
  /** The last step DeepSpeed's see_memory_usage announced ("Before initializing optimizer states"). */
  deepspeedPhase?: string;
  /** Percent shown on the last "Loading checkpoint shards" progress line (Hugging Face from_pretrained). */
  shardsLoadedPct?: number;
}
