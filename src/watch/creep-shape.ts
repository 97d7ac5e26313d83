// What a growing GPU series looks like, for choosing its fix: the digest and a pasted log map the same
// shape to the same first fix (knowledge/growing-memory-leak: the fixes' `when` conditions).
//
// nvidia-smi shows what PyTorch's caching allocator has reserved; it only goes down when the job calls
// torch.cuda.empty_cache() (or frees a whole process). So:
//   - peaks that come back down while the floor still rises: the job already empties its cache, and
//     what accumulates is live tensors (a loss kept with its graph, outputs appended to a list);
//   - a floor that rises in a few large steps, with no dips: each validation (or evaluation) leaves its
//     cache behind;
//   - a floor that rises in many small steps: references kept across iterations.
import type { Growth } from './growth.js';
import { floorEnvelope } from './growth.js';
import type { Windows } from './series.js';
import type { CreepPattern, DetectorOptions } from './types.js';
import { incidentOf, newIncident, type Incident } from '../diagnose/incident/index.js';

export type { CreepPattern };

/** Windows whose peak stood this far above the level memory later fell back to: a release. */
const releaseMiB = (level: number) => Math.max(256, 0.02 * level);
/** A step this large is a phase leaving its cache behind, not a 2 / 20 MiB block of a creep. */
const phaseStepMiB = (level: number) => Math.max(256, 0.05 * level);
const MAX_PHASE_STEPS = 6;

export function creepPattern(
  w: Windows,
  processStartMs: number,
  g: Growth,
  levelMiB: number,
  o: Pick<DetectorOptions, 'warmupMinutes' | 'windowMinutes'>,
): CreepPattern {
  const f = floorEnvelope(w, processStartMs, o);
  if (f) {
    let releases = 0;
    for (let i = 0; i < f.E.length; i++) if (w.hi[f.from + i] - f.E[i] > releaseMiB(levelMiB)) releases++;
    if (releases >= 2) return 'despite_empty_cache';
  }
  if (g.steps > 0 && g.steps <= MAX_PHASE_STEPS && g.riseMiB / g.steps >= phaseStepMiB(levelMiB)) return 'validation_steps';
  return 'steady';
}

/** The facts the knowledge rule's fix conditions read, for a creep the leak watch found. */
export function creepFacts(pattern: CreepPattern | undefined): Incident {
  switch (pattern) {
    case 'despite_empty_cache':
      return incidentOf({ series: { memoryShape: 'sawtooth_rising', memoryGrowsAt: 'per_iteration', emptiesCache: true } });
    case 'validation_steps':
      return incidentOf({ series: { memoryShape: 'growth', memoryGrowsAt: 'between_epochs' } });
    case 'steady':
      return incidentOf({ series: { memoryShape: 'growth', memoryGrowsAt: 'per_iteration' } });
    default:
      return newIncident();
  }
}
