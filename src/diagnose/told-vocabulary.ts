// The vocabulary a report tells a memory failure with, and the words that take it back (issue 23, recognition), as
// data with the reason each form is here. told-failure.ts reads a clause with it; the forms are a language's and a
// tool's fixed words and their common slips, never one thread's wording. Every repeat is bounded (linear on any text).

/** Spellings of "memory" that reports type: a doubled or swapped letter (memeory, memroy, momery, memery, memoery). */
export const MEMORY_SPELLINGS = ['memory', 'memeory', 'memroy', 'momery', 'memery', 'memoery', 'memorry', 'memmory', 'meomry', 'memoy'];
const MEM = `(?:${MEMORY_SPELLINGS.join('|')})`;

/** "out of memory" and its run-together and hyphenated forms ("out-of-memory", "outofmemory", "out of memeory"). */
export const OUT_OF_MEMORY = `out[ -]?of[ -]?${MEM}`;

/**
 * OOM named as an event, a noun or a verb ("got OOM", "it OOMs at step 300", "got OOMed", "OOM了"), but not inside a
 * setting's or a file's name (`oom_threshold`, `--no-oom`, `oom.log`, `max_oom=3`): a name is no account of a failure.
 * Nor as the modifier of a tool's name ("OOM predictor", "an OOM estimator for configs"): the thing is named, no run failed.
 */
export const OOM_EVENT = `(?<![-\\w./=])OOM(?:s|ed|ing)?(?![-_=.]?[A-Za-z0-9])(?!\\s{1,3}(?:predict|estimat|calculat|check|detect|simulat|profil|analy[sz])\\w{0,6}\\b)`;

/**
 * A tool's own words for the failure, quoted in prose: the CUDA runtime's code 2 ("CUDA error 2",
 * cudaErrorMemoryAllocation, CUDA_ERROR_OUT_OF_MEMORY) is the card's; XLA's and gRPC's RESOURCE_EXHAUSTED in an ML
 * report is a device allocation that failed.
 */
export const TOOL_GPU_FAILURE =
  /\bCUDA\s{1,2}error\s{0,2}(?:code\s{0,2})?[:=(]?\s{0,2}2\b(?![.\d])|\bcudaErrorMemoryAllocation\b|\bCUDA_ERROR_OUT_OF_MEMORY\b/i;
export const TOOL_ANY_FAILURE = /\bRESOURCE[_ ]EXHAUSTED\b/;

/**
 * The card's memory in Chinese: 显存, and its IME slip 现存 (same pinyin, xiancun) where a card, a size or a failure
 * word beside it says it is the card's ("24G现存", "gpu现存不足", "现存溢出"): alone, 现存 means "existing".
 */
export const GPU_MEMORY_ZH = /显存|(?:GPU|gpu|显卡|卡|\d\s{0,2}[Gg][Bb]?)\s{0,2}现存|现存\s{0,2}(?:不足|不够|溢出|爆|炸|OOM|oom|超)/;

/** The card itself blowing up stands for its memory in Chinese slang ("GPU爆了", "显卡又暴了"; 暴 is 爆's slip). */
export const CARD_BLOWS_ZH = /(?:GPU|gpu|显卡)(?=\s{0,2}(?:又|都|就|直接|也|要)?\s{0,2}[爆暴](?:了|掉|满|炸))/;

/** Host memory in Chinese: 内存, and its slip 内从 where a failure word follows ("内从不足", "内从爆了"). */
export const HOST_MEMORY_ZH = /内从\s{0,2}(?:不足|不够|溢出|爆|炸|满)/;

/**
 * Chinese predicates of failure beyond 不足/溢出/爆: 炸 (blew up), 暴了 (爆's slip; 暴涨 is a surge, not a failure),
 * 超了 (went over: "显存都超了"), 不够用 (not enough to use).
 */
export const FAILS_ZH = /炸|暴(?:了|掉)|超了|不够用/;

/**
 * A forecast: a failure that may come, not one that came ("a few batches may just make it go OOM", "will it OOM?",
 * "感觉随时都可能爆显存", "会不会爆显存", "担心显存不够", "how do I know I won't run out of GPU memory hours into
 * training?"). Read at the end of the words before the predicate. A guess at
 * the cause ("might be OOM", "可能是显存不够") is no forecast: a report often guesses at the failure it has.
 */
export const FORECAST =
  /(?:\b(?:may|might|could)\s{1,3}(?:just\s{1,3}|easily\s{1,3}|eventually\s{1,3})?(?:make\s{1,3}it\s{1,3})?(?:go|run|hit|cause|trigger|lead\s{1,3}to|end\s{1,3}in)\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:CUDA\s{1,3}|GPU\s{1,3})?|\b(?:will|would)\s{1,3}(?:it|this|that|they)\s{1,3}(?:\w{1,10}\s{1,3}){0,2}|\b(?:expect\w{0,3}|afraid|worried|worry|fear\w{0,3})\b[^.?!\n]{0,30}|\bhow\s{1,3}(?:do|can|could|would|will)\s{1,3}(?:I|we|you|one)\s{1,3}(?:know|tell|be\s{1,3}sure|predict)\b[^.?!\n]{0,40}|(?:可能(?!是)|会不会|担心|害怕|恐怕|快要|即将|随时)[^，。？！\n]{0,4}?(?:会|要|就)?\s{0,2}(?:显存|内存|GPU|gpu|显卡)?\s{0,2})$/i;

