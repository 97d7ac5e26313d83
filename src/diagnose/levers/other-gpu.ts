// The report asks to run on another GPU than the one that ran out (issue 23, another holder or a card too small): "how do
// I make it use GPU1", "run on cuda:1 instead", "如何改代码使它使用GPU1". The machine has that card and the user wants the
// job there, so the first fix says how to select it (CUDA_VISIBLE_DEVICES before CUDA starts, or the device string
// for the model and every tensor), before a smaller batch on the card that failed. The words are the vocabulary of
// choosing a device; bounded patterns, applied per line.
import { boundedLines } from '../lines.js';
import type { Incident } from '../incident/index.js';
import { gpuSelectionMissed } from './gpu-selection.js';
export { readGpuSelection } from './gpu-selection.js';

const MAX_LINES = 400;
const MAX_LINE = 600;

// A request or wish to use GPU N (N >= 1): "use GPU 1", "run it on cuda:1", "switch to the second GPU", "使用GPU1".
const ASKED = [
  /\b(?:how\s{1,3}(?:can|do|to)\s{1,3}(?:I\s{1,3})?|want\s{1,3}to\s{1,3}|would\s{1,3}like\s{1,3}to\s{1,3}|(?:is\s{1,3}it\s{1,3}possible|possible)\s{1,3}to\s{1,3})(?:make\s{1,3}it\s{1,3}|let\s{1,3}it\s{1,3})?(?:use|run\s{1,3}on|train\s{1,3}on|switch\s{1,3}to|select|choose|move\s{1,3}(?:it\s{1,3})?to)\s{1,3}(?:the\s{1,3}|my\s{1,3})?(?:GPU\s?|cuda:|device\s?)([1-9])\b/i,
  /(?:如何|怎么|怎样|想|能否|能不能|可以)[^\n]{0,16}?(?:使用|用|换到|切换到|指定|放到|跑在|运行在)\s?(?:GPU|显卡|卡|cuda:)\s?([1-9])(?!\d)/i,
];

/** The GPU index the report asks to run on (none: undefined). */
export function readOtherGpuAsked(text: string): number | undefined {
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE))
    for (const re of ASKED) {
      const m = re.exec(line);
      if (m) return Number(m[1]);
    }
  return undefined;
}

/** The report asks for a GPU other than the one that ran out (GPU 0 when the message names none). */
export const otherGpuAsked = (f: Incident) => f.processes.otherGpuAsked !== undefined && f.processes.otherGpuAsked !== (f.figures.gpuIndex ?? 0);

export const OTHER_GPU_CONDITIONS = {
  other_gpu_asked: ({ incident }: { incident: Incident }) => otherGpuAsked(incident),
  // The job was given other cards than the one it met (gpu-selection.ts): the selection did not apply.
  gpu_selection_missed: ({ incident }: { incident: Incident }) => gpuSelectionMissed(incident),
};
