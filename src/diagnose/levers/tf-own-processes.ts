// TensorFlow's processes of one user share a card (issue 23, another holder; TF/JAX preallocation). Each TF process
// reserves nearly all the free memory of its GPU as it starts, so a second program, model server or notebook started
// while the first lives finds the card taken though each fits alone. The holder is then the user's own first process,
// and the lever is each process's reservation (allow_growth / set_memory_growth, or per_process_gpu_memory_fraction),
// not stopping a stranger's job: the user means both to run. The evidence, read from the paste:
//   - TF's own discovery figures: one found the card nearly free, a later one (a second process) most of it held
//     (levers/tf-start-free.ts: tfLaterHeld); or
//   - one discovery with most held (tfStartHeld) and the report telling that the programs run together: "run both",
//     "two programs at the same time", "two instances", "multi model", "the second model", "同时运行两个"; or
//   - no discovery figures, TF's own OOM message, and the report telling separate processes that run together ("two
//     or more instances of the script", "run both programs"): a second model in one process shares its allocator, so
//     models alone are no evidence there.
// Not when the report tells the first should be gone ("one by one", "second time", "still alive", a zombie): the holder
// is then a leftover, and freeing it is the lever (holder.ts). Fixed vocabulary, bounded per line (linear).
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';

const MAX_LINES = 600;
const MAX_LINE = 600;

const UNITS = '(?:programs?|models?|process(?:es)?|scripts?|instances?|sessions?|jobs?|predictions?|networks?|servers?|notebooks?|kernels?|copies)';
// The programs are meant to run together.
const TOGETHER = [
  new RegExp(
    `\\b(?:both|two|2|three|several|multiple|many)\\s{1,3}(?:[\\w-]{1,15}\\s{1,3})?${UNITS}\\b[^\\n]{0,60}?\\b(?:at the same time|simultaneous(?:ly)?|concurrent(?:ly)?|in parallel|together|on (?:the )?same (?:GPU|card))\\b`,
    'i',
  ),
  new RegExp(`\\b(?:simultaneous|concurrent|parallel)\\s{1,3}(?:[\\w-]{1,15}\\s{1,3})?${UNITS}\\b`, 'i'),
  new RegExp(
    `\\b(?:run|running|ran|start|starting|launch(?:ing)?|load|loading|serve|serving)\\s{1,3}(?:both|them both|(?:two|2|multiple|several)\\s{1,3}(?:or more\\s{1,3})?(?:[\\w-]{1,15}\\s{1,3})?${UNITS})\\b`,
    'i',
  ),
  /\bmulti(?:ple)?[ -]?models?\b/i,
  new RegExp(`\\b(?:the|a)\\s{1,3}second\\s{1,3}(?:${UNITS})\\b`, 'i'),
  /(?:同时|并行|一起)[^\n]{0,10}?(?:两个|多个|2个|几个)|(?:两个|多个|2个|几个)[^\n]{0,8}?(?:程序|模型|进程|任务|实例)[^\n]{0,10}?(?:同时|并行|一起)|第二个(?:程序|模型|进程|实例)/,
];
// The same, told of separate processes (not models, which may share one process and its allocator).
const PROCESS_UNITS = '(?:programs?|process(?:es)?|scripts?|instances?|copies)';
const TOGETHER_PROCESSES = [
  new RegExp(
    `\\b(?:both|two|2|three|several|multiple|many)\\s{1,3}(?:or more\\s{1,3})?(?:[\\w-]{1,15}\\s{1,3})?${PROCESS_UNITS}\\b[^\\n]{0,60}?\\b(?:at the same time|simultaneous(?:ly)?|concurrent(?:ly)?|in parallel|together|on (?:the )?same (?:GPU|card))\\b`,
    'i',
  ),
  new RegExp(
    `\\b(?:run|running|ran|start|starting|launch(?:ing)?)\\s{1,3}(?:both|them both|(?:two|2|multiple|several)\\s{1,3}(?:or more\\s{1,3})?(?:[\\w-]{1,15}\\s{1,3})?${PROCESS_UNITS})\\b`,
    'i',
  ),
  /(?:同时|并行)[^\n]{0,10}?(?:两个|多个|2个|几个)[^\n]{0,6}?(?:程序|进程|实例|脚本)|(?:两个|多个|2个)(?:程序|进程|实例|脚本)[^\n]{0,10}?(?:同时|并行)/,
];
// TensorFlow's own OOM message (its allocator's, or the CUDA driver's as TF logs it).
const TF_OOM = /OOM when allocating tensor|ResourceExhaustedError|failed to allocate [^\n]{1,60} from device: CUDA_ERROR_OUT_OF_MEMORY/;

// The first should have ended: a leftover, not a process meant to share.
const SEQUENTIAL =
  /\bone (?:by|after) (?:one|another|the other)\b|\bsecond time\b|\bstill (?:alive|running|there)\b|\b(?:did not|didn't|does not|doesn't|never) (?:exit|end|stop|terminate|die)\b|\bzombie\b|\borphan(?:ed)?\b|\bleft ?over\b|(?:之前|上一次|上次)的?(?:程序|进程|任务)[^\n]{0,10}?(?:没有|未|没)(?:退出|结束|关闭)/i;

/** What the report tells of TF processes running together (together) or of a first that should be gone (sequential). */
export function readTfTogether(text: string): { together?: true; processes?: true; sequential?: true; tfOom?: true } {
  const out: { together?: true; processes?: true; sequential?: true; tfOom?: true } = {};
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (!out.together && TOGETHER.some((re) => re.test(line))) out.together = true;
    if (!out.processes && TOGETHER_PROCESSES.some((re) => re.test(line))) out.processes = true;
    if (!out.sequential && SEQUENTIAL.test(line)) out.sequential = true;
    if (!out.tfOom && TF_OOM.test(line)) out.tfOom = true;
  }
  return out;
}

/** The card was held by this user's own earlier TF process, started to run beside this one (the evidence above). */
export function tfOwnProcessesShare(i: Incident): boolean {
  if (i.stack.tfSequential) return false;
  if (i.stack.tfStartGpu === undefined) return i.stack.tfOom === true && i.stack.tfTogetherProcesses === true;
  return i.stack.tfLaterHeld !== undefined || (i.stack.tfStartHeld !== undefined && i.stack.tfTogether === true);
}

export const TF_OWN_PROCESS_CONDITIONS = {
  tf_own_processes_share: ({ incident: i }: { incident: Incident }) => tfOwnProcessesShare(i),
};