/**
 * An OOM as the object of handling it ("better handle CUDA OOM", "detect OOM batches", "troubleshooting OOM errors", a README's "Addressing OOM",
 * "recover from OOM"): the tool's behaviour is the subject, no run failed. Read like an avoidance, before the predicate.
 */
export const HANDLED =
  /\b(?:handl\w{0,3}|detect(?:s|ed|ing)?|catch\w{0,3}|recover\w{0,3}|troubleshoot\w{0,3}|mitigat\w{0,4}|address\w{0,3}|tackl\w{0,3}|guard\w{0,3}\s{1,3}against|protect\w{0,3}\s{1,3}against)\b|应对|预防/i;

/**
 * A title that is a change to the software, not an account of a run: a pull request's or feature's imperative ("Add
 * ...", "Find CUDA OOM batches before training", "Support ...") or a conventional prefix ("ENH:", "feat(x):", "fix:",
 * "docs:"). Read on the paste's first line only (a body's "Add --fp16 and it still OOMs" tells one).
 */
export const CHANGE_TITLE =
  /^\s{0,4}(?:(?:ENH|feat|fix|perf|docs?|chore|refactor)(?:\([^)\n]{1,24}\))?\s{0,2}:|(?:add|allow|better|detect|document|enable|expose|find|handle|implement|improve|introduce|support|track)\b)/i;

/**
 * OOMs named in the plural as the cause of a limit ("a blocker for larger batches due to out-of-memory errors",
 * "because of OOM issues"): a kind of failure the reporter steers clear of, not one this run had. Tells nothing.
 */
export const GENERIC_CAUSE =
  /\b(?:due\s{1,3}to|because\s{1,3}of|for\s{1,3}fear\s{1,3}of)\s{1,3}(?:the\s{1,3})?(?:CUDA\s{1,3}|GPU\s{1,3})?(?:OOM|out[ -]?of[ -]?memory)\s{1,3}(?:errors|issues|problems)\b/i;

/**
 * The failure word negated right before it ("no OOM", "without OOM", "not an OOM", "没有爆显存", "没OOM"): a direct
 * denial. Wider negations ("it does not seem to run out until step 300") stay hedges: they take nothing back.
 */
export const NEGATED_AT = /(?:\b(?:no|without|never|not\s{1,3}an?)|没有|没|并未|未)\s{0,2}(?:CUDA\s{1,3}|GPU\s{1,3}|显存\s{0,2})?$/i;

/** A failure of the past that the report says is fixed ("At first I got OOM, but I fixed it", "之前爆显存，已经解决了"). */
export const FIXED_SINCE =
  /\b(?:fixed|solved|resolved)\s{1,3}(?:it|this|that|the)\b|\b(?:works|working|runs|running)\s{1,3}(?:fine\s{1,3})?now\b|已经?解决|解决了|现在(?:可以|能)/i;

/**
 * A failure told as having happened despite something ("... and still oom", "还是OOM", "even with batch 1 it OOMs"):
 * an account, even inside a capacity question ("how much vram, because i used 140gb and still oom"), which then asks
 * what would fit, not whether it fails.
 */
export const DESPITE = /(?:\b(?:still|again|even\s{1,3}(?:with|on|at)\s{1,3}[^,.;]{1,30})|还是|依然|仍然|仍|又)\s{0,3}(?:会\s{0,2})?$/i;

/**
 * Memory told full at its limit, which tells the failure only with what followed on the line (as FULL in
 * told-failure.ts): "RAM usage was at 100%" then "the kernel died"; 跑满 / 爆满 / 打满 / 拉满 (ran full) then 报错.
 */
