// DataLoader workers as a lever (issue 23): fewer workers is the first fix of a host-RAM kill only when the
// evidence says the workers' own memory is the problem: a count above 1 stated, or a worker shown killed, and
// nothing that points elsewhere. It is not the lever when
//   - host RAM is shown or said to rise step after step or epoch after epoch (one process keeps something:
//     tensors kept across steps, a buffer or cache that stores every sample; fewer workers only delay it),
//   - the failing frame collects a DataLoader's batches into a list in the main process (Python's `<listcomp>`
//     frame right above the DataLoader iterator's `__next__`: every batch stays in RAM),
//   - the run has at most one worker, or the report says fewer workers were already tried and it still died,
//   - a worker exited (not SIGKILLed) inside a container, whose /dev/shm is 64 MB unless its launcher says
//     otherwise (levers/shm.ts answers that).
// Patterns are bounded and applied per line of at most MAX_LINE characters: linear in the paste's length.

import type { HostPart, Incident } from '../incident/index.js';
export type WorkersFacts = Pick<
  HostPart,
  'workers' | 'hostGrowth' | 'hostGrowthCjk' | 'loaderCollected' | 'workersTried' | 'workersSetTo' | 'workerExitNoKill' | 'growthWorkers'
>;

const MAX_LINES = 20_000;
const MAX_LINE = 400;
const QUOTE_CHARS = 140;

// Host RAM rising, as reports state it: "the cpu memory keep going up during training", "steadily increased RAM
// usage until it was killed", "The memory usage (not GPU memory) increases gradually with each step", "at each
// epoch the RAM loses 1 GB", "内存不断增加", or a memory leak named in a host kill ("内存泄漏").
const HOST_MEMORY = /\b(?:RAM|memory|mem)\b|内存/i;
const RISES =
  /\b(?:increas(?:es|ed|ing)|grow(?:s|ing)|grew|climb(?:s|ed|ing)|ris(?:es|ing)|rose|goes up|going up|went up|creep(?:s|ing)?|loses|leak(?:s|ing)?)\b|memory leak|越来越|不断(?:增加|增长|上涨|变大)|持续(?:增加|增长|上涨)|逐渐(?:增加|增长|变大)|一直(?:涨|增加|增长)|泄[漏露]|随着[^\n]{0,16}(?:增加|增长|进行)[^\n]{0,4}而?(?:增加|增长|上涨|变大|升高)/i;
// A GPU line is the card's memory (growth rules read that), unless it says it is not the GPU's.
const GPU_WORDS = /\bGPU\b|\bCUDA\b|\bVRAM\b|显存/i;
const NOT_GPU = /\bnot\s{1,3}(?:on\s{1,3}|in\s{1,3})?(?:the\s{1,3})?(?:GPU|VRAM)\b|不是显存/i;
// A rise told over time ("during training", "each epoch", "after N epochs", "until killed") or with a leak named.
const OVER_TIME =
  /\b(?:during|while|through(?:out)?)\s{1,3}(?:the\s{1,3})?(?:training|epochs?|iterations?)\b|\b(?:each|every|per|with each|after)\s{1,3}(?:\d{1,6}\s{1,3})?(?:epochs?|steps?|iterations?|batch(?:es)?)\b|\buntil\b[^\n]{0,40}\bkill|\bgradually\b|\bsteadily\b|\bconstantly\b|\bslowly\b|\bkeeps?\b|\bkept\b|memory leak|越来越|不断|持续|逐渐|一直|泄[漏露]|随着/i;

// More RAM bought more epochs ("16G内存最多只能跑到20个epoch，换了32G内存…跑到90多个epoch", "with 16GB RAM it dies at
// epoch 20, with 32GB RAM at epoch 90"): what the run needs grows with the epochs, a climb and not a fixed size.
const EPOCH_AT = String.raw`(?:epochs?\s{0,2}(\d{1,5})|(\d{1,5})\s{0,2}多?\s{0,2}个?\s{0,2}(?:epochs?|轮))`;
const RAM_AT = String.raw`(\d{1,4})\s{0,2}G(?:B|iB)?\s{0,2}的?\s{0,2}(?:内存|RAM|memory)`;
const RAM_SIZES = new RegExp(RAM_AT, 'gi');
const MORE_RAM_MORE_EPOCHS = new RegExp(`${RAM_AT}[^\n]{0,40}?${EPOCH_AT}[^\n]{0,40}?${RAM_AT}[^\n]{0,40}?${EPOCH_AT}`, 'i');

