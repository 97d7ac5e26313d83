// A device selection that did not apply (issue 23, another holder): the paste states which GPUs the job was given
// ("export CUDA_VISIBLE_DEVICES=1", "--gpus 1,2,3", "我使用1，2，3号卡") and also which card another job fills ("only GPU
// 0 is filled", "0号卡别人在用"), or, for a selection made inside the process, the OOM names a card outside it. A job
// on the cards it was given would not meet the other job's memory: the selection did not reach the process (a
// misspelled or unexported variable, a default cuda:0 in the validation or init code), so the first fix checks where
// the process runs and applies the selection; the model and the batch are not the lever.
// CUDA_VISIBLE_DEVICES renumbers the cards the process sees (GPU 1 is then "GPU 0" in the OOM), so for it only the
// stated busy card decides, never the index in the message. Vocabulary: the flags and words that pick a device, and
// the words that say a card is taken; bounded patterns, per line (untrusted input, linear).
import { boundedLines } from '../lines.js';
import type { Incident, ProcessesPart } from '../incident/index.js';

const MAX_LINES = 400;
const MAX_LINE = 600;
const LIST = String.raw`(\d{1,2}(?:\s?[,，、]\s?\d{1,2}){0,7})`;
// A flag's ids may also be space-separated (argparse nargs: "--gpu_ids 2 3").
const FLAG_LIST = String.raw`(\d{1,2}(?:(?:\s?[,，、]\s?|\s)\d{1,2}){0,7})`;
// Chinese counts cards by ordinal words (第三块 = the third = index 2) or by an index in digits (第0块).
const ZH_ORDINAL: Record<string, number> = { 一: 0, 二: 1, 两: 1, 三: 2, 四: 3, 五: 4, 六: 5, 七: 6, 八: 7 };
const ZH_CARD = String.raw`(?:块|张|个)\s?(?:GPU|显卡|卡)`;

