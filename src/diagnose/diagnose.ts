// The diagnosis engine: normalise the log, find the rules that apply, extract facts, compute fixes,
// rank them (priority first; among close priorities the later error wins).
import type { RuleBase } from './rule-base.js';
import type { Category } from './rule-types.js';
import { isFlattened, normalizeLog, LogText } from './normalize.js';
import { matchRules } from './match.js';
import { toldAccount, withToldFailure, withoutToldWhereRecognised } from './told-hits.js';
import { toldPhase } from './told-failure.js';
import { extractOomFacts } from './facts.js';
import { longGenerationInCode } from './levers/generation-length.js';
import { extractSettings } from './settings.js';
import { holds } from './conditions.js';
import { whoHoldsMemory } from './holder.js';
import { unstatedHolderWhy } from './holder-unstated.js';
import { strayContexts } from './rank-contexts.js';
import { endsNotMemory, finalOrLoggedError, isExceptionLine, NOT_MEMORY_EXCEPTIONS, type FinalError } from './final-error.js';
import { detectTool, knobInZh, knobsFor, type ToolInfo } from './tools.js';
import { parseCommand } from './tool-cli.js';
import { computeFixes, type ComputedFix } from './fixes/index.js';
import { inferLoadDtype } from './precision.js';
import { allocConfFacts } from './alloc-conf.js';
import { leverWords } from './levers.js';
import { orderGrowthAndOom } from './growth-oom.js';
import { evalPassOomVerdict } from './levers/eval-pass-oom.js';
import { modelRebuiltVerdict, modelRebuiltWords } from './levers/model-rebuilt.js';
import { readRayMonitor, readStackFigures, withStackFigures } from './stack-figures.js';
import { readMetricStates } from './levers/metric-states.js';
import { readCudnnHandleMemory } from './levers/cudnn-handle.js';
import { readCardNewerThanBuild } from './levers/card-arch.js';
import { readDriverState } from './levers/driver-state.js';
import { readLossDivergence } from './levers/loss-diverged.js';
import { tfInitializerPhase } from './levers/tf-initializer.js';
import { detectEnvironment, expandableSegmentsAvailable, expandableUnavailableWhy } from './environment.js';
import { readShm } from './levers/shm.js';
import { readDdpUnused } from './levers/ddp-unused.js';
import { budgetWords } from './levers/budget.js';
import { quantizeWords } from './levers/quantize.js';
import { ampWords } from './levers/amp.js';
import { shardWords } from './levers/static-order.js';
import { readTfRetracing, servedWeightsWords } from './levers/stack-levers.js';
import { reportedLoad } from './levers/reported-load.js';
import { readToldRegression, withToldRegression } from './levers/version-regression.js';
import { kvBudgetWords } from './levers/kv-budget.js';
import { splitWords } from './levers/split-cards.js';
import { reportedPhase } from './levers/reported-phase.js';
import { optimizerStateSaid } from './levers/optimizer-said.js';
import { yoloValPhase } from './levers/eval-yolo.js';
import { readKeptReference } from './levers/growth.js';
import { cutTracebackPhase, withPhase } from './phase.js';
import { readRendezvous, rendezvousWords } from './rendezvous.js';
import { lostRankWords, readLostRank } from './lost-rank.js';
import { orderFirstFailure } from './first-failure.js';
import { parseReadings } from '../readings/index.js';
import { t, type Locale } from '../core/i18n.js';
import type { Readings } from '../readings/types.js';
import { incidentOf, mergeInto, newIncident, type Incident } from './incident/index.js';

export interface Diagnosis {
  rule: string;
  category: Category;
  title: string;
  evidence: string[];
  incident: Incident;
  fixes: ComputedFix[];
  /** Where the diagnosis comes from: the rule's source, or for a GPU OOM the docs of the tool's own settings. */
  source: { seed?: string; issue?: string; note?: string; docs?: string };
  /** Ranking score: priority plus a bonus for how late in the log the evidence is. */
  score: number;
  /** First and last log lines the rule matched. */
  firstLine: number;
  lastLine: number;
  /** The rule also needs context outside its own lines (`requires`): e.g. image caching stopped at 77%. */
  contextual: boolean;
  /** The first of its lines that is an exception, not a sentence (undefined when all are prose or log lines). */
  firstExceptionLine?: number;
  /** Read from the report's words alone (told-hits.ts): dropped where a rule recognised a memory failure itself. */
  toldInWords?: boolean;
}