export const FULL_AT_LIMIT = /\b(?:at|hits?|hit|reach\w{0,3}|to)\s{1,3}100\s{0,2}%|跑满|爆满|打满|拉满/i;

/**
 * A yes/no question about a failure to come: "训练7B在24G上会OOM吗？" (will it OOM?), "Will 13B OOM on a 24 GB card?".
 * "为什么会爆显存？" (why did it) asks about one that happened: no 吗, no leading will.
 */
export const FORECAST_QUESTION = /会\s{0,2}[^，。？！\n]{0,12}?(?:吗|么|嘛)\s{0,2}[?？]?\s*$/;
/** The English form, read on the whole line (a clause loses its question mark): a line that asks "Will ... ?". */
export const FORECAST_QUESTION_LINE = /^\s{0,4}(?:will|would)\b[^\n]{0,160}[?？]\s*$/i;

/**
 * An attempt to train, fine-tune or load a model of a stated size on a named card, told as failing with no error named
 * ("I tried to fine-tune LLaMA-7b with 1x NVIDIA A100-80GB to no avail", "tried to train a 13B model on a 24 GB card without
 * success", "7B 在一张 24G 卡上微调跑不起来"): a size against a card is a memory account, the budget then decides the lever.
 */
const ATTEMPT_FAILED =
  /\b(?:tried|trying|attempted|attempting)\s{1,3}to\s{1,3}(?:train|fine-?tune|finetune|pre-?train|load|run|fit)\b[^\n.;]{0,100}?\b(?:to\s{1,3}no\s{1,3}avail|without\s{1,3}success|unsuccessfully|in\s{1,3}vain)\b|(?:训练|微调|跑)[^，。\n]{0,30}?(?:跑不起来|跑不动|装不下)/i;
const MODEL_SIZE = /\b\d{1,4}(?:\.\d)?\s{0,2}[bB]\b|\b\d{1,4}(?:\.\d)?\s{0,2}(?:billion|B\s{0,2}params)\b/i;
const CARD_NAMED =
  /\b(?:A100|H100|H200|H800|A800|A6000|A10G?|L4|L40S?|V100|T4|RTX\s{0,2}\d{4}|\d{4}\s{0,2}Ti)\b|\b\d{1,3}\s{0,2}G(?:i)?B?\b[^\n]{0,12}?(?:GPU|card|卡|显卡)|(?:GPU|card|卡)[^\n]{0,6}?\d{1,3}\s{0,2}G/i;
export function attemptFailedOnCard(clause: string): RegExpExecArray | null {
  if (!MODEL_SIZE.test(clause) || !CARD_NAMED.test(clause)) return null;
  return ATTEMPT_FAILED.exec(clause);
}

// ---- A climb told over the run (h1, session 36): the forms real reports use that the grammar missed.

/**
 * The run's own count as the measure of a climb: "increases with the number of training epochs", "grows with the
 * count of requests", "with more iterations". Memory that rises with the run's count at constant work is a climb.
 */
export const WITH_RUN_COUNT =
  /\bwith\s{1,3}(?:the\s{1,3})?(?:(?:number|count)\s{1,3}of\s{1,3}|more\s{1,3})(?:\w{2,12}\s{1,3})?(?:epochs|iterations|steps|batches|requests|calls|queries|rounds)\b/i;

/**
 * A fill told after the run went on for a while ("After running for more than ten minutes, the GPU memory is full",
 * "after a few hours the RAM is full"): at constant work the run fit at first, so what fills it later was kept.
 */
export const AFTER_RUNNING =
  /\bafter\s{1,3}(?:(?:running|training|serving|streaming|working|inference)\s{1,3}(?:for\s{1,3})?(?:(?:more\s{1,3}than|about|around|over|nearly|almost|a\s{1,3}few|several|some)\s{1,3})?(?:\d{1,5}|an?|one|two|three|five|ten|twenty|thirty)?\s{0,3}(?:minutes?|mins?|hours?|hrs?|days?)|(?:a\s{1,3}(?:while|few\s{1,3}(?:minutes|hours|days))|some\s{1,3}time|(?:several|many)\s{1,3}(?:minutes|hours|days)))\b|(?:运行|跑|训练)了?\s{0,2}(?:一段时间|几个小时|\d{1,4}\s{0,2}(?:分钟|小时))(?:之?后|以后)/i;

/**
 * A server's run is counted in requests: a climb told against them ("gradually increases ... after subsequent requests",
 * "sending requests continuously", "with each request", "during the request process", "每次请求后显存增加") is a climb at constant work per request.
 */
