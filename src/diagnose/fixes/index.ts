// Computes each fix a rule names from the facts of the log. A fix is a sentence people can act on plus
// the setting changes under the training tool's own names, and the corrected command line when known.
import type { Fix as FixSpec, FixKind } from '../rule-types.js';
import type { Evidence } from '../conditions.js';
import { cachedUnusedMiB, heldElsewhereMiB, holds } from '../conditions.js';
import { accumulationFor, fewerWorkers, fixedBatchForAutobatch, formatMiB, smallerBatch, smallerImgsz } from './arithmetic.js';
import { rewriteCommandLine } from './command-line.js';

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
type Maker = (e: Evidence, spec: FixSpec) => Made | null;

const hostRamGiB = ({ facts, readings }: Evidence) => facts.hostRamGiB ?? (readings.hostMemory ? readings.hostMemory.totalBytes / 1024 ** 3 : undefined);

const MAKERS: Record<FixKind, Maker> = {
  reduce_batch: ({ facts }): Made | null => {
    const batch = facts.batch;
    if (batch === undefined || batch < 0) return null;
    if (batch <= 1) {
      // A language model at batch 1: what is left is sequence length, checkpointing and where the
      // weights and optimizer state live, not image size.
      if ((facts.paramsB ?? 0) >= 1) {
        const adapters = facts.adapterTraining
          ? 'load the base model in 4-bit (QLoRA) and keep LoRA on fewer target modules'
          : 'train LoRA adapters instead of all weights, or shard with ZeRO-3 / FSDP and offload the optimizer state (DeepSpeed offload_optimizer), or an 8-bit optimizer (bitsandbytes AdamW8bit)';
        return {
          summary: `The batch is already 1: turn on gradient checkpointing, shorten the sequence (max_seq_length / cutoff_len), and ${adapters}`,
          changes: {},
        };
      }
      return {
        summary:
          'The batch is already 1: lower the input size (imgsz / sequence length), enable mixed precision (AMP) or gradient checkpointing, or use a GPU with more memory',
        changes: {},
      };
    }
    const next = smallerBatch(batch, facts);
    const accumulate = accumulationFor(batch, next, facts.accumulate ?? 1);
    const keep = accumulate > 1 ? ` and accumulate ${accumulate} steps to keep the effective batch of ${batch * (facts.accumulate ?? 1)}` : '';
    const stated = facts.batchDefaultOf
      ? ` (${facts.batchDefaultOf}'s default)`
      : facts.batchFromShape
        ? ` (the leading dimension of the tensor that did not fit, ${facts.batchFromShape})`
        : '';
    // Read from a tensor, not a setting: say where the tool sets it.
    const where = facts.batchFromShape && facts.tool && facts.batchFlag ? ` (${facts.batchFlag})` : '';
    return { summary: `Reduce the batch${where}: ${batch}${stated} -> ${next}${keep}`, changes: { batch: next, accumulate } };
  },
  fixed_autobatch: ({ facts }) => {
    if (facts.batch !== -1 && facts.autobatch === undefined) return null;
    const fixed = fixedBatchForAutobatch(facts.autobatch);
    const picked = facts.autobatch !== undefined ? ` (it picked ${facts.autobatch})` : '';
    return {
      summary: `Replace AutoBatch (batch=-1)${picked} with a fixed batch=${fixed}, or a lower GPU-memory fraction such as batch=0.5`,
      changes: { batch: fixed },
    };
  },
  reduce_workers: (e): Made => {
    const { facts } = e;
    const ram = hostRamGiB(e);
    const next = fewerWorkers(facts.workers, ram);
    const ramText = ram !== undefined ? ` for ${ram.toFixed(ram < 100 ? 1 : 0)} GB of host RAM` : '';
    if (next === undefined) {
      return {
        summary: 'Lower the DataLoader workers: each worker holds its own copy of the dataset state (16 GB RAM: 2-4 workers, 32 GB: 4-8, 64 GB+: 8-12)',
        changes: {},
      };
    }
    const from = facts.workers !== undefined ? `${facts.workers} -> ${next}` : `${next}`;
    return {
      summary: `Lower the DataLoader workers: workers=${from}${ramText}; each worker holds its own copy of the dataset state`,
      changes: { workers: next },
    };
  },
  reduce_imgsz: ({ facts }) => {
    // Below 800 px a smaller image costs accuracy faster than it saves memory; the batch is the lever there.
    if (facts.imgsz === undefined || facts.imgsz < 800) return null;
    const next = smallerImgsz(facts.imgsz);
    if (next === undefined) return null;
    return {
      summary: `Step the image size down: imgsz ${facts.imgsz} -> ${next} (activation memory grows with the square of the size)`,
      changes: { imgsz: next },
    };
  },
  expandable_segments: ({ facts }) => {
    const unused = cachedUnusedMiB(facts);
    const why =
      unused !== undefined && facts.triedAllocMiB !== undefined
        ? `PyTorch holds ${formatMiB(unused)} reserved but unallocated, yet a ${formatMiB(facts.triedAllocMiB)} block could not be placed: the cache is fragmented. `
        : '';
    return {
      summary: `${why}Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before starting Python (PyTorch < 2.1: max_split_size_mb:128)`,
      changes: {},
      env: { PYTORCH_CUDA_ALLOC_CONF: 'expandable_segments:True' },
    };
  },
  free_other_processes: ({ facts, readings }) => {
    const held = heldElsewhereMiB(facts);
    const gpu = facts.gpuIndex ?? 0;
    const pids = [
      ...(facts.otherProcesses ?? []).map((p) => `${p.pid} (${formatMiB(p.memoryMiB)})`),
      ...readings.processes
        .filter((p) => p.gpuIndex === gpu && p.memoryMiB)
        .map((p) => `${p.pid} ${p.name ?? ''} (${formatMiB(p.memoryMiB!)})`.replace('  ', ' ')),
    ];
    const amount =
      held !== undefined && facts.totalCapacityMiB !== undefined
        ? `about ${formatMiB(held)} of GPU ${gpu}'s ${formatMiB(facts.totalCapacityMiB)} is held outside this process's allocator. `
        : '';
    const who = pids.length ? `Processes on it: ${[...new Set(pids)].join(', ')}. ` : '';
    return {
      summary: `Another process holds GPU memory: ${amount}${who}Check \`/gpu status\` or nvidia-smi, stop what is not yours to keep, or pick a free GPU with CUDA_VISIBLE_DEVICES`,
      changes: {},
    };
  },
  empty_cache_after_validation: () => ({
    summary:
      'Release cached blocks after each validation: call torch.cuda.empty_cache() and gc.collect() once validation ends (and after deleting its outputs)',
    changes: {},
    code: 'del preds, outputs  # drop references to validation tensors\ngc.collect()\ntorch.cuda.empty_cache()',
  }),
  release_graph_references: () => ({
    summary:
      "Do not keep the previous step's loss alive: log loss.item() instead of the tensor and set loss = None (and any retval holding outputs) before the next forward pass",
    changes: {},
    code: 'total_loss += loss.item()  # a float, not the graph\nloss = None\nretval = None',
  }),
  drop_ram_cache: ({ facts }) => {
    if (facts.cache === false || facts.cache === undefined || facts.cache === 'disk') return null;
    return {
      summary: 'Stop caching images in host RAM: cache=False (or cache=disk); with the cache on, RAM use grows with dataset size x imgsz^2',
      changes: { cache: false },
    };
  },
  shm_size: () => ({
    summary:
      'DataLoader workers pass batches through /dev/shm, which is too small here (Docker defaults to 64 MB): start the container with --shm-size=8g or --ipc=host (Kubernetes: mount an emptyDir with medium: Memory at /dev/shm); workers=0 is the fallback',
    changes: {},
    command: 'docker run --shm-size=8g ...',
  }),
  absurd_request: ({ facts }) => {
    const tried = facts.triedAllocMiB !== undefined ? formatMiB(facts.triedAllocMiB) : 'the requested block';
    const cap = facts.totalCapacityMiB !== undefined ? ` on a ${formatMiB(facts.totalCapacityMiB)} GPU` : '';
    return {
      summary: `A ${tried} request${cap} is not a batch that is a little too big: a tensor shape blew up (corrupt or huge labels, an overflowing size, a wrong reshape), or one input is far larger than the model can take at once (attention over every pixel and frame grows with the square of resolution × frames, or of the sequence length: lower the resolution, frames or length). Inspect the data of the failing batch and update the framework; a smaller batch will not fix this`,
      changes: {},
    };
  },
  wrong_device: ({ facts, readings }) => {
    const named = facts.gpuMemoryMiB ?? readings.gpus[0]?.memoryTotalMiB ?? undefined;
    const cap = facts.totalCapacityMiB;
    if (named === undefined || named === null || cap === undefined) return null;
    return {
      summary: `The error reports ${formatMiB(cap)} total capacity but the log names a GPU with ${formatMiB(named)}: the run is on another device or a MIG slice. Check CUDA_VISIBLE_DEVICES / --device before changing the batch`,
      changes: {},
    };
  },
  nccl_lagging_rank: ({ facts }) => {
    const seq = Object.entries(facts.ncclSeqByRank ?? {});
    if (seq.length < 2) return null;
    seq.sort((a, b) => a[1] - b[1]);
    const [laggard, low] = seq[0];
    const high = seq[seq.length - 1][1];
    if (low === high) return null;
    return {
      summary: `Rank ${laggard} is at SeqNum ${low} while rank ${seq[seq.length - 1][0]} reached ${high}: rank ${laggard} stopped calling collectives ${high - low} operations earlier. Look at what rank ${laggard} was doing (its own log and traceback, a rank-specific branch, uneven data); a longer timeout would only wait longer`,
      changes: {},
    };
  },
  advice: (_e, spec) => ({ summary: spec.text!, changes: { ...(spec.changes ?? {}) } }),
};

function fill(template: string, e: Evidence): string {
  return template.replace(/\{(\w{1,40})\}/g, (m, key: string) => {
    const v = (e.facts as Record<string, unknown>)[key];
    return typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? String(v) : m;
  });
}

export function computeFixes(specs: FixSpec[], e: Evidence): ComputedFix[] {
  const out: ComputedFix[] = [];
  for (const spec of specs) {
    if (!holds(spec.when, e)) continue;
    const made = MAKERS[spec.kind](e, spec);
    if (!made) continue;
    const fix: ComputedFix = { kind: spec.kind, ...made, summary: spec.kind === 'advice' ? fill(made.summary, e) : made.summary };
    // A rule may list a fix twice, first under a condition that moves it up: offer it once.
    if (out.some((f) => f.summary === fix.summary)) continue;
    if (e.facts.commandLine && Object.keys(fix.changes).length) {
      // A batch the log took from the tool's default is added to the command in the tool's syntax.
      const command = rewriteCommandLine(e.facts.commandLine, fix.changes, e.facts.batchDefaultOf && e.facts.batchArg ? { batch: e.facts.batchArg } : {});
      if (command) fix.command = command;
    }
    out.push(fix);
  }
  return out;
}