// A kill told after many epochs at the run's settings ("After 14 epochs the process is killed", "在第20个epoch被kill"):
// the memory each epoch needs fit for epochs, so what the kill ended is a climb; workers' fixed copies fail in the first.
// Three epochs or fewer can be the first validation's peak (settings.ts reads epochs before an OOM the same way).
const MANY_EPOCHS = String.raw`(?:[4-9]|[1-9]\d{1,4})`;
const KILLED_AFTER_EPOCHS = new RegExp(
  String.raw`\b(?:after|at|in|on|during)\s{1,3}(?:the\s{1,3})?(?:${MANY_EPOCHS}(?:st|nd|rd|th)?\s{1,3}epochs?|epoch\s{1,3}${MANY_EPOCHS})\b[^\n]{0,60}\b(?:killed|kill)\b|\bkilled\b[^\n]{0,40}\b(?:after|at|in|on)\s{1,3}(?:the\s{1,3})?(?:${MANY_EPOCHS}(?:st|nd|rd|th)?\s{1,3}epochs?|epoch\s{1,3}${MANY_EPOCHS})\b|第\s{0,2}${MANY_EPOCHS}\s{0,2}个?\s{0,2}(?:epoch|轮)[^\n]{0,20}(?:被\s{0,2}(?:kill|杀)|killed)`,
  'i',
);

/** The line that says a larger RAM let the run go more epochs before it died, if the paste has one. */
function moreRamMoreEpochs(line: string): boolean {
  const m = MORE_RAM_MORE_EPOCHS.exec(line);
  if (!m) return false;
  const [ram1, ep1, ram2, ep2] = [Number(m[1]), Number(m[2] ?? m[3]), Number(m[4]), Number(m[5] ?? m[6])];
  return ram2 > ram1 && ep2 > ep1;
}

// Python's traceback of a list comprehension driving the DataLoader: `File "x.py", line 131, in <listcomp>` then the
// code line, then (within a few lines) torch's dataloader.py `__next__`.
const LISTCOMP_FRAME = /^\s{0,12}(?:\[rank\d{1,4}\]:\s{0,4})?File "[^"\n]{1,300}", line \d{1,7}, in <listcomp>\s*$/;
const DATALOADER_NEXT = /torch\/utils\/data\/dataloader\.py", line \d{1,7}, in __next__/;

// Fewer workers tried and the run still died: a line naming workers, a lowered count and a result that did not change.
const WORKERS_WORD = /\bworkers?\b|num[_ -]?workers?|workers_per_gpu|\bworker数/i;
// The report ties host memory to the workers in one sentence: a workers word (a count above 0, "num_workers > 0",
// "Dataloader多线程"), a memory word, and a verb of growth or cause ("workers=8 caused RAM OOM", "the memory
// consumption increases over time when num_workers > 0"). Workers that were only lowered without change are workersTried.
// Also the workers' count named as what the memory scales with ("especially when using larger number of workers", "with
// more workers", a launcher's --loader-num-workers flag).
const WORKERS_TIED =
  /\bnum[_ -]?workers?\b|\bworkers?\s{0,2}[=:]\s{0,2}[1-9]|\bDataLoader\b[^\n]{0,30}\bworkers?\b|(?:Dataloader|数据加载)[^\n]{0,6}(?:多线程|多进程)|\b(?:number|count)\s{1,3}of\s{1,3}(?:(?:DataLoader|data\s{1,3}loader|loader)\s{1,3})?workers\b|\bmore\s{1,3}workers\b|--[\w-]{0,30}workers\b/i;