export const OVER_REQUESTS =
  /\b(?:after|with)\s{1,3}(?:the\s{1,3})?(?:each|every|subsequent|successive|several|many|multiple|repeated|consecutive|further|a\s{1,3}few|some|\d{1,6})\s{1,3}(?:\w{2,12}\s{1,3})?(?:requests?|calls?|quer(?:y|ies)|generations?|inferences?|conversations?)\b|\bper\s{1,3}(?:request|call|query|generation|inference)\b|\b(?:during|while|in)\s{1,3}(?:the\s{1,3})?(?:request|serving)\s{1,3}process(?:ing)?\b|\bwhile\s{1,3}(?:serving|handling|processing)\s{1,3}(?:the\s{1,3})?requests\b|\b(?:send(?:s|ing)?|sent|mak(?:e|es|ing)|made|handl(?:e|es|ed|ing))\s{1,3}(?:\w{2,12}\s{1,3})?requests\s{1,3}(?:continuously|repeatedly|one\s{1,3}after\s{1,3}another|in\s{1,3}a\s{1,3}loop|back[ -]to[ -]back)\b|(?:每次|每个|多次|连续|持续|不断)\s{0,2}(?:的\s{0,2})?(?:请求|调用|推理|生成|对话)/i;

/**
 * A climb told with its figures: "increasing from 3GB to 9GB", "went up from 2.8 GB to 3.9 GB", "starts from 0 and
 * increases ... to 6e+4". The numbers are compared by climbFromTo: a fall ("6598MB -> 6134MB") is no climb.
 */
const NUM = String.raw`(\d{1,7}(?:\.\d{1,3})?(?:e[+]?\d{1,2})?)\s{0,2}(?:[KMGT]i?B|[KMGT]|gigabytes?|megabytes?)?`;
const CLIMB_WORD = String.raw`(?:increas|grow|grew|ris(?:es|ing|e)|rose|climb|creep|crept|go(?:es|ing)?\s{1,3}up|went\s{1,3}up|jump|went)\w{0,4}`;
const CLIMB_THEN_FROM = new RegExp(
  String.raw`\b${CLIMB_WORD}\s{1,3}(?:\w{1,15}\s{1,3}){0,3}?from\s{1,3}(?:about\s{1,3}|around\s{1,3}|~\s?)?${NUM}\s{1,3}(?:\w{1,12}\s{1,3}){0,2}?to\s{1,3}(?:about\s{1,3}|around\s{1,3}|~\s?)?${NUM}`,
  'i',
);
const FROM_THEN_CLIMB = new RegExp(
  String.raw`\b(?:starts?|started|starting|begins?|began|beginning)\s{1,3}(?:\w{1,12}\s{1,3}){0,2}?(?:from|at)\s{1,3}(?:about\s{1,3}|around\s{1,3})?${NUM}\s{1,3}(?:\w{1,12}\s{1,3}){0,4}?\b${CLIMB_WORD}\b[^\n.;]{0,60}?\bto\s{1,3}(?:about\s{1,3}|around\s{1,3}|~\s?)?${NUM}`,
  'i',
);

/** The clause's climb told with two figures, the second above the first (the match, for its place in the clause). */
export function climbFromTo(clause: string): RegExpExecArray | null {
  for (const form of [CLIMB_THEN_FROM, FROM_THEN_CLIMB]) {
    const m = form.exec(clause);
    if (m && Number(m[2]) > Number(m[1])) return m;
  }
  return null;
}

/**
 * A settling the report says did not come ("Expect memory to quickly stabilize but it never does", "it never plateaus",
 * "no sign of it stopping", "没有释放掉", "不回落"): the words of a comeback there tell the opposite, a climb.
 */
