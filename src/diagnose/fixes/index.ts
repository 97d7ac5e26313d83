// Computes each fix a rule names from the facts of the log. A fix is a sentence people can act on plus
// the setting changes under the training tool's own names, and the corrected command line when known.
import type { Fix as FixSpec, FixKind } from '../rule-types.js';
import { absurdInput } from '../levers/input-size.js';
import { cardMiB } from '../levers.js';
import type { Evidence } from '../conditions.js';
import { cachedUnusedMiB, heldElsewhereMiB, holds } from '../conditions.js';
import { accumulationFor, fewerWorkers, fixedBatchForAutobatch, formatMiB, smallerBatch, smallerImgsz } from './arithmetic.js';
import { rewriteCommandLine } from './command-line.js';
import { shmFix } from '../levers/shm.js';
import { undefinedFlags, type ParsedCommand } from '../tool-cli.js';
import { t, type Locale } from '../../core/i18n.js';
import { flatView } from '../incident/index.js';

export interface ComputedFix {
  kind: FixKind;
  summary: string;
  changes: Record<string, number | string | boolean>;
  env?: Record<string, string>;
  /** The pasted training command with the changes applied. */
  command?: string;
  /** Code to add, for fixes that are code changes. */
  code?: string;
}

type Made = Omit<ComputedFix, 'kind'>;
type Maker = (e: Evidence, spec: FixSpec, loc: Locale | undefined) => Made | null;

const hostRamGiB = ({ incident, readings }: Evidence) =>
  incident.host.hostRamGiB ?? (readings.hostMemory ? readings.hostMemory.totalBytes / 1024 ** 3 : undefined);