const MEMORY_TIED = /\b(?:memory|RAM)\b|内存/i;
// The DataLoader named as the cause in a sentence of its own ("found this issue is caused by the data from Dataloader"):
// it ties the host climb the paste tells elsewhere to the loader's workers.
const LOADER_CAUSE =
  /\b(?:caused\s{1,3}by|due\s{1,3}to|because\s{1,3}of|comes?\s{1,3}from)\s{1,3}(?:the\s{1,3})?(?:data\s{1,3}from\s{1,3}(?:the\s{1,3})?)?DataLoader\b/i;
const CAUSE_OR_GROWTH =
  /\b(?:due to|caused?|caus(?:es|ing)|led to|leads? to|leading to|more and more|increas\w{0,4}|grow\w{0,4}|leak\w{0,4}|OOM)\b|造成|导致|泄漏|泄露|一直在?(?:增长|增加|上涨)/i;
const LOWERED =
  /\b(?:less|fewer|lower(?:ed)?|reduc(?:e|ed|ing)|decreas(?:e|ed|ing)|smaller)\b|workers?\w{0,20}\s{0,2}(?:=|:|to|of|is set to|set to|为|设置为|设为|改成|改为)\s{0,2}[01]\b|\b[01]\s{1,2}workers?\b|减少|调小|降低|设置为\s{0,2}[01]|设为\s{0,2}[01]/i;
const NO_CHANGE =
  /\bstill\b|\bdoes(?:n't| not) (?:help|work|solve|fix)|\bdid(?:n't| not) (?:help|work|solve|fix)|\bno (?:luck|help|difference|change)\b|\bsame (?:error|problem|issue|result)\b|\bwithout (?:success|luck)\b|仍然|仍|还是|依然|没用|没有用|不行|无效|无济于事/i;

