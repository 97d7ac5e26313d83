// A memory failure told in the reporter's own words, in any sentence of the paste (issue 23, recognition). Real
// reports put the account in a body sentence, not only in the title: "GPU memory usage keeps increasing until it
// crashes", "the process gets killed when loading the dataset", "显存一直增长", "加载模型的时候内存不够被kill了".
//
// A small grammar, read clause by clause: a SUBJECT (GPU memory / VRAM / 显存; host RAM / system memory / 内存; or
// memory unnamed) with a PREDICATE of failure (runs out, is full, exceeds, not enough, explodes, OOM, 不足, 溢出, 爆,
// 占满), of growth (keeps increasing, higher and higher, leaks, 一直增长) or of a kill (was killed, 被kill). A clause
// that negates or avoids the failure ("to avoid OOM", "no OOM", "does not run out", "不会oom", "如何避免"), guesses a
// cause in a question ("is it because the GPU memory is not enough?", "是因为显存不够吗"), asks about capacity ("how
// much memory do I need", "is 24 GB enough?") or says the memory comes back ("then drops back to normal") tells no
// failure. Log lines (frames, progress bars, logger lines, exceptions) and code are not read: they are the error's
// own evidence, which the message rules read. Weight: the prose is weaker evidence than any message. diagnose.ts adds a diagnosis from it only where no rule
// recognised a memory failure itself and the paste ends in no exception of another kind (the error's type wins);
// its rules (oom-reported-in-words, host-oom-reported-in-words, *-growth-reported) sit below the message rules.
//
// Linear: lines and clauses are bounded, every pattern's repeats are bounded, nothing is nested unbounded.
import type { LogText } from './normalize.js';
import { isExceptionLine } from './final-error.js';
import { evalAboveTraining } from './told-eval-compare.js';
import type { Phase, PhaseVerdict } from './phase.js';
import { CLAUSE_BREAK, MAX_CLAUSES, toldPhaseWords } from './told-phase.js';
import {
  CARD_BLOWS_ZH,
  CHANGE_TITLE,
  DESPITE,
  FAILS_ZH,
  FIXED_SINCE,
  FORECAST,
  FORECAST_QUESTION,
  FORECAST_QUESTION_LINE,
  FULL_AT_LIMIT,
  GENERIC_CAUSE,
  GPU_MEMORY_ZH,
  HANDLED,
  HOST_MEMORY_ZH,
  NEGATED_AT,
  OOM_EVENT,
  OUT_OF_MEMORY,
  TOOL_ANY_FAILURE,
  TOOL_GPU_FAILURE,
  AFTER_RUNNING,
  NEVER_SETTLES,
  WITH_RUN_COUNT,
  OVER_REQUESTS,
  attemptFailedOnCard,
  climbFromTo,
  twoReadingsClimb,
  KILL_STATUS,
  ONLY_RISES,
  SURGE,
} from './told-vocabulary.js';
import { DEVICE_WORDS, zhMemoryOfCard } from './memory-named.js';
import {
  AVOIDED,
  CAPACITY_QUESTION,
  GUESSED_CAUSE,
  HEDGED,
  LIST_EVENT,
  LIST_ITEM,
  NEGATED,
  NEGATION_WINDOW,
  NOT_KNOWING,
  PAST,
  REQUEST,
} from './told-hedges.js';

/** What the report tells: the card or the host ran out, its memory climbs, or the host killed the run. */
export type ToldKind = 'gpu_oom' | 'host_oom' | 'gpu_growth' | 'host_growth';

export interface ToldFailure {
  kind: ToldKind;
  /** The line (0-based, in the normalised text) whose clause tells it. */
  line: number;
  /** That clause, trimmed and bounded: the reply may quote it. */
  clause: string;
  /** Where the same account places the failure: evaluation or inference, generation, the model's load, the data's. */
  phase?: Phase;
  /** A climb told against the run's own measure ("with each iteration", "in 1000 iterations", "随着训练的进行"). */
  overRun?: true;
  /** A host failure told as a kill ("was killed", "被kill"): the kernel's act, not loose words about memory. */
  kill?: true;
}

export interface ToldReading {
  /** The failure the report tells, where one clause tells it affirmatively. */
  told?: ToldFailure;
  /** Lines whose every mention of a memory failure avoids it, or tells a climb that comes back: no evidence of one. */
  denied: Set<number>;
  /** Prose lines that speak of a memory failure at all (told, hedged or denied): sentences, not a message. */
  spoken: Set<number>;
}

