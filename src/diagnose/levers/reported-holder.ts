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
  // "I run two trainings on the same GPU", "two jobs share one card", "two mxnet programs run on the same GPU"
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
// Forms added in stop 40 (a leftover of an earlier run, programs sharing a card, cards already taken). They decide only
// where the paste holds no error message of the failure (the report's words are then all the evidence): beside a
// framework's message the engine's reading of that message stays first (issue 23's gate: these forms reached none of 15
// unseen threads on their first run, so they take no first fix that a message already gives).
const LEFTOVER = [
  // "two mxnet programs run on the same GPU": another word between the count and the unit
  /\b(?:two|2|three|several|multiple)\s{1,3}(?:[\w-]{1,12}\s{1,3})?(?:trainings?|jobs?|runs?|experiments?|processes|programs?|scripts?|instances?)\b[^\n]{0,40}?\b(?:on|share|sharing)\s{1,3}(?:the\s{1,3})?(?:same|one|a single)\s{1,3}(?:GPU|card)\b/i,
  // A process of an earlier run that outlived it, told holding memory: "the server process stays alive ... and keeps
  // ~30 GB of Metal memory", "the old worker is still running, holding 10 GB"
  /\b(?:process(?:es)?|server|kernels?|workers?|jobs?|instances?)\b[^\n]{0,40}?\b(?:stays?|remains?|is still|are still|still)\s{1,3}(?:alive|running|there|around)\b[^\n]{0,100}?\b(?:holding|holds?|keeps?|keeping|occupying|occupies|using|uses)\b[^\n]{0,20}?(?:\d{1,4}(?:\.\d{1,2})?\s{0,2}(?:GB|GiB|MB|MiB|G|M)\b|(?:GPU|VRAM|Metal|device|CUDA|video)\s{1,3}memory\b)/i,
  // An interrupt that left processes behind: "Ctrl+C does not kill all the spawned processes", "fails to stop the workers"
  /\b(?:does not|doesn't|did not|didn't|do not|don't|never|fails? to)\s{1,3}(?:kill|stop|terminate|clean up|exit)\s{1,3}(?:all\s{1,3})?(?:of\s{1,3})?(?:the\s{1,3}|its\s{1,3})?(?:spawned\s{1,3}|child\s{1,3}|worker\s{1,3}|sub-?)?(?:process(?:es)?|workers)\b/i,
  // Memory left on a card by a run that was interrupted or crashed: "the run was interrupted ... the memory cache still
  // lives in that GPU", "after it crashed, the memory is still occupied"
  /\b(?:interrupted|crashed|killed|stopped|terminated|cut off|disconnected|exited)\b[^\n]{0,200}?\bmemory\b[^\n]{0,40}?\bstill\s{1,3}(?:lives?|there|remains?|in use|used|occupied|held|allocated|resides?|sits?)\b/i,
  // Cards already taken by others on a shared machine: "3 of them are occupied", "one of the GPUs is at full capacity"
  /\b(?:\d|one|two|three|some|most)\s{1,3}of\s{1,3}(?:them|the\s{1,3}(?:GPU|card)(?:s|['\u2019]s)?)\s{1,3}(?:are|is)\s{1,3}(?:already\s{1,3})?(?:occupied|in use|busy|taken|full|at full capacity)\b/i,
  // ... in Chinese: "其中一张卡已经使用了挺多了", "0号卡因为之前已经使用了部分" (a card was already in use before the run)
  /(?:卡|GPU\s?\d)[^\n]{0,8}?(?:之前|已经|早已|本来)[^\n]{0,4}?(?:被)?(?:使用|占用)了/,
];
// A framework's error message of the failure, or an exception line: the paste is more than words.
const MESSAGE =
  /CUDA out of memory|OutOfMemoryError|OOM when allocating|CUDA_ERROR_OUT_OF_MEMORY|RESOURCE_EXHAUSTED|cudaErrorMemoryAllocation|CUDA(?: [Ee]rror)?: out of memory|cudaMalloc failed|out of memory at \/|^\s{0,8}(?:[\w.]{1,80}\.)?\w{1,60}(?:Error|Exception):\s/;

// The line denies another holder: "no other process", "not used by anyone else", "并没有其他进程".
const DENIED = /\bno (?:other|another)\b|\bnot\b[^\n]{0,25}\b(?:another|other|anyone)\b|\bnothing else\b|\bnobody else\b|没有(?:其他|其它|别的|别人)|并没有/i;

// A framework's own hint inside its error message is no report of a holder: PaddlePaddle's allocators (cuda_allocator.cc
// and its siblings) close every GPU OOM with "Please check whether there is any other process using GPU %d." and "1. If
// yes, please stop them, or start PaddlePaddle on another GPU.", whatever holds the card.
const FRAMEWORK_HINT = /Please check whether there is any other process using GPU \d|If yes, please stop them, or start PaddlePaddle on another GPU/i;

/** The report's sentence that names another holder of the GPU, trimmed (none: {}). */
export function readReportedHolder(text: string): Pick<ProcessesPart, 'reportedHolder'> {
  const lines = text.split('\n', MAX_LINES).map((raw) => (raw.length <= MAX_LINE ? raw : raw.slice(0, MAX_LINE)));
  const wordsOnly = !lines.some((line) => MESSAGE.test(line));
  const quote = (line: string) => {
    const q = line.trim();
    return { reportedHolder: q.length > QUOTE_CHARS ? q.slice(0, QUOTE_CHARS) + '…' : q };
  };
  for (const line of lines) if (!DENIED.test(line) && !FRAMEWORK_HINT.test(line) && REPORTED.some((re) => re.test(line))) return quote(line);
  if (wordsOnly) for (const line of lines) if (!DENIED.test(line) && LEFTOVER.some((re) => re.test(line))) return quote(line);
  return {};
}