export interface DiagnoseResult {
  diagnoses: Diagnosis[];
  readings: Readings;
  /** Set when the log ends in an exception that is not about memory and no memory problem precedes it. */
  notMemory?: FinalError;
}

/**
 * The tool's own knobs, for the fixes to quote: its batch flag, how it turns on mixed precision, and
 * its default batch when the log states none (the reply says it is the default).
 */
function withToolKnobs(incident: Incident, tool: ToolInfo | undefined, knobs: string[] | undefined, loc: Locale | undefined): void {
  // tools.yaml's Chinese where the reply is in zh and the tool gives it (flags alone need none).
  const zh = loc === 'zh' ? tool?.zh : undefined;
  incident.run.batchFlag = zh?.batch_flag ?? tool?.batch_flag ?? t(loc, 'diag.default.batchFlag');
  incident.run.ampHow = zh?.amp ?? tool?.amp ?? t(loc, 'diag.default.ampHow');
  incident.run.weightsSplitHow = zh?.weights_split ?? tool?.weights_split ?? t(loc, 'diag.default.weightsSplitHow');
  if (!tool) return;
  incident.run.tool = tool.id;
  incident.run.toolName = tool.name;
  if (tool.inference) incident.run.inference = true;
  if (tool.amp_default_on) incident.run.ampDefaultOn = true;
  if (knobs?.length) incident.run.toolKnobs = (loc === 'zh' ? knobs.map((k) => knobInZh(tool, k)) : knobs).join(loc === 'zh' ? '；' : '; ');
  if (incident.run.batch === undefined && incident.run.autobatch === undefined && tool.batch_default !== undefined) {
    incident.run.batch = tool.batch_default;
    incident.run.batchDefaultOf = tool.name;
    if (tool.batch_arg) incident.run.batchArg = tool.batch_arg;
  }
}

// PyTorch's own page on how its CUDA allocator reports and caches memory: the reference for an OOM's figures.
const PYTORCH_MEMORY_DOCS = 'https://pytorch.org/docs/stable/notes/cuda.html#memory-management';

/**
 * A GPU OOM cites what its fixes come from: the detected tool's documentation of the settings it quotes,
 * else PyTorch's memory-management notes; not the one issue the generic rule was first written from.
 */
function sourceFor(category: Category, ruleSource: Diagnosis['source'], tool: ToolInfo | undefined): Diagnosis['source'] {
  if (category !== 'cuda_oom' && category !== 'fragmentation' && category !== 'replica_oom') return ruleSource;
  if (tool) return { docs: tool.source, note: `${tool.name}: its own memory settings` };
  return { docs: PYTORCH_MEMORY_DOCS, note: "PyTorch's CUDA memory management (what the OOM message's figures mean)" };
}

/** Categories that say "memory": dropped when the run ends in an unrelated exception. */
const MEMORY_CATEGORIES = new Set<Category>([
  'cuda_oom',
  'fragmentation',
  'replica_oom',
  'host_oom_killed',
  'shm_exhausted',
  'growing_memory_leak',
  'cudnn_cublas_alloc',
]);

/** Categories where the device ran out: the reply says who holds the memory. */
const MEMORY_HOLDER_CATEGORIES = new Set<Category>(['cuda_oom', 'fragmentation', 'replica_oom', 'cudnn_cublas_alloc']);

/** How many priority points the position of the last match is worth (end of log = full bonus). */
const RECENCY_BONUS = 30;
const MAX_EVIDENCE = 5;
const MAX_EVIDENCE_CHARS = 400;