const MAX_LINES = 600;
const MAX_LINE = 1200;
const QUOTE_CHARS = 160;

// Not prose: a frame, a traceback, a progress bar, a timestamped or levelled logger line, a shell prompt, code, a
// machine's line of key=value fields ("THCudaCheck FAIL file=... line=58 error=2 : out of memory").
const LOG_LINE =
  /\b\w{1,24}=\S{1,200}\s{1,3}\w{1,24}=\S|\d{1,3}%\||\bit\/s\b|\bs\/it\b|^\s{0,8}\[?\d{2,4}[-/]\d{2}|^\s{0,8}\d{1,2}:\d{2}|\b(?:INFO|WARNING|DEBUG|ERROR|WARN)\b|^\s{0,12}File "|^\s{0,8}Traceback|^\s{0,8}(?:\$|>>>|#|--|import |from \S{1,80} import |def |class )|^\s{0,8}[\w.[\]'"]{1,60}\s{0,2}=\s{0,2}\S|[;{}]\s*$|^\s{0,8}\|/;

// A framework's own OOM message with its figures is the framework speaking, whatever a script's logger prints before it
// (Real-ESRGAN's caught "Error CUDA out of memory. Tried to allocate 1.12 GiB (GPU 0; 4.00 GiB total capacity; ...)",
// "[ERROR] CUDA out of memory. Tried to allocate", ComfyUI's "Allocation on device 0 would exceed allowed memory"):
// never a sentence, so a later exception of another kind does not take it back (told-hits.ts).
const FRAMEWORK_MESSAGE =
  /CUDA out of memory\.\s{0,2}Tried to allocate [\d.]{1,10} ?[KMGT]i?B|Tried to allocate [\d.]{1,10} ?[KMGT]i?B \(GPU \d{1,3}; [\d.]{1,10} ?[KMGT]i?B total capacity|Allocation on device \d{1,3} would exceed allowed memory/;

// SUBJECTS. GPU memory first ("GPU RAM" is the card's), then the host's (RSS, a process's resident set, is the host's), then memory unnamed.
const GPU_SUBJECT =
  /\b(?:GPU|CUDA|VRAM|video|graphics(?:\s{1,2}card)?|device|cards?)(?:['\u2018\u2019]s)?\s{0,2}(?:memory|memery|mem|RAM|usage|utili[sz]ation)\b|\bVRAM\b|显存|显卡\s{0,2}(?:内存|占用)|GPU\s{0,2}(?:占用)?\s{0,2}内存|\b(?:GPU|CUDA)\s{0,2}(?:OOM|out[ -]of[ -]memory)\b|\b(?:usage|consumption)\s{1,3}of\s{1,3}(?:the\s{1,3})?(?:GPU|gpu)\s{1,3}memory\b/i;
const HOST_SUBJECT =
  /\b(?:RAM|RSS|CPU\s{0,2}(?:memory|RAM|OOM)|host\s{0,2}(?:memory|RAM)|system\s{0,2}(?:memory|RAM)|main\s{0,2}memory|physical\s{0,2}memory|swap)\b|(?:^|[^显卡U占\s])\s{0,2}内存/i;
// Memory unnamed: the word itself. A bare "OOM" is no subject: the message rules read it told as an event ("I get OOM").
const ANY_MEMORY = /(?<!\bout[ -]of[ -])\bmemory\b|\bmem\b|\bmemery\b|内存/i;
// The error's own words told as what the run printed, with no memory named: "提示out of memory", "报错 CUDA out of memory",
// "出现了OOM", "it throws out of memory", "I got an OOM": the message quoted as an event (a bare "OOM" elsewhere is no
// subject). Negated, hedged or avoided as any clause is ("if I get OOM", "to avoid out of memory").
const ERROR_TOLD =
  /(?:(?:提示|报错?|出现了?|显示|遇到了?|得到)[\u4e00-\u9fff]{0,2}|\b(?:get|gets|got|getting|throws?|threw|shows?|showed|says?|said|raises?|raised|hits?|encounter(?:s|ed|ing)?|receiv(?:e|es|ed|ing)))\s{0,3}(?:an?\s{1,3}|the\s{1,3})?[:：'"`]?\s{0,3}(?:CUDA\s{1,3}|GPU\s{1,3})?(?:out[ -]of[ -]memory|OOM)\b/i;
// Memory held for a data set is the host's: "the verification data set occupies all the remaining memory".
const DATA_MEMORY = /\b(?:data\s{0,2}set|dataset|data|images|samples)\b[^\n]{0,60}\bmemory\b|数据集?[^\n]{0,20}内存/i;

// The vocabulary's further forms (told-vocabulary.ts): misspelt "out of memory" with the card named, 显存's slip 现存,
// the card that "blew up", a CUDA tool's code for the failure; OOM or "out of memory" as the event itself, memory
// unnamed ("It still shows 'out of memory'", "[OOM issue]", "it OOMs at step 300"), or RESOURCE_EXHAUSTED in prose.
const GPU_SUBJECT_MORE = new RegExp(
  `\\b(?:GPU|CUDA)\\s{0,2}${OUT_OF_MEMORY}\\b|${GPU_MEMORY_ZH.source}|${CARD_BLOWS_ZH.source}|${TOOL_GPU_FAILURE.source}`,
  'i',
);
const EVENT_SUBJECT = new RegExp(`${OOM_EVENT}|\\b${OUT_OF_MEMORY}\\b|${TOOL_ANY_FAILURE.source}`, 'i');
const FAILS_MORE = new RegExp(`${OOM_EVENT}|\\b${OUT_OF_MEMORY}\\b|${FAILS_ZH.source}|${TOOL_GPU_FAILURE.source}|${TOOL_ANY_FAILURE.source}`, 'i');

// PREDICATES.
// Failure: the memory ran out, filled, was exceeded, was not enough, blew up.
const FAILS =
  /\bout[ -]of[ -]memory\b|\b(?:CUDA\s{0,2}|GPU\s{0,2})?memory\s{1,3}(?:errors?|problems?)\b|\bproblems?\s{1,3}with\s{1,3}(?:the\s{1,3})?(?:CUDA|GPU)\s{1,3}memory\b|\bOOM(?:s|ed|ing)?\b|\b(?:runs?|running|ran)\s{1,3}out\b|\bexceed(?:s|ed|ing)?\s{1,3}(?:the\s{1,3})?(?:available\s{1,3}|total\s{1,3}|GPU\s{1,3}|device\s{1,3}|card['\u2019]?s?\s{1,3})?(?:memory|capacity|limit|VRAM)\b|\bnot\s{1,3}enough\b|\binsufficient\b|\b(?:do|does|did)(?:\s{1,3}not|n['\u2019]t)\s{1,3}have\s{1,3}enough\b|\bexplod(?:e|es|ed|ing)\b|\bblows?\s{1,3}up\b|\bblew\s{1,3}up\b|\boverflow(?:s|ed|ing)?\b|\bexhausted\b|不足|不够|溢出|爆|耗尽|超限|撑不住|扛不住|装不下|放不下|(?:超出|超过)\s{0,2}(?:了\s{0,2})?(?:显存|内存|限制|上限|容量|最大)/i;
// A full card or RAM is usage, not a failure (PyTorch's allocator keeps what it used; "显存满了, GPU 利用率低" is a
// speed question): it tells the failure only with what followed ("it will stop at the time of full gpu memory").
const FULL =
  /\b(?:is|was|gets?|got|becomes?|became|being)\s{1,3}(?:completely\s{1,3}|almost\s{1,3})?full\b|\bfull\s{1,3}(?:GPU\s{1,3})?memory\b|\bfill(?:s|ed|ing)?\s{1,3}up\b|\bmax(?:e[sd]|ing)\s{1,3}out\b|\b(?:completely|fully)\s{1,3}(?:\([^)\n]{1,12}\)\s{1,3})?(?:used|occupied|consumed)\b|\b(?:uses?|using|used|takes?|took|eats?|ate|consumes?|consumed)\s{1,3}(?:up\s{1,3})?(?:all|the\s{1,3}(?:whole|entire))\b|占满|满了|用满|吃满/i;
const CONSEQUENCE =
  /\b(?:stop(?:s|ped|ping)?|crash\w{0,3}|fail\w{0,3}|errors?|die[sd]?|freez\w{0,3}|froze|hang(?:s|ing)?|killed|abort\w{0,3})\b|报错|崩|停止|停了|挂了|卡死|失败|被kill|被杀/i;
// Growth: the memory climbs over the run.
const GROWS =
  /\b(?:keeps?|kept|keeping)\s{1,3}(?:on\s{1,3})?(?:using|taking|consuming|eating|allocating|occupying)\s{1,3}more\b|\b(?:keeps?|kept|keeping|continu\w{0,6}|gradual(?:ly)?|slowly|steadily|constantly|linearly|always)\s{1,3}(?:to\s{1,3}|be\s{1,3}|on\s{1,3})?(?:increas|grow|ris|climb|go(?:es|ing)?\s{1,3}up)\w{0,4}|\b(?:gradual|steady|slow|continuous|constant|linear)\s{1,3}(?:increase|growth|rise|climb|creep)\b|\b(?:higher|bigger|larger|more)\s{1,3}and\s{1,3}(?:higher|bigger|larger|more)\b|\bmemory\s{1,3}leak\w{0,3}\b|\bleak(?:s|ing|ed)?\s{1,3}(?:GPU\s{1,3}|host\s{1,3})?memory\b|\b(?:upward|rising|increasing|growing)\s{1,3}trend\b|\b(?:has|have)\s{1,3}been\s{1,3}(?:steadily\s{1,3}|constantly\s{1,3})?(?:increasing|growing|rising|climbing)\b|(?:一直|持续|不断|逐渐|越来越|慢慢|不停)\s{0,2}(?:在\s{0,2})?(?:增加|增长|增大|递增|上涨|上升|涨|变大|变多|大|多|升高|飙升)|(?:泄漏|泄露)/i;
// Growth told with the run as its measure: "increases as epochs increase", "grows over time", "随着训练的进行...增长".
const GROWS_WITH_RUN =
  /\b(?:over\s{1,3}time|as\s{1,3}(?:the\s{1,3})?(?:epochs?|iterations?|steps?|training|time)\s{1,3}(?:goes\s{1,3}on|went\s{1,3}on|increas(?:es|ed|e)|grows?|grew|advance[sd]?|continue[sd]?|progress\w{0,3}|pass(?:es|ed))|(?:(?:after|with|in|at|on|for)\s{1,3})?(?:every|each)\s{1,3}(?:iteration|iter|step|epoch|batch)|epoch\s{1,3}after\s{1,3}epoch|during\s{1,3}(?:the\s{1,3})?training|while\s{1,3}training|per\s{1,3}(?:iteration|iter|step|epoch|batch))\b|随着[^，。\n]{0,24}(?:增加|增多|进行|推移)|(?:每个?|每一)\s{0,2}(?:iter|iteration|step|epoch|batch|轮|次)/i;
// A count of the run beside the climb: "in the diffusion 1000 iterations", "over 20 epochs", "within 500 steps".
const RUN_COUNT =
  /\b(?:in|over|within|during|for|after)\s{1,3}(?:the\s{1,3})?(?:\w{1,20}\s{1,3})?\d{1,7}[kK]?\s{1,3}(?:iterations?|iters?|steps?|epochs?|batches)\b|\d{1,7}\s{0,2}个?\s{0,2}(?:epoch|step|iter|轮|次迭代)/i;
// The run as the measure of a Chinese clause of its own: "随着训练的进行", "随着问问题的增多", "随着epoch的增加".
const RUN_MEASURE = /随着[^，。\n]{0,24}(?:增加|增多|进行|推移|变长|变多)/;
const INCREASES =
  /\b(?:uses?|using|takes?|taking|consumes?|consuming|occup(?:y|ies|ying))\s{1,3}more\b|\b(?:increas\w{0,4}|grow\w{0,4}|grew|ris(?:es|ing)|rose|climb\w{0,4}|goes\s{1,3}up|going\s{1,3}up|go(?:es|ing)?\s{1,3}higher|get(?:s|ting)?\s{1,3}higher|escalat\w{0,4}|bump(?:s|ed)?\s{1,3}up)\b|增加|增长|增大|上涨|上升|变大|涨/i;
// A kill by someone else (the kernel, the OS): passive ("it's killed" too) or by the system; "I killed it" is the user's own act.
// The shell's word quoted in brackets is the same report ("总是退出（killed）", "the run exits (Killed)", "[Killed]").
const KILLED =
  /[（([]\s{0,2}killed\s{0,2}[)）\]]|(?:\b(?:was|were|is|are|be|been|being|gets?|got|getting)|\b(?:it|process|job|program)['\u2019]s)\s{1,3}(?:\w{2,12}\s{1,3})?killed\b|\bkilled\s{1,3}by\s{1,3}(?:the\s{1,3})?(?:os|kernel|system|oom)|["\u201C]kill["\u201D]\s{1,3}problem|\b(?:memory|RAM)\b[^\n]{0,40}?\band\s{1,3}kills?\s{1,3}(?:the\s{1,3})?(?:job|process|run|training)\b|\b(?:OOM|out[ -]of[ -]memory)[ -]?killer\b|(?:显示|出现|提示|报)了?\s{0,2}["“]?Killed\b|被\s{0,2}(?:kill|killed|杀|杀死|杀掉|系统杀)/i;
// Docker's and Kubernetes' record of the kill: "OOMKilled": false says the memory limit did not kill the container.
const OOM_KILLED_FALSE = /["']?OOMKilled["']?\s{0,3}[:=]\s{0,3}false\b/i;
const KILLED_BY_USER = /\bkilled\s{1,3}(?:by\s{1,3}(?:me|the\s{1,3}user|hand|ctrl|keyboard)|manually)\b|\bctrl[+-]c\b/i;

// Memory that comes back is caching, not a leak: "then drops back to normal", "goes back to a low level", "回落", a
// sawtooth ("直到1个epoch结束 如此循环往复"), a climb that levels off. Read over the whole paste, as the growth rules do.
const COMES_BACK =
  /\b(?:drops?|dropped|goes|went|falls?|fell|comes|came|returns?|returned)\s{1,3}(?:back|down)\b|\bback\s{1,3}to\s{1,3}(?:normal|a\s{1,3}low)|回落|降下来|恢复正常|释放掉|then\s{1,3}(?:stays?|remains?)\s{1,3}(?:flat|constant|stable)|\b(?:stabili[sz]e[sd]?|plateaus?)\b|稳定下来|趋于稳定|循环往复|周而复始|锯齿|\bsawtooth\b|\bperiodic(?:ally)?\b/i;

type Memory = 'gpu' | 'host' | 'unnamed';

// A rise verb with an object is the user's act on a setting ("keep increasing the batch size until memory is near 100%"):
// no climb of the memory.
const RISE_OBJECT = /^\s{1,3}(?:the\s{1,3}|my\s{1,3}|our\s{1,3})?(?:batch|size|number|resolution|image|input|sequence|learning|lr\b|model|workers?)/i;
const intransitive = (m: RegExpExecArray | null, clause: string) =>
  m && RISE_OBJECT.test(clause.slice(m.index + m[0].length, m.index + m[0].length + 40)) ? null : m;

// A bare "OOM" / "out of memory" tells no failure without a subject (the message rules read it as an event), but one
// the clause avoids takes a match on it back: "maybe it's necessary to avoid potential OOM error" is no OOM.
const BARE_FAILURE = /\bOOMs?\b|\bout[ -]of[ -]memory\b|\bOutOfMemory/i;
function avoidsBareFailure(clause: string, line: string): boolean {
  const m = BARE_FAILURE.exec(clause);
  if (!m || !AVOIDED.test(clause.slice(Math.max(0, m.index - NEGATION_WINDOW), m.index))) return false;
  // A line that names the failure again elsewhere ("... preventing OOM errors. However, we are seeing OOM errors occur")
  // may tell it there: only a lone mention is taken back.
  return line.match(BARE_FAILURE_ALL)?.length === 1;
}
const BARE_FAILURE_ALL = new RegExp(BARE_FAILURE.source, 'gi');

/**
 * The failure a clause tells; 'denied' where it names one and takes it back (negated, avoided, a capacity question, a
 * guessed cause, a past failure); 'hedged' where it only supposes one; undefined where it names none.
 */
function readClause(
  clause: string,
  line: string,
  pasteMemory: Memory,
  overTheRun = false,
  title = false,
): ToldKind | 'host_kill' | 'denied' | 'hedged' | undefined {
  // 内存 said of a card the line names by its number ("0号卡 ... 内存就溢出了") is the card's (memory-named.ts).
  const subject: Memory | undefined =
    GPU_SUBJECT.test(clause) || GPU_SUBJECT_MORE.test(clause) || (clause.includes('内存') && zhMemoryOfCard(line))
      ? 'gpu'
      : HOST_SUBJECT.test(clause) || HOST_MEMORY_ZH.test(clause)
        ? 'host'
        : ANY_MEMORY.test(clause) || EVENT_SUBJECT.test(clause)
          ? 'unnamed'
          : undefined;
  const killed = KILLED.exec(clause) ?? KILL_STATUS.exec(clause);
  // A surge of the memory named with a crash on the line ("GPU memory skyrockets ... before it crashed") is its failure.
  const fails = subject
    ? (FAILS.exec(clause) ??
      FAILS_MORE.exec(clause) ??
      (CONSEQUENCE.test(line) ? (FULL.exec(clause) ?? FULL_AT_LIMIT.exec(clause) ?? SURGE.exec(clause)) : null))
    : (ERROR_TOLD.exec(clause) ?? attemptFailedOnCard(clause));
  // A failure told right after the run's own measure ("随着问问题的增多，会出现显存溢出") is a climb over the run.
  // Also a climb told with its figures ("from 3GB to 9GB"), against the run's count, or a fill after running a while.
  const grows = subject
    ? (intransitive(GROWS.exec(clause), clause) ??
      ONLY_RISES.exec(clause) ??
      climbFromTo(clause) ??
      (GROWS_WITH_RUN.test(clause) || WITH_RUN_COUNT.test(clause) ? INCREASES.exec(clause) : overTheRun ? FAILS.exec(clause) : null) ??
      (AFTER_RUNNING.test(line) ? FULL.exec(clause) : null))
    : null;
  // A climb told with the kill it ends in ("keeps increasing ... until it is killed"): the climb is the failure and the
  // kill its consequence, which makes the memory the host's (the kernel kills for host RAM).
  const climbToKill = killed !== null && grows !== null && grows.index < killed.index && !KILLED_BY_USER.test(clause);
  const predicate = climbToKill ? grows : (killed ?? grows ?? fails);
  if (!predicate) return avoidsBareFailure(clause, line) ? 'denied' : undefined;
  const before = clause.slice(0, predicate.index).replace(NOT_KNOWING, ' ').slice(-NEGATION_WINDOW);
  // Taken back outright: avoided ("to avoid CUDA out of memory"). Negated, supposed, asked or past: tells nothing and
  // takes nothing back (a paste that says "no OOM here" or asks "is 24 GB enough?" may still show the failure elsewhere:
  // on the untuned splits a negation that took a rule's match back lost more right diagnoses than wrong ones).
  // Avoided, handled or forecast ("better handle CUDA OOM", "may just make it go OOM", "可能爆显存"), or the title of a
  // change to the software ("Find CUDA OOM batches before training"): no run failed.
  if (
    AVOIDED.test(before) ||
    HANDLED.test(before) ||
    FORECAST.test(before) ||
    (!DESPITE.test(before) && (FORECAST_QUESTION.test(clause) || FORECAST_QUESTION_LINE.test(line))) ||
    (title && CHANGE_TITLE.test(line) && !DESPITE.test(before))
  )
    return 'denied';
  // Denied at the word ("no OOM", "没有爆显存"), or a past failure the line says is fixed: no failure of this run.
  if (NEGATED_AT.test(before) || (PAST.test(clause) && FIXED_SINCE.test(line))) return 'denied';
  if (
    NEGATED.test(before) ||
    HEDGED.test(before) ||
    (LIST_ITEM.test(line) && !LIST_EVENT.test(line)) ||
    REQUEST.test(line) ||
    (!DESPITE.test(before) && (CAPACITY_QUESTION.test(clause) || GUESSED_CAUSE.test(clause))) ||
    GENERIC_CAUSE.test(clause) ||
    PAST.test(clause)
  )
    return 'hedged';
  // A kill is the kernel's answer to the host's memory (a full card raises an error, it does not kill the process).
  const comesBack = COMES_BACK.test(clause) && !NEVER_SETTLES.test(clause);
  if (climbToKill) return comesBack ? 'denied' : 'host_growth';
  if (killed) return KILLED_BY_USER.test(clause) ? 'denied' : 'host_kill';
  const memory = subject === 'unnamed' || subject === undefined ? (DATA_MEMORY.test(clause) ? 'host' : pasteMemory) : subject;
  if (grows && predicate === grows) return comesBack ? 'denied' : memory === 'host' ? 'host_growth' : 'gpu_growth';
  return memory === 'host' ? 'host_oom' : 'gpu_oom';
}

// The card's memory named only to be denied ("memory leakage (not GPU memory, but RAM)") names the host's.
const NOT_GPU = /\bnot\s{1,3}(?:the\s{1,3})?(?:GPU|CUDA|VRAM|video)(?:\s{1,2}(?:memory|mem|RAM))?\b|不是显存/gi;
// The system killing the process ("killed by the OS", "the system will be out of memory, and kill process"): the
// kernel kills for host RAM, a full card raises an error, so memory the paste leaves unnamed beside it is the host's.
const SYSTEM_KILLS = /\b(?:system|OS|kernel|linux|signal)\b[^\n]{0,60}?\bkill(?:s|ed)?\b/i;

/**
 * Unnamed memory is the host's where the paste names only the host's memory, or names no memory of the card and tells
 * the process killed by the system; else the card's.
 */
function memoryOfPaste(log: LogText, lines: number): Memory {
  let host = false;
  let killed = false;
  for (let i = 0; i < lines; i++) {
    const whole = log.line(i).slice(0, MAX_LINE);
    const line = whole.replace(NOT_GPU, ' ');
    if (line !== whole) host = true;
    if (GPU_SUBJECT.test(line) || /\b(?:CUDA|GPU|VRAM)\b|显卡/i.test(line) || DEVICE_WORDS.test(line) || zhMemoryOfCard(line)) return 'gpu';
    if (HOST_SUBJECT.test(line)) host = true;
    if ((SYSTEM_KILLS.test(line) || KILLED.test(line)) && !KILLED_BY_USER.test(line)) killed = true;
  }
  return host || killed ? 'host' : 'unnamed';
}

// A yes/no question (an auxiliary first: "Is there a memory leak?", "Could it be a leak?", "是否内存泄漏？") or one that
// is only its noun ("Memory leak?"): it asks whether, and tells nothing. "Why does GPU memory keep increasing?" tells it.
const YES_NO_QUESTION =
  /^\s{0,4}(?:(?:is|are|was|were|could|can|may|might|does|do|did|would|will|should|has|have)\b|(?:GPU\s{1,3}|CUDA\s{1,3}|host\s{1,3})?memory\s{1,3}leak\w{0,3}\s{0,3}$)|是否|是不是|有没有/i;

const LEAK_ONLY = /\bleak|泄漏|泄露/i;
const CLIMB_VERB =
  /\b(?:increas|grow|grew|ris(?:es|ing)|rose|climb|go(?:es|ing)?\s{1,3}up|more\s{1,3}(?:and\s{1,3}more\s{1,3})?memory)|越来越|增加|增长|上涨|上升/i;

// Which told failure speaks for the paste: a climb explains the failure it ends in; a kill is what happened to the run.
const RANK: Record<ToldKind, number> = { host_growth: 4, gpu_growth: 3, host_oom: 2, gpu_oom: 1 };

/** The memory failure the paste tells in words, and the lines that mention one only to deny it. */
export function readToldFailure(log: LogText): ToldReading {
  const lines = Math.min(log.lineCount, MAX_LINES);
  const pasteMemory = memoryOfPaste(log, lines);
  const notOomKill = OOM_KILLED_FALSE.test(log.buf.toString('utf8', 0, 200_000));
  const denied = new Set<number>();
  const spoken = new Set<number>();
  const found: ToldFailure[] = [];
  let comesBack = false;
  for (let i = 0; i < lines; i++) {
    const line = log.line(i);
    if (line.length > MAX_LINE || !line.trim() || LOG_LINE.test(line) || isExceptionLine(line) || FRAMEWORK_MESSAGE.test(line)) continue;
    if (COMES_BACK.test(line) && !NEVER_SETTLES.test(line) && ANY_MEMORY.test(line + (GPU_SUBJECT.test(line) ? ' memory' : ''))) comesBack = true;
    // The card's memory told larger in evaluation than in training (told-eval-compare.ts): its failure, in evaluation.
    // The comparison is the line's account ("takes more memory during evaluation than during training" is no climb).
    const evalAbove = evalAboveTraining(line, i > 0 && !LOG_LINE.test(log.line(i - 1)) ? log.line(i - 1).slice(0, MAX_LINE) : '');
    if (evalAbove) {
      found.push({ kind: 'gpu_oom', line: i, clause: quote(evalAbove), phase: 'eval' });
      spoken.add(i);
      continue;
    }
    let affirmed = false;
    let negated = false;
    // A failure (not a climb) told or supposed on the line: a denial beside a climb still denies the failure.
    let failureTold = false;
    // A Chinese clause that only sets the run as the measure ("随着训练的进行") carries it to the next clause.
    let overTheRun = false;
    let at = 0;
    for (const clause of line.split(CLAUSE_BREAK).slice(0, MAX_CLAUSES)) {
      if (!clause?.trim()) continue;
      const end = line.indexOf(clause, at) + clause.length;
      at = Math.max(at, end);
      const asked = /^\s{0,3}[?？]/.test(line.slice(end, end + 4)) && YES_NO_QUESTION.test(clause) && LEAK_ONLY.test(clause) && !CLIMB_VERB.test(clause);
      const read0 = readClause(clause, line, pasteMemory, overTheRun, i === 0);
      // An exit status of SIGKILL where the container's own record says no OOM kill ("OOMKilled": false) is someone else's kill.
      const said = (read0 === 'host_oom' || read0 === 'host_kill') && notOomKill && !KILLED.test(clause) ? undefined : read0;
      // A leak only asked about ("Is there a memory leak somewhere?") is a guess: no account of a climb, and a rule's
      // match on it alone is taken back. A climb the question presupposes ("is it normal that memory keeps increasing?") is told.
      const kill = said === 'host_kill';
      const read = asked && (said === 'gpu_growth' || said === 'host_growth' || said === 'hedged') ? 'denied' : kill ? 'host_oom' : said;
      overTheRun = RUN_MEASURE.test(clause) && !ANY_MEMORY.test(clause) && !GPU_SUBJECT.test(clause);
      if (read) spoken.add(i);
      if (read === 'denied') negated = true;
      else if (read === 'hedged') affirmed = failureTold = true;
      else if (read) {
        affirmed = true;
        if (read === 'gpu_oom' || read === 'host_oom') failureTold = true;
        // The event alone ("inference OOM", "OOM during inference"), with no memory named, names the job the reporter
        // ran more often than the loop within it that failed: it places no phase.
        const eventOnly = read === 'gpu_oom' && !(GPU_SUBJECT.test(clause) || GPU_SUBJECT_MORE.test(clause) || ANY_MEMORY.test(clause));
        const phase = eventOnly ? undefined : toldPhaseWords(clause, line);
        const overRun =
          (read === 'gpu_growth' || read === 'host_growth') &&
          (GROWS_WITH_RUN.test(line) || RUN_COUNT.test(line) || WITH_RUN_COUNT.test(line) || AFTER_RUNNING.test(line) || OVER_REQUESTS.test(line));
        found.push({
          kind: read,
          line: i,
          clause: quote(clause),
          ...(phase ? { phase } : {}),
          ...(overRun ? { overRun: true as const } : {}),
          ...(kill ? { kill } : {}),
        });
      }
    }
    // Two readings of the run, the later larger (told-vocabulary.ts twoReadingsClimb), where no clause told the climb.
    if (!affirmed && !COMES_BACK.test(line) && twoReadingsClimb(line)) {
      const memory = GPU_SUBJECT.test(line) ? 'gpu' : HOST_SUBJECT.test(line) ? 'host' : ANY_MEMORY.test(line) ? pasteMemory : undefined;
      if (memory) found.push({ kind: memory === 'host' ? 'host_growth' : 'gpu_growth', line: i, clause: quote(line), overRun: true });
      if (memory) spoken.add(i);
    }
    // A climb told beside a failure only forecast ("只增不减，最终有可能会触发显存oom") denies the failure there: a rule's match
    // of it is no account (the climb stays told, and vouches for the growth rules: told-hits.ts).
    if (negated && (!affirmed || !failureTold)) denied.add(i);
  }
  // A climb that comes back or levels off is no growth to tell (the growth rules exclude it too).
  let told: ToldFailure | undefined;
  // Device words are specific, "RAM" / memory / 内存 in a report loose: a host shortage told with no kill yields to the
  // device's failure told beside it (memory-named.ts); a kill is the kernel's act on host RAM and keeps its rank.
  const deviceTold = found.some((f) => f.kind === 'gpu_oom');
  for (const f of found) {
    if (comesBack && (f.kind === 'gpu_growth' || f.kind === 'host_growth')) continue;
    if (deviceTold && f.kind === 'host_oom' && !f.kill) continue;
    // On a tie the account that also names its phase speaks (a title "Process Killed" above "killed when loading the data").
    if (!told || RANK[f.kind] > RANK[told.kind] || (RANK[f.kind] === RANK[told.kind] && !told.phase && f.phase)) told = f;
  }
  return { told, denied, spoken };
}

const quote = (clause: string) => {
  const c = clause.trim();
  return c.length > QUOTE_CHARS ? c.slice(0, QUOTE_CHARS) + '…' : c;
};

/** The phase a told GPU failure's own account names, as the levers read a phase (an evaluation's loop is the script's own). */
export function toldPhase(told: ToldFailure | undefined): PhaseVerdict | undefined {
  if (!told?.phase || (told.kind !== 'gpu_oom' && told.kind !== 'gpu_growth')) return undefined;
  return { phase: told.phase, frame: `"${told.clause}"`, ...(told.phase === 'eval' ? { evalLoop: 'plain' as const } : {}) };
}