const MAKERS: Record<FixKind, Maker> = {
  reduce_batch: ({ incident }, _spec, loc): Made | null => {
    const batch = incident.run.batch;
    if (batch === undefined || batch < 0) return null;
    if (batch <= 1) {
      // A language model at batch 1: what is left is sequence length, checkpointing and where the
      // weights and optimizer state live, not image size.
      if ((incident.model.paramsB ?? 0) >= 1) {
        const adapters = t(loc, incident.run.adapterTraining ? 'fix.reduceBatch.oneLlmAdapters' : 'fix.reduceBatch.oneLlmFull');
        return { summary: t(loc, 'fix.reduceBatch.oneLlm', { adapters }), changes: {} };
      }
      // No figure at all: at batch 1 the first suspect is memory this process never saw (another job,
      // a hung earlier run), which nvidia-smi shows in seconds.
      const figures = [
        incident.figures.triedAllocMiB,
        incident.figures.freeMiB,
        incident.figures.allocatedMiB,
        incident.figures.reservedMiB,
        incident.figures.totalCapacityMiB,
        incident.figures.thisProcessMiB,
      ];
      if (figures.every((v) => v === undefined)) return { summary: t(loc, 'fix.reduceBatch.oneNoFigures'), changes: {} };
      return { summary: t(loc, 'fix.reduceBatch.one'), changes: {} };
    }
    const next = smallerBatch(batch, incident.figures);
    const accumulate = accumulationFor(batch, next, incident.run.accumulate ?? 1);
    const keep = accumulate > 1 ? t(loc, 'fix.reduceBatch.keep', { n: accumulate, effective: batch * (incident.run.accumulate ?? 1) }) : '';
    const stated = incident.run.batchDefaultOf
      ? t(loc, 'fix.reduceBatch.default', { tool: incident.run.batchDefaultOf })
      : incident.run.batchFromShape
        ? t(loc, 'fix.reduceBatch.fromShape', { shape: incident.run.batchFromShape })
        : '';
    // Read from a tensor, not a setting: say where the tool sets it.
    const where =
      incident.run.batchFromShape && incident.run.tool && incident.run.batchFlag ? t(loc, 'fix.reduceBatch.where', { flag: incident.run.batchFlag }) : '';
    return { summary: t(loc, 'fix.reduceBatch', { where, batch, stated, next, keep }), changes: { batch: next, accumulate } };
  },
  fixed_autobatch: ({ incident }, _spec, loc) => {
    if (incident.run.batch !== -1 && incident.run.autobatch === undefined) return null;
    const fixed = fixedBatchForAutobatch(incident.run.autobatch);
    const picked = incident.run.autobatch !== undefined ? t(loc, 'fix.autobatch.picked', { n: incident.run.autobatch }) : '';
    return {
      summary: t(loc, 'fix.autobatch', { picked, fixed }),
      changes: { batch: fixed },
    };
  },
  reduce_workers: (e, _spec, loc): Made | null => {
    const { incident } = e;
    // A fix must change something: with 0 workers stated there is none to lower.
    if (incident.host.workers !== undefined && incident.host.workers <= 0) return null;
    // The writer that filled /dev/shm is named and is not DataLoader workers (NCCL's segment, a store sized above
    // /dev/shm): fewer workers frees nothing there.
    if (['nccl', 'store', 'object_store'].includes(incident.shm.shmWriter ?? '')) return null;
    const ram = hostRamGiB(e);
    const next = fewerWorkers(incident.host.workers, ram);
    const ramText = ram !== undefined ? t(loc, 'fix.workers.ram', { ram: ram.toFixed(ram < 100 ? 1 : 0) }) : '';
    if (next === undefined) return { summary: t(loc, 'fix.workers.table'), changes: {} };
    const from = incident.host.workers !== undefined ? `${incident.host.workers} -> ${next}` : `${next}`;
    return {
      summary: t(loc, 'fix.workers', { from, ram: ramText }),
      changes: { workers: next },
    };
  },
  reduce_imgsz: ({ incident }, _spec, loc) => {
    // Below 800 px a smaller image costs accuracy faster than it saves memory; the batch is the lever there.
    if (incident.run.imgsz === undefined || incident.run.imgsz < 800) return null;
    const next = smallerImgsz(incident.run.imgsz);
    if (next === undefined) return null;
    return {
      summary: t(loc, 'fix.imgsz', { from: incident.run.imgsz, to: next }),
      changes: { imgsz: next },
    };
  },
  expandable_segments: ({ incident }, _spec, loc) => {
    const unused = cachedUnusedMiB(incident);
    const why =
      unused !== undefined && incident.figures.triedAllocMiB !== undefined
        ? t(loc, 'fix.expandable.why', { unused: formatMiB(unused), tried: formatMiB(incident.figures.triedAllocMiB) })
        : '';
    // Already set under either name: advising it again changes nothing (alloc-conf.ts).
    if (incident.environment.expandableAlreadySet)
      return { summary: t(loc, 'fix.expandable.already', { why, name: incident.environment.expandableAlreadySet }), changes: {} };
    // The variable the user's torch reads: PYTORCH_ALLOC_CONF from 2.11, the PYTORCH_CUDA_ALLOC_CONF alias before.
    const name = incident.environment.allocConfName ?? 'PYTORCH_CUDA_ALLOC_CONF';
    return {
      summary: t(loc, 'fix.expandable', { why, name }),
      changes: {},
      env: { [name]: 'expandable_segments:True' },
    };
  },
  free_other_processes: ({ incident, readings }, _spec, loc) => {
    const held = heldElsewhereMiB(incident);
    const gpu = incident.figures.gpuIndex ?? 0;
    const pids = [
      ...(incident.processes.otherProcesses ?? []).map((p) => `${p.pid} (${formatMiB(p.memoryMiB)})`),
      ...readings.processes
        .filter((p) => p.gpuIndex === gpu && p.memoryMiB)
        .map((p) => `${p.pid} ${p.name ?? ''} (${formatMiB(p.memoryMiB!)})`.replace('  ', ' ')),
    ];
    const amount =
      held !== undefined && incident.figures.totalCapacityMiB !== undefined
        ? t(loc, 'fix.freeOthers.amount', { held: formatMiB(held), gpu, total: formatMiB(incident.figures.totalCapacityMiB) })
        : '';
    const who = pids.length ? t(loc, 'fix.freeOthers.who', { list: [...new Set(pids)].join(', ') }) : '';
    return {
      summary: t(loc, 'fix.freeOthers', { amount, who }),
      changes: {},
    };
  },
  empty_cache_after_validation: (_e, _spec, loc) => ({
    summary: t(loc, 'fix.emptyCache'),
    changes: {},
    code: 'del preds, outputs  # drop references to validation tensors\ngc.collect()\ntorch.cuda.empty_cache()',
  }),
  release_graph_references: (_e, _spec, loc) => ({
    summary: t(loc, 'fix.releaseGraph'),
    changes: {},
    code: 'total_loss += loss.item()  # a float, not the graph\nloss = None\nretval = None',
  }),
  drop_ram_cache: ({ incident }, _spec, loc) => {
    if (incident.run.cache === false || incident.run.cache === undefined || incident.run.cache === 'disk') return null;
    return {
      summary: t(loc, 'fix.dropRamCache'),
      changes: { cache: false },
    };
  },
  // The writer (NCCL or DataLoader workers) and the place it runs (Docker, a pod) pick the words (levers/shm.ts).
  shm_size: ({ incident }, _spec, loc) => ({ ...shmFix(incident, loc), changes: {} }),
  absurd_request: ({ incident }, _spec, loc) => {
    const tried = incident.figures.triedAllocMiB !== undefined ? formatMiB(incident.figures.triedAllocMiB) : t(loc, 'fix.absurd.block');
    // The card that makes the request absurd: the message's total, else the card the paste names (conditions.ts).
    const card = cardMiB(incident);
    const cap = card !== undefined ? t(loc, 'fix.absurd.cap', { total: formatMiB(card) }) : '';
    // A stated large input reads the request as that input's attention or feature maps, not as a shape that blew up.
    const input = absurdInput(incident);
    return {
      summary: input ? t(loc, 'fix.absurd.input', { tried, cap, input }) : t(loc, 'fix.absurd', { tried, cap }),
      changes: {},
    };
  },
  wrong_device: ({ incident, readings }, _spec, loc) => {
    const named = incident.card.gpuMemoryMiB ?? readings.gpus[0]?.memoryTotalMiB ?? undefined;
    const cap = incident.figures.totalCapacityMiB;
    if (named === undefined || named === null || cap === undefined) return null;
    return {
      summary: t(loc, 'fix.wrongDevice', { cap: formatMiB(cap), named: formatMiB(named) }),
      changes: {},
    };
  },
  // The first collective never completed on any rank: the transport, not a rank that fell behind (settings.ts).
  nccl_first_collective: ({ incident }, _spec, loc) =>
    incident.distributed.ncclNeverCompleted ? { summary: t(loc, 'fix.ncclFirstCollective'), changes: {} } : null,
  nccl_lagging_rank: ({ incident }, _spec, loc) => {
    const seq = Object.entries(incident.distributed.ncclSeqByRank ?? {});
    if (seq.length < 2) return null;
    seq.sort((a, b) => a[1] - b[1]);
    const [laggard, low] = seq[0];
    const high = seq[seq.length - 1][1];
    if (low === high) return null;
    return {
      summary: t(loc, 'fix.ncclLagging', { laggard, low, leader: seq[seq.length - 1][0], high, gap: high - low }),
      changes: {},
    };
  },
  // A rule's own sentence, in Chinese where the rule gives one (rule.yaml `zh: {text}`), else as written.
  advice: (_e, spec, loc) => ({ summary: (loc === 'zh' && spec.zh?.text) || spec.text!, changes: { ...(spec.changes ?? {}) } }),
};