/** The diagnosis of a log, its texts (titles, who holds the memory, fixes) in `loc` (English when none is given). */
export function diagnose(raw: string, base: RuleBase, loc?: Locale): DiagnoseResult {
  const text = normalizeLog(raw);
  const readings = parseReadings(text);
  const log = new LogText(text);
  // What the report tells in words: a memory failure no message shows, or a mention that denies one (told-hits.ts).
  const { hits, told } = withToldFailure(log, base, matchRules(log, base));
  const settings = hits.length ? extractSettings(text, { commandLine: !isFlattened(raw) }) : newIncident();
  const tool = hits.length ? detectTool(log, base.tools) : undefined;
  const knobs = tool ? knobsFor(log, base.tools, tool, settings.run.commandLine) : undefined;
  const totalLines = Math.max(1, log.lineCount - 1);
  const stray = hits.length ? strayContexts(readings) : {};
  const allocConf = hits.length ? allocConfFacts(text) : {};
  // Where the job runs (notebook, OS, accelerator, versions): the fixes' conditions read it.
  const environment = hits.length ? detectEnvironment(text) : undefined;
  // A non-PyTorch stack's own figures (TF/XLA BFC, llama.cpp, TGI, vLLM), read once for every memory diagnosis.
  const stack = hits.some((h) => MEMORY_HOLDER_CATEGORIES.has(base.rules[h.rule].category)) ? readStackFigures(log) : undefined;
  // The phase the report names in words, for an OOM whose frames (if any) say none (levers/reported-phase.ts).
  const saidPhase = stack ? (reportedPhase(text) ?? optimizerStateSaid(text) ?? yoloValPhase(text) ?? toldPhase(told)) : undefined;
  // What a growing memory keeps, where the paste shows it (levers/growth.ts): the leak fix needs it to come first.
  const kept = hits.length ? readKeptReference(text) : {};
  // TensorFlow's retracing warning: what a TF climb keeps (levers/stack-levers.ts).
  const retracing = hits.length && text.includes('tf.function retracing') ? { stack: readTfRetracing(log) } : {};
  // A TorchMetrics metric that keeps list states: what a climb or a full card holds (levers/metric-states.ts).
  const metricStates = hits.length ? { stack: readMetricStates(log) } : {};
  // The card's memory printed beside a failed cuDNN handle, read for every category (levers/cudnn-handle.ts).
  const cudnnHandle = hits.length && text.includes('cudnn handle') ? { stack: readCudnnHandleMemory(log) } : {};
  // A card newer than every CUDA the paste names for the build (levers/card-arch.ts): read only where a CUDA library failed.
  const cardArch = hits.some((h) => base.rules[h.rule].id === 'card-newer-than-build') ? { stack: readCardNewerThanBuild(log) } : {};
  // CUDA's own "unknown error" at init, where no allocation failure prints figures (levers/driver-state.ts).
  const driverState = hits.some((h) => base.rules[h.rule].id === 'cuda-init-unknown-error') ? { stack: readDriverState(log) } : {};
  // A loss that exploded on the progress lines before the failure (levers/loss-diverged.ts).
  const loss = hits.length && text.includes('loss') ? { series: readLossDivergence(log) } : {};
  // Who wrote to /dev/shm (NCCL's segment or DataLoader workers): the shm fix speaks of it.
  const shm = hits.some((h) => base.rules[h.rule].category === 'shm_exhausted') ? readShm(log) : {};
  // Ray's memory monitor names the node's RAM it judged: a host-RAM kill, with its own knobs.
  const ray = hits.some((h) => base.rules[h.rule].category === 'host_oom_killed') ? readRayMonitor(log) : {};
  // Who never reached the distributed start-up (rendezvous.ts): the store-barrier rule's first fix says it.
  const rendezvous = hits.some((h) => base.rules[h.rule].id === 'nccl-rendezvous-timeout')
    ? { rendezvousFinding: rendezvousWords(readRendezvous(log), loc) }
    : {};
  // The rank that failed first, as the ranks that waited name it (lost-rank.ts).
  const lostRank = hits.some((h) => base.rules[h.rule].id === 'nccl-lost-rank') ? { lostRankFinding: lostRankWords(readLostRank(log), loc) } : {};
  // DDP's reducer errors: which one, and whether find_unused_parameters is already on (levers/ddp-unused.ts).
  const ddp = hits.some((h) => base.rules[h.rule].id === 'ddp-unused-parameters') ? readDdpUnused(log) : {};
  // The command's launcher and script, read against the tools' own CLIs: a rewrite uses only flags they define.
  // A version that worked and one that fails, told by the report: the version is the lever (levers/version-regression.ts).
  const regression = hits.some((h) => MEMORY_CATEGORIES.has(base.rules[h.rule].category)) ? readToldRegression(text) : undefined;
  const command = settings.run.commandLine && base.tools ? parseCommand(settings.run.commandLine, base.tools.clis, tool?.id) : undefined;
  const diagnoses: Diagnosis[] = [];
  for (const hit of hits) {
    const rule = base.rules[hit.rule];
    const incident: Incident = incidentOf(
      settings,
      { processes: stray },
      { environment: allocConf },
      { shm: shm },
      { stack: ray },
      { distributed: rendezvous },
      { distributed: lostRank },
      { distributed: ddp },
      kept,
      retracing,
      metricStates,
      cudnnHandle,
      cardArch,
      driverState,
      loss,
      extractOomFacts(log, rule.category === 'replica_oom' ? withReplicaOom(log, hit.lines) : hit.lines),
      { environment: { detected: environment } },
      environment && !expandableSegmentsAvailable(environment) ? { environment: { expandableWhy: expandableUnavailableWhy(environment) } } : {},
      toldAccount(told, settings.host.hostGrowth !== undefined, told ? log.line(told.line) : ''),
    );
    if (MEMORY_HOLDER_CATEGORIES.has(rule.category)) {
      if (stack) withStackFigures(incident, stack);
      // No frame at the error places it: a traceback the paste cut before its error line, else an evaluation sentence, else
      // (outside training and serving tools) a sentence placing it at the load.
      if (incident.phase.name === undefined && incident.phase.oomPhase === undefined)
        withPhase(
          incident,
          cutTracebackPhase(log) ??
            tfInitializerPhase(log, incident) ??
            saidPhase ??
            (incident.run.training || tool?.inference ? undefined : reportedLoad(text)),
        );
      // What the report says of an evaluation its frames found (gradients on, the whole set at once) still counts.
      else if (incident.phase.name === 'eval' && saidPhase)
        mergeInto(incident, { eval: { gradsOnStated: saidPhase.gradsOnStated, evalWholeSet: saidPhase.evalWholeSet, evalBatchOne: saidPhase.evalBatchOne } });
      // No frame places the failure, no training step is shown, the paste's code generates at a long stated length: its length's OOM.
      if (incident.phase.name === undefined && incident.phase.oomPhase === undefined && !incident.run.training && longGenerationInCode(incident, text))
        incident.phase.generating = true;
      withToolKnobs(incident, tool, knobs, loc);
      // The phase and the budget give the levers their words: a dtype read from the failed request, the static part against the card.
      inferLoadDtype(incident);
      leverWords(incident, loc);
      modelRebuiltWords(incident);
      quantizeWords(incident, loc);
      ampWords(incident, loc);
      budgetWords(incident, loc);
      shardWords(incident, loc);
      servedWeightsWords(incident);
      kvBudgetWords(incident);
      splitWords(incident, loc);
      const verdict = whoHoldsMemory(incident, loc);
      if (verdict) {
        incident.holder.verdict = verdict.holder;
        incident.holder.why = verdict.why;
      } else {
        // Every OOM reply says who holds the memory, and when the log cannot tell, says so and how to find out.
        // The frames may still say where it failed (the fix quotes them): the line says only what is missing.
        // A request alone (JAX, a bare 'Tried to allocate') is a figure: the line says only what is missing.
        incident.holder.why = unstatedHolderWhy(incident, rule.id, text, loc);
      }
      // A flat series up to the failure: the step needs more than the card has; nothing accumulated.
      if (incident.series.memoryShape === 'flat' && incident.series.memorySeriesMiB) {
        incident.holder.why += t(loc, 'diag.holder.flat', { n: incident.series.memorySeriesMiB.length });
      }
    }
    // A growth's first fix depends on the stack that keeps it (TensorFlow's graph, PyTorch's tensors): its tool, no knobs.
    else if (rule.category === 'growing_memory_leak' && tool) incident.run.tool = tool.id;
    const evidence = { incident, readings };
    if (!holds(rule.when, evidence)) continue;
    const computed = computeFixes(rule.fixes, evidence, loc, command);
    const fixes = computed.length && MEMORY_CATEGORIES.has(rule.category) ? withToldRegression(computed, regression, incident, loc) : computed;
    if (fixes.length === 0) continue;
    const shown = hit.lines.slice(-MAX_EVIDENCE).map((l) => {
      const line = log.line(l).trim();
      return line.length > MAX_EVIDENCE_CHARS ? line.slice(0, MAX_EVIDENCE_CHARS) + '…' : line;
    });
    // A climb told through an evaluation pass that ended in an OOM is the OOM's verdict (levers/eval-pass-oom.ts).
    const evalOom = evalPassOomVerdict(rule.id, incident, text, loc) ?? modelRebuiltVerdict(rule.category, incident, loc);
    diagnoses.push({
      rule: rule.id,
      category: evalOom?.category ?? rule.category,
      title: evalOom?.title ?? ((loc === 'zh' && rule.zh?.title) || rule.title),
      evidence: shown,
      incident,
      fixes,
      source: sourceFor(rule.category, rule.source, tool),
      score: rule.priority + (RECENCY_BONUS * hit.lastLine) / totalLines,
      firstLine: hit.lines[0] ?? 0,
      lastLine: hit.lastLine,
      contextual: (rule.requires?.length ?? 0) > 0,
      firstExceptionLine: hit.lines.find((l) => isExceptionLine(log.line(l))),
      ...(hit.told ? { toldInWords: true } : {}),
    });
  }
  diagnoses.splice(0, diagnoses.length, ...withoutToldWhereRecognised(diagnoses));
  diagnoses.sort((a, b) => b.score - a.score || a.rule.localeCompare(b.rule));
  // A growth series beside an OOM: whether it reached the card decides which comes first.
  // A rank's own failure before the other ranks' timeouts is the cause (first-failure.ts).
  const ordered = orderFirstFailure(orderGrowthAndOom(diagnoses));
  diagnoses.splice(0, diagnoses.length, ...ordered);
  // Abstain rather than guess: a run that ends in KeyError / a shape mismatch / a missing file is not a
  // memory problem, unless a memory error came before that last traceback (an OOM whose aftermath
  // raised the final exception).
  const last = finalOrLoggedError(log);
  if (last && endsNotMemory(last)) {
    // A RuntimeError known by its message (a device or shape error) is what failed: memory evidence before
    // it counts only as an exception (an OOM whose aftermath raised it), never as a user's sentence.
    const byMessage = !NOT_MEMORY_EXCEPTIONS.has(last.type);
    const before = (d: Diagnosis) => d.firstLine < last.tracebackStart && (!byMessage || (d.firstExceptionLine ?? Infinity) < last.tracebackStart);
    // A memory exception in an earlier link of a chain ("During handling ...", "... the direct cause ...") is the failure.
    const chainCause = (d: Diagnosis) =>
      last.ownStart !== undefined && (d.firstExceptionLine ?? Infinity) < last.ownStart && (d.firstExceptionLine ?? -1) >= last.tracebackStart;
    // Kept: evidence before that traceback, rules that read context, or the final exception line itself
    // being the memory error (vLLM raises ValueError for a KV cache that does not fit), also when the
    // rule's evidence goes on past it (vLLM's '# GPU blocks: 0' pasted below the exception).
    // A triple-quoted message ('ValueError: ' then the text on the next lines, as transformers' bnb quantizer raises it)
    // is the exception's own message too.
    const ownMessage = (d: Diagnosis) => last.message === '' && d.firstLine > last.line && d.firstLine <= last.line + 3;
    const kept = diagnoses.filter(
      (d) =>
        !MEMORY_CATEGORIES.has(d.category) ||
        d.contextual ||
        before(d) ||
        chainCause(d) ||
        (d.firstLine <= last.line && last.line <= d.lastLine) ||
        ownMessage(d),
    );
    if (kept.length === 0) return { diagnoses: kept, readings, notMemory: last };
    return { diagnoses: kept, readings };
  }
  return { diagnoses, readings };
}

/** DataParallel wraps the replica's OOM: its message (with the figures) follows under "Original Traceback". */
function withReplicaOom(log: LogText, lines: number[]): number[] {
  const more: number[] = [];
  for (const l of lines) {
    for (let k = l + 1; k < log.lineCount && k <= l + 40; k++) {
      if (/CUDA out of memory\.|OutOfMemoryError/.test(log.line(k).slice(0, 400))) {
        more.push(k);
        break;
      }
    }
  }
  return more.length ? [...lines, ...more].sort((a, b) => a - b) : lines;
}
