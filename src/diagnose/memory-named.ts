// Which memory a failure names: the device's or the host's (issue 23, class 5: wording decides the route).
//
// The principle: the memory named in the failure decides the route. Words that name the device's memory (CUDA, GPU,
// VRAM, 显存, Metal, MPS, HBM, NPU, a card by its number) make it a device OOM; host RAM needs host evidence (a kill,
// exit 137/-9, a host allocator). Device words are specific: reporters rarely say "VRAM" or "显存" of host RAM, but
// say "RAM", "memory" and 内存 loosely of any memory. So where a report tells both a device failure and a host
// shortage that is no kill, the device failure is the account; and Chinese 内存 said of a card ("0号卡 ... 内存就溢出了",
// "1号卡还有挺多内存") or beside MPS / Metal on Apple silicon's unified memory ("开启MPS显示内存不足") is the device's.
//
// And an error the report shows as what ANOTHER setting gives ("Otherwise, it says", "without device_map it raises",
// "否则会报") is not this run's failure: where another memory failure is shown outside it, that one is the run's.
//
// Linear: fixed vocabulary, bounded repeats, lines and blocks bounded.
import type { LogText } from './normalize.js';

/** Words that name the device's memory beyond CUDA / GPU / VRAM: Apple's Metal and MPS, HBM, NPU/XPU, 显卡, a card by its number. */
export const DEVICE_WORDS = /\b(?:METAL|Metal|MPS|HBM\d?e?|NPU|XPU)\b|显卡|显存/;

/** A card named by its number or count in Chinese: "0号卡", "第二张卡", "另一张卡", "两张显卡", "1张卡", "1号GPU". */
export const CARD_NAMED_ZH =
  /(?:\d\s{0,2}号|第\s{0,2}[\d一二两三四五六七八九]{1,2}\s{0,2}张|[\d这那另每单两一二三四五六七八]\s{0,2}张)\s{0,2}(?:显卡|卡|GPU|gpu)/;

/** Apple's GPU path named: on Apple silicon the GPU works in the unified memory, so 内存 beside MPS / Metal is the GPU's share. */
const APPLE_GPU = /\b(?:MPS|METAL|Metal)\b|ggml_metal/;

/** Words that put 内存 on the host even beside a card: the machine's RAM, its sticks, CPU, swap. */
const HOST_WORDS_ZH = /主机|系统内存|内存条|物理内存|虚拟内存|\bCPU\b|\bRAM\b|\bswap\b|交换/i;

/** 内存 on a line that names a card by its number or count, or Apple's GPU path, and no host memory: the device's memory. */
export function zhMemoryOfCard(line: string): boolean {
  return line.includes('内存') && (CARD_NAMED_ZH.test(line) || APPLE_GPU.test(line)) && !HOST_WORDS_ZH.test(line);
}

// A sentence that introduces what another setting gives: "Otherwise, it says", "Without it I get", "否则会报错".
const OTHER_SETTING =
  /\b(?:otherwise|else)\b[^\n]{0,60}?(?:\b(?:says?|said|gives?|gave|get|gets|got|raises?|raised|throws?|threw|shows?|showed|fails?|failed|errors?|crash\w{0,3}|reports?)\b|[:：])[^\n]{0,20}$|^[^\n]{0,40}\bwithout\b[^\n]{0,60}\b(?:I|it|we)\s{1,3}(?:get|got|gets|see|saw)\b[^\n]{0,20}$|(?:否则|不然)[^\n]{0,30}(?:报错?|提示|显示|出现)[^\n]{0,10}$/i;
const FENCE = /^\s{0,4}(?:```|~~~)/;
const MAX_BLOCK = 40;
const MAX_LINES = 600;

/** The lines of an error the report shows as another setting's outcome: the block right after such a sentence. */
export function otherSettingLines(log: LogText): Set<number> {
  const out = new Set<number>();
  const lines = Math.min(log.lineCount, MAX_LINES);
  let inFence = false;
  for (let i = 0; i < lines; i++) {
    const line = log.line(i).slice(0, 1000);
    if (FENCE.test(line)) {
      inFence = !inFence;
      continue;
    }
    if (inFence || !OTHER_SETTING.test(line)) continue;
    // The block that follows: a fenced one, or the next lines up to a blank one.
    let j = i + 1;
    while (j < lines && !log.line(j).trim()) j++;
    const fenced = j < lines && FENCE.test(log.line(j));
    if (fenced) j++;
    for (let k = 0; j < lines && k < MAX_BLOCK; j++, k++) {
      const next = log.line(j);
      if (fenced ? FENCE.test(next) : !next.trim()) break;
      out.add(j);
    }
    i = fenced ? j : j - 1;
  }
  return out;
}
