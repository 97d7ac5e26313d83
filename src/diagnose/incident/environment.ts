// Where the job runs and its allocator settings (environment.ts, alloc-conf.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.
import type { Environment } from '../environment.js';

export interface EnvironmentPart {
  /** Where the job runs (src/diagnose/environment.ts): notebook host, OS, accelerator, library versions. */
  // {environment} in rule templates and the JSON contract's facts.
  detected?: Environment;
  /** Why expandable_segments is not available there ("Windows", "PyTorch 1.13"), for the fix that replaces it. */
  expandableWhy?: string;
  /** Allocator settings (src/diagnose/alloc-conf.ts): the variable to advise, the torch version that decided it, one already set. */
  allocConfName?: string;
  torchVersion?: string;
  expandableAlreadySet?: string;
}