// Set before the process starts: the variable in a shell, an env line or os.environ.
const ENV_SELECTION = new RegExp(String.raw`CUDA_VISIBLE_DEVICES['"\]]{0,2}\s{0,2}[=:]\s{0,2}['"]?${LIST}\b`);
// Chosen inside the process or in words: device flags, device_ids, a device string, set_device, "use GPU 1,2",
// "使用1，2，3号卡", "指定了GPU1，2，3", "设置了用第三块GPU" (调用, to call, is no choice).
const INDEX_SELECTION = [
  new RegExp(String.raw`--(?:gpus|gpu[_-]ids?|gpu|devices?)[=\s]{1,2}['"]?${FLAG_LIST}\b`),
  new RegExp(String.raw`\bdevice_ids\s?=\s?\[${LIST}\]`),
  new RegExp(String.raw`(?:\bdevice\s?[=:]\s?['"]?|--device[=\s]['"]?|\.to\(\s?['"]|\bset_device\(\s?['"]?)cuda:(\d{1,2})\b`),
  /\b(?:\.cuda|set_device)\(\s?(\d{1,2})\s?\)/,
  new RegExp(
    String.raw`\b(?:I\s{1,3}(?:use|used|am using|selected|chose|picked)|(?:run|running|train|training|launched?)\s{1,3}(?:it\s{1,3})?on)\s{1,3}(?:the\s{1,3})?GPUs?\s?(?:ids?\s?)?${LIST}\b`,
    'i',
  ),
  new RegExp(String.raw`(?:使用|(?<!调)用|指定了?|选了|设置了?)\s?(?:GPU|显卡|卡)\s?${LIST}`),
  new RegExp(String.raw`(?:使用|(?<!调)用|指定了?|选了|设置了?)\s?${LIST}\s?号(?:卡|GPU|显卡)`),
];
const ZH_ORDINAL_SELECTION = new RegExp(String.raw`(?:使用|(?<!调)用|指定了?|选了|设置了?)(?:用)?\s?第\s?([一二三四五六七八]|\d)\s?${ZH_CARD}`);
// A card named as taken by someone else or already full: "only GPU=0 is filled", "my GPU 0 memory is full", "cuda:0 has no
// space left", "0号卡别人在用", "GPU0被占用", "前两块GPU被其他同学占用". A denial ("nothing is on GPU 1") names no busy card.
const BUSY = [
  /\b(?:GPU|cuda:)\s?[=#]?\s?(\d{1,2})(?:'s)?\s{1,3}(?:memory\s{1,3})?(?:is|was)\s{1,3}(?:already\s{1,3}|fully\s{1,3}|completely\s{1,3})?(?:filled|full|busy|occupied|taken|in use|used by (?:another|other|someone))/i,
  /\b(?:GPU|cuda:)\s?(\d{1,2})\b[^\n]{0,20}?\bno (?:space|memory|room) left/i,
  /(?<!\d)(\d{1,2})\s?号(?:卡|GPU|显卡)[^\n\d]{0,6}?(?:别人|他人|其他人|其它人|别的(?:程序|进程|任务))[^\n]{0,4}?(?:在用|占用|占着|用着|在跑)/,
  /(?:GPU|显卡|卡)\s?(\d{1,2})[^\n\d]{0,6}?(?:被(?:别人|他人|其他|占用|占满)|别人在用|已经?满了|已被占用)/,
];
// The first cards of the machine, counted, taken by others: "前两块GPU被其他同学占用" (the first is index 0).
const ZH_FIRST_BUSY = new RegExp(String.raw`前\s?(?:[两二三四]|\d)\s?${ZH_CARD}[^\n]{0,8}?(?:被|别人|他人|其他|其它)[^\n]{0,10}?(?:占用|占着|占满|在用|用着)`);

const indices = (list: string) => [...new Set(list.split(/\s?[,，、]\s?|\s/).map(Number))];
const zhIndex = (w: string) => ZH_ORDINAL[w] ?? Number(w);

/** The GPUs the paste says the job was given, how, and the card it says another job fills (none: {}). */
export function readGpuSelection(text: string): Pick<ProcessesPart, 'gpuSelected' | 'gpuSelectedBy' | 'gpuBusyStated'> {
  const part: Pick<ProcessesPart, 'gpuSelected' | 'gpuSelectedBy' | 'gpuBusyStated'> = {};
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (part.gpuSelected === undefined) {
      const env = line.includes('CUDA_VISIBLE_DEVICES') ? ENV_SELECTION.exec(line) : null;
      const index = env ? null : INDEX_SELECTION.map((re) => re.exec(line)).find((m) => m !== null);
      const ordinal = env || index ? null : ZH_ORDINAL_SELECTION.exec(line);
      if (env ?? index) {
        part.gpuSelected = indices((env ?? index)![1]).join(',');
        part.gpuSelectedBy = env ? 'env' : 'index';
      } else if (ordinal) {
        part.gpuSelected = String(zhIndex(ordinal[1]));
        part.gpuSelectedBy = 'index';
      }
    }
    if (part.gpuBusyStated === undefined) {
      const m = BUSY.map((re) => re.exec(line)).find((x) => x !== null);
      if (m) part.gpuBusyStated = Number(m[1]);
      else if (ZH_FIRST_BUSY.test(line)) part.gpuBusyStated = 0;
    }
  }
  return part;
}

/** This process's own memory is most of the card (PyTorch's or the stack's figures): the job runs where it was put. */
function ownMemoryFillsCard(i: Incident): boolean {
  const f = i.figures;
  const own = Math.max(f.thisProcessMiB ?? 0, f.reservedMiB ?? 0, f.allocatedMiB ?? 0);
  return f.totalCapacityMiB !== undefined && own >= 0.5 * f.totalCapacityMiB;
}

/**
 * The job was given other cards than the one another job fills, or (selected inside the process) ran out on a card it
 * was not given: the selection did not apply. Needs a stated selection; not when the busy card is one of the selected,
 * when the report only asks for a card, or, under CUDA_VISIBLE_DEVICES, when the figures say this process itself fills
 * the card it ran out on (the figures outrank the words: the card a report calls "GPU 0" is then its own, renumbered).
 */
export function gpuSelectionMissed(i: Incident): boolean {
  const p = i.processes;
  // A card the report asks for is a wish, not a selection made (other-gpu.ts answers it).
  if (p.gpuSelected === undefined || p.otherGpuAsked !== undefined) return false;
  // CUDA_VISIBLE_DEVICES renumbers: this process filling the card it ran out on says that card is the one it was given.
  if (p.gpuSelectedBy === 'env' && ownMemoryFillsCard(i)) return false;
  const selected = p.gpuSelected.split(',').map(Number);
  if (p.gpuBusyStated !== undefined) return !selected.includes(p.gpuBusyStated);
  return p.gpuSelectedBy === 'index' && i.figures.gpuIndex !== undefined && !selected.includes(i.figures.gpuIndex);
}