const WORKERS_SET_TO = /\bnum[-_ ]?workers?\s{1,2}(?:is|was|were)\s{1,2}(?:set\s{1,2}to|already)\s{1,2}(\d{1,3})\b/i;
const TORCH_HINT = 'Rerunning with num_workers=0';
const WORKERS_KEY = /(?:^|[\s,({'"-])(?:num[-_]workers|workers_per_gpu|dataloader_num_workers|n_workers|workers)['"]?[ \t]{0,2}[=: ][ \t]{0,2}(\d{1,3})\b/gim;
const SIGKILL_WORKER = /DataLoader worker \(pid[^\n]{0,80}?\) is killed by signal: Killed/;
// Paddle's DataLoader names the count and the pids instead: "DataLoader 2 workers exit unexpectedly, pids: 311, 312"
const WORKER_EXIT =
  /DataLoader worker \(pid[^\n]{0,80}?\) (?:exited unexpectedly|is killed by signal: Bus error)|DataLoader \d{1,4} workers? exit unexpectedly, pids:/;

const quote = (line: string) => {
  const q = line.trim();
  return q.length > QUOTE_CHARS ? q.slice(0, QUOTE_CHARS) + '…' : q;
};

/**
 * A climb the report's grammar reads (told-failure.ts) on a line that also names the workers' count ("num_workers 为20时候，
 * 内存一直慢慢涨上来"): the line ties the climb to the workers, as readWorkers' own sentences do.
 */
export function toldClimbTiesWorkers(line: string): string | undefined {
  const l = line.slice(0, MAX_LINE);
  return WORKERS_TIED.test(l) && MEMORY_TIED.test(l) && (!GPU_WORDS.test(l) || NOT_GPU.test(l)) ? quote(l) : undefined;
}

/** What the paste shows that decides whether the workers are the lever (read once per log). */
export function readWorkers(text: string): WorkersFacts {
  const out: WorkersFacts = {};
  const lines = text.split('\n', MAX_LINES);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i].length <= MAX_LINE ? lines[i] : lines[i].slice(0, MAX_LINE);
    const toldRising = HOST_MEMORY.test(line) && RISES.test(line) && OVER_TIME.test(line) && (!GPU_WORDS.test(line) || NOT_GPU.test(line));
    // A line that compares RAM sizes says itself whether more RAM bought more epochs (moreRamMoreEpochs): dying at the
    // same epoch with more RAM is a fixed need at that epoch, no climb.
    const comparesRam = (line.match(RAM_SIZES) ?? []).length >= 2;
    const grewToKill = !GPU_WORDS.test(line) && (moreRamMoreEpochs(line) || (!comparesRam && KILLED_AFTER_EPOCHS.test(line)));
    if (out.hostGrowth === undefined && (toldRising || grewToKill)) {
      out.hostGrowth = quote(line);
      if (/[\u3000-\u9fff\uff00-\uffef]/.test(line)) out.hostGrowthCjk = true;
    }
    if (out.loaderCollected === undefined && LISTCOMP_FRAME.test(line) && lines.slice(i + 2, i + 6).some((l) => DATALOADER_NEXT.test(l.slice(0, MAX_LINE))))
      out.loaderCollected = quote(lines[i + 1] ?? '');
    if (out.workersTried === undefined && WORKERS_WORD.test(line) && LOWERED.test(line) && NO_CHANGE.test(line)) out.workersTried = quote(line);
    else if (out.growthWorkers === undefined && WORKERS_TIED.test(line) && MEMORY_TIED.test(line) && CAUSE_OR_GROWTH.test(line) && !GPU_WORDS.test(line))
      out.growthWorkers = quote(line);
  }
  if (out.growthWorkers === undefined && out.hostGrowth !== undefined) {
    const cause = lines.map((l) => l.slice(0, MAX_LINE)).find((l) => LOADER_CAUSE.test(l) && (!GPU_WORDS.test(l) || NOT_GPU.test(l)));
    // The sentence that names the loader is the evidence the reply quotes.
    const at = cause ? (LOADER_CAUSE.exec(cause)?.index ?? 0) : 0;
    if (cause) out.growthWorkers = quote(cause.slice(cause.lastIndexOf('. ', at) + 1));
  }
  if (text.includes(TORCH_HINT)) {
    let last: string | undefined;
    for (const m of text.slice(0, 200_000).replaceAll(TORCH_HINT, '').matchAll(WORKERS_KEY)) last = m[1];
    out.workers = last === undefined ? undefined : Number(last);
  }
  const setTo = WORKERS_SET_TO.exec(text.slice(0, 200_000));
  if (setTo) out.workersSetTo = Number(setTo[1]);
  if (!SIGKILL_WORKER.test(text) && WORKER_EXIT.test(text)) out.workerExitNoKill = true;
  return out;
}

export type WorkersBlock = 'collected' | 'growth' | 'tried' | 'few' | 'container_shm';

/** Lowering the workers is a lever only where the paste states more than 0 of them, or shows one killed. */
export const workersEvidence = (f: Incident) => (f.host.workers !== undefined && f.host.workers > 0) || f.host.workersShown === true;

/** The first reason the workers are not the lever of this host-RAM failure, or none when the evidence says they are. */
export function workersBlock(f: Incident): WorkersBlock | undefined {
  // A frame keeping every batch, or an evaluation keeping every output (levers/eval-gathered.ts): one process holds the set.
  if (f.host.loaderCollected || f.host.evalGathered || f.host.evalKilled) return 'collected';
  // A climb the report itself ties to the workers' count leaves them the lever (host_growth_names_workers leads).
  if (f.series.keptReference || (f.host.hostGrowth && f.host.growthWorkers === undefined)) return 'growth';
  if (f.host.workersTried) return 'tried';
  const workers = f.host.workers ?? f.host.workersSetTo;
  if (workers !== undefined && workers <= 1) return 'few';
  if (f.host.workerExitNoKill && f.environment.detected?.container !== undefined) return 'container_shm';
  return undefined;
}

/** Fewer workers comes first: their count or a killed worker is shown, and nothing says the memory is elsewhere. */
export const workersFirst = (f: Incident) => workersEvidence(f) && workersBlock(f) === undefined;

/** Workers are in evidence, yet the paste says they were tried or are one or none: the reply says so and gives the experiment. */
export const workersNotLever = (f: Incident) => {
  const block = workersBlock(f);
  // Without a count above 0 or a killed worker, host-ram.ts's experiment (0 workers against the workers needed) answers.
  return (block === 'tried' || block === 'few') && workersEvidence(f);
};
