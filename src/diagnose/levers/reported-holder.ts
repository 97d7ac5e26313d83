// The report names another holder of the GPU in words (issue 23, another holder): "the GPU is being used by other
// processes", "another user is running a job on the same GPU", "my old jupyter kernel still holds 10GB", "两个训练跑在
// 同一张卡上", "显卡被别人占用了". When the error gives no memory figure at all, that sentence is the only evidence of
// who holds the card (holder.ts), so the first fix frees or moves off the card rather than the batch experiment; a
// figure in the error decides first, and the words never override it. A line that denies it ("no other process",
// "并没有其他进程") is no evidence. Patterns are bounded and run per line of at most MAX_LINE characters: linear.
import type { ProcessesPart } from '../incident/index.js';

const MAX_LINES = 5000;
const MAX_LINE = 400;
const QUOTE_CHARS = 140;

const HOLDER_WORDS =
  '(?:process(?:es)?|users?|jobs?|programs?|trainings?|runs?|instances?|containers?|kernels?|notebooks?|tasks?|experiments?|scripts?|models?)';
const REPORTED = [
  // "another user is running a job on the same GPU", "other processes are using the GPU", "a second training takes the card"
  new RegExp(
    `\\b(?:another|other|different|a second|someone else'?s?)\\s{1,3}(?:[\\w-]{1,12}\\s{1,3})?${HOLDER_WORDS}\\b[^\\n]{0,60}?\\b(?:is using|are using|uses|using|occup(?:y|ies|ying)|holds?|holding|takes?|taking|took|is running|are running|running|ran)\\b[^\\n]{0,40}?\\b(?:GPU|card|VRAM|memory|cuda:?\\d?)\\b`,
    'i',
  ),
  // "the GPU is being used by other processes", "GPU memory is occupied by another job"
  /\b(?:GPU|card|VRAM)\b[^\n]{0,30}?\b(?:is |are |was |were )?(?:being |already )?(?:used|occupied|taken|held|filled)\s{1,3}(?:up\s{1,3})?by\s{1,3}(?:another|other|someone|a different|a second|my (?:old|previous|other))\b/i,
  // "my old jupyter kernel still uses 10GB", "a zombie process is still holding the memory"
  /\b(?:old|previous|earlier|idle|stale|zombie|leftover|orphan(?:ed)?)\s{1,3}(?:jupyter\s{1,3}|notebook\s{1,3}|python\s{1,3}|training\s{1,3})?(?:kernels?|process(?:es)?|runs?|jobs?|sessions?)\b[^\n]{0,30}?\bstill\b[^\n]{0,20}?\b(?:using|holding|occupying|holds|uses|occupies|takes|taking)\b/i,
  // "I run two trainings on the same GPU", "two jobs share one card"
  /\b(?:two|2|three|several|multiple)\s{1,3}(?:trainings?|jobs?|runs?|experiments?|processes|scripts?|instances?)\b[^\n]{0,40}?\b(?:on|share|sharing)\s{1,3}(?:the\s{1,3})?(?:same|one|a single)\s{1,3}(?:GPU|card)\b/i,
  // "there is already a training in GPU 0", "already one job on the card": a holder that was on the card first
  new RegExp(
    `\\balready\\s{1,3}(?:an?\\s{1,3}|another\\s{1,3}|one\\s{1,3}|some\\s{1,3})?(?:[\\w-]{1,12}\\s{1,3})?${HOLDER_WORDS}\\b[^\\n]{0,30}?\\b(?:on|in)\\s{1,3}(?:the\\s{1,3})?(?:GPU|card|cuda:?)\\s?\\d{0,2}\\b`,
    'i',
  ),
  // "显卡被别人占用了", "显存被其他进程占用", "被别的任务占满"
  /被\s{0,2}(?:别人|他人|其他人|其它人|别的(?:进程|程序|任务|用户|人)|其[他它](?:进程|程序|任务|用户))[^\n]{0,6}?(?:占用|占了|占着|占满|在用|使用)/,
  // "其他进程占用了显存", "别人的任务占着显卡"
  /(?:别人|他人|其他人|别的(?:进程|程序|任务)|其[他它](?:进程|程序|任务))[^\n]{0,8}?(?:占用|占了|占着|占满)[^\n]{0,6}?(?:显存|显卡|GPU)/,
];
// The line denies another holder: "no other process", "not used by anyone else", "并没有其他进程".
const DENIED = /\bno (?:other|another)\b|\bnot\b[^\n]{0,25}\b(?:another|other|anyone)\b|\bnothing else\b|\bnobody else\b|没有(?:其他|其它|别的|别人)|并没有/i;

// A framework's own hint inside its error message is no report of a holder: PaddlePaddle's allocators (cuda_allocator.cc
// and its siblings) close every GPU OOM with "Please check whether there is any other process using GPU %d." and "1. If
// yes, please stop them, or start PaddlePaddle on another GPU.", whatever holds the card.
const FRAMEWORK_HINT = /Please check whether there is any other process using GPU \d|If yes, please stop them, or start PaddlePaddle on another GPU/i;

/** The report's sentence that names another holder of the GPU, trimmed (none: {}). */
export function readReportedHolder(text: string): Pick<ProcessesPart, 'reportedHolder'> {
  const lines = text.split('\n', MAX_LINES);
  for (const raw of lines) {
    const line = raw.length <= MAX_LINE ? raw : raw.slice(0, MAX_LINE);
    if (DENIED.test(line) || FRAMEWORK_HINT.test(line) || !REPORTED.some((re) => re.test(line))) continue;
    const q = line.trim();
    return { reportedHolder: q.length > QUOTE_CHARS ? q.slice(0, QUOTE_CHARS) + '…' : q };
  }
  return {};
}