export const NEVER_SETTLES =
  /\b(?:never|not|n't|no\s{1,3}sign\s{1,3}of\s{1,3}it)\s{1,3}(?:\w{1,12}\s{1,3}){0,2}?(?:stabili[sz]\w{0,3}|plateau\w{0,3}|level\w{0,3}\s{1,3}off|drops?|go(?:es)?\s{1,3}(?:back|down)|stop\w{0,4})\b|\bexpect\w{0,3}\b[^\n]{0,60}?\b(?:stabili[sz]\w{0,3}|plateau\w{0,3}|level\w{0,3}\s{1,3}off)\b[^\n]{0,30}?\bbut\b|(?:没有|没|不|未|并未)\s{0,2}(?:被\s{0,2})?(?:释放掉?|回落|降下来)/i;

/**
 * Memory told at two points of the run, the later larger: "Initially ... around 19+ GB, but it subsequently escalated to
 * over 30+ GB", "GPU usage was just 9GB at the beginning, but increasing to 13-14GB later on". A reading marked as the
 * run's start, and a larger one after it on the same line with a word of rise or of later time. A card's or machine's
 * size ("a 24GB GPU", "32 GB of RAM") is no reading; "the end of epoch 0" is no start (one step at the first validation).
 */
const EARLY_MARK =
  /\b(?:initially|at\s{1,3}(?:the\s{1,3})?(?:beginning|start)|at\s{1,3}first|in\s{1,3}the\s{1,3}beginning|start(?:s|ed|ing)?\s{1,3}(?:with|at|from)|begins?\s{1,3}(?:with|at))|一开始|刚开始|开始时|起初|最初/gi;
const READING = /(\d{1,6}(?:\.\d{1,3})?)\+?\s{0,2}(GiB|GB|G|MiB|MB|M)\b(?!\s{0,3}(?:of\s{1,3})?(?:card|GPU|gpu|graphics|RAM|VRAM|memory|disk|SSD))/gi;
const LATER_RISE =
  /\b(?:increas\w{0,4}|grow\w{0,4}|grew|ris(?:es|ing|e)|rose|climb\w{0,4}|escalat\w{0,4}|bump\w{0,3}\s{1,3}up|jump\w{0,3}|go(?:es)?\s{1,3}up|went\s{1,3}up|later|subsequently|eventually|afterwards|epoch\s{0,2}[2-9]\d{0,4})\b|后面|后来|之后|增|涨|升/i;
const toMiB = (n: string, unit: string) => Number(n) * (/^[GT]/i.test(unit) ? 1024 : 1);

/** Whether the line tells the memory at the run's start and a larger reading later (a climb), per the forms above. */
export function twoReadingsClimb(line: string): boolean {
  EARLY_MARK.lastIndex = 0;
  const early = EARLY_MARK.exec(line);
  if (!early) return false;
  const readings = [...line.matchAll(READING)].map((m) => ({ at: m.index, mib: toMiB(m[1], m[2]) }));
  // The start's reading: the nearest one to its mark, within a short reach either side.
  const near = readings.filter((r) => Math.abs(r.at - early.index) <= 60).sort((a, b) => Math.abs(a.at - early.index) - Math.abs(b.at - early.index))[0];
  if (!near) return false;
  return readings.some((r) => r.at > near.at && r.mib > 1.15 * near.mib && LATER_RISE.test(line.slice(near.at, r.at)));
}

// ---- Reports in words (s40 words): a failure verb with the resource named, from fixed vocabulary.

/**
 * The kernel's kill told by its signal or exit status, no "Killed" line in the paste: "give error code -9", "exit code
 * 137" (128 + 9, a container's), "exited with -9", "signal 9", "SIGKILL". SIGKILL is what the OOM killer sends for host
 * RAM (a full card raises an error instead); a user's own kill is told as such (KILLED_BY_USER in told-failure.ts).
 */
export const KILL_STATUS =
  /\b(?:exit|error|return|status)\s{1,3}(?:code|status)\s{0,3}(?:[:=]\s{0,3}|of\s{1,3}|is\s{1,3}|was\s{1,3})?(?:-9|137)(?![\d.])|\b(?:exit(?:s|ed)?|terminat\w{0,4}|die[sd]?|returns?|returned|fail(?:s|ed)?)\s{1,3}with\s{1,3}(?:(?:exit\s{1,3})?(?:code|status)\s{1,3})?(?:-9|137)(?![\d.])|\bsignal\s{1,3}9\b|\bSIGKILL\b/i;

/**
 * A sudden rise of the memory named ("skyrockets", "shoots up", "spikes", "balloons", "surges", 飙升, 暴涨, 激增, 猛增):
 * with a crash told on the same line it is the failure (the memory ran out), not a slow climb over the run.
 */
export const SURGE =
  /\bsky-?rocket\w{0,4}|\b(?:shoots?|shot|shooting)\s{1,3}up\b|\bspik(?:e|es|ed|ing)\b|\bballoon\w{0,4}|\bsurg(?:e|es|ed|ing)\b|飙升|暴涨|激增|猛增|猛涨/i;

/** Memory that only rises, never falls: 只增不减 / 只涨不降 / 有增无减 / 不减反增, "never goes down", "never decreases". */
export const ONLY_RISES =
  /只\s{0,2}(?:增|涨|升)\s{0,2}不\s{0,2}(?:减|降|落|跌)|有增无减|不减反增|\bnever\s{1,3}(?:decreas\w{0,3}|goes\s{1,3}down|went\s{1,3}down|drops?|dropped)\b/i;
