// Where the memory should live, as the rules name it: the load's lever by the run (load-lever.ts), splitting over the
// stated GPUs (split-cards.ts), the GPU the report asks for (other-gpu.ts). One object for conditions.ts to spread.
import { LOAD_LEVER_CONDITIONS } from './load-lever.js';
import { OTHER_GPU_CONDITIONS } from './other-gpu.js';

export const PLACEMENT_CONDITIONS = { ...LOAD_LEVER_CONDITIONS, ...OTHER_GPU_CONDITIONS };