function fill(template: string, e: Evidence): string {
  return template.replace(/\{(\w{1,40})\}/g, (m, key: string) => {
    const v = flatView(e.incident)[key];
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : m;
  });
}

/** `command`: the paste's command parsed against the tools' CLIs (tool-cli.ts), for the corrected command. */
export function computeFixes(specs: FixSpec[], e: Evidence, loc?: Locale, command?: ParsedCommand): ComputedFix[] {
  const out: ComputedFix[] = [];
  for (const spec of specs) {
    if (!holds(spec.when, e)) continue;
    const made = MAKERS[spec.kind](e, spec, loc);
    if (!made) continue;
    const fix: ComputedFix = { kind: spec.kind, ...made, summary: spec.kind === 'advice' ? fill(made.summary, e) : made.summary };
    // A rule may list a fix twice, first under a condition that moves it up: offer it once.
    if (out.some((f) => f.summary === fix.summary)) continue;
    // A command its own tools do not parse (a flag the launcher or script does not define: a paste cut inside a flag, a
    // typo) cannot be checked, so it is not rewritten: the fix's text says what to change.
    if (e.incident.run.commandLine && Object.keys(fix.changes).length && !(command && undefinedFlags(command).length)) {
      // A batch the log took from the tool's default is added to the command in the tool's syntax.
      const append = e.incident.run.batchDefaultOf && e.incident.run.batchArg ? { batch: e.incident.run.batchArg } : {};
      const rewritten = rewriteCommandLine(e.incident.run.commandLine, fix.changes, append, command);
      if (rewritten) fix.command = rewritten;
    }
    out.push(fix);
  }
  return out;
}
