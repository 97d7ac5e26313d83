// Which lever the static budget names first (issue 23). When weights + gradients + optimizer state do not fit, the
// batch is never the lever: what shrinks the static part is, and the arithmetic says which.
// - Full training keeps ~16 B/param (AdamW in mixed precision). Over N GPUs ZeRO-3 / FSDP full_shard leave 16/N
//   each: where that fits the card, sharding across the GPUs the launch has is the first lever ('shard').
// - Else offloading the optimizer state to CPU leaves ~4 B/param (16-bit weights and gradients) on each card: where
//   that fits, offload is the first lever ('offload'; ZeRO-Offload, FSDP cpu_offload, an 8-bit / paged optimizer).
// - Where even 4 B/param does not fit one card, a full fine-tune there would stream the parameters over PCIe every
//   step (ZeRO-3 offload_param): a 4-bit base with LoRA on it (QLoRA) is the lever that fits ('qlora').
// - A diffusion pipeline is several models run one after another (text encoders, UNet or transformer, VAE,
//   ControlNet): moved whole to the card it holds all of them; diffusers' model CPU offload keeps only the one that
//   runs. Where its weights fill the card, offload comes before quantizing.
// Patterns match diffusers' own progress line and class names; bounded, linear.
import { formatMiB } from '../fixes/arithmetic.js';
import { staticCeiling, staticOverCard } from './static-fit.js';
import { quantizeFirst } from './quantize.js';
import { oomAfterSteps } from './progress.js';
import { t, type Locale } from '../../core/i18n.js';
import type { Incident } from '../incident/index.js';

/** Bytes per parameter of full training with AdamW in mixed precision (levers.ts; ZeRO paper, Figure 1). */
const FULL_TRAINING_BYTES = 16;
/** 16-bit weights and gradients: what stays on the card once the optimizer state (12 B/param) is offloaded. */
const AFTER_OPTIMIZER_OFFLOAD_BYTES = 4;
/** A share of the card left for activations, the CUDA context and buffers: the static part must stay under this. */
const STATIC_ROOM = 0.85;

const mibOf = (paramsB: number, bytes: number) => (paramsB * 1e9 * bytes) / 2 ** 20;
const round = (v: number) => Math.round(v * 100) / 100;

/** Full training (not adapters, not inference) whose static part does not fit the card or any size of it. */
export const fullTrainingStaticOver = (f: Incident): boolean =>
  f.run.training === true && !f.run.adapterTraining && !f.run.inference && f.model.paramsB !== undefined && staticOverCard(f);

export type StaticLever = 'shard' | 'offload' | 'qlora';

/** The lever the budget names first for full training over the card, or undefined where it fits. */
export function staticFullTrainingLever(f: Incident): StaticLever | undefined {
  if (!fullTrainingStaticOver(f)) return undefined;
  const room = STATIC_ROOM * staticCeiling(f)!.mib;
  const n = f.distributed.worldSize;
  // Already sharded over these GPUs (ZeRO-3) is no new lever: what is left is offloading or fewer bytes.
  const sharded = f.distributed.zeroStage === 3;
  if (n !== undefined && n >= 2 && !sharded && mibOf(f.model.paramsB!, FULL_TRAINING_BYTES / n) < room) return 'shard';
  // ZeRO-3 with offload_optimizer over N GPUs leaves 4/N B/param on each (16-bit weights and gradients, sharded).
  const perGpu = AFTER_OPTIMIZER_OFFLOAD_BYTES / (n !== undefined && n >= 2 ? n : 1);
  if (mibOf(f.model.paramsB!, perGpu) < room) return 'offload';
  // A full fine-tune the paste asks for by name keeps its method: the parameters are offloaded too (slow, but what
  // it takes); where the paste only says "training", the 4-bit base with LoRA is the lever that fits the card.
  return f.run.fullTrainingStated ? 'offload' : 'qlora';
}

/** The GPUs needed for ZeRO-3 / FSDP to leave each one under the room the card has. */
const gpusNeeded = (paramsB: number, cardMiB: number) => Math.ceil(mibOf(paramsB, FULL_TRAINING_BYTES) / (STATIC_ROOM * cardMiB));

/** {shardWhy}: the arithmetic behind the lever staticFullTrainingLever names (per GPU over the launch's GPUs, or what offloading leaves). */
export function shardWords(f: Incident, loc: Locale | undefined): void {
  const lever = staticFullTrainingLever(f);
  if (lever === undefined) return;
  const params = f.model.paramsB!;
  const ceiling = staticCeiling(f)!;
  const n = f.distributed.worldSize ?? 1;
  const vars = {
    n,
    bytes: round(FULL_TRAINING_BYTES / n),
    per: formatMiB(mibOf(params, FULL_TRAINING_BYTES / n)),
    left: formatMiB(mibOf(params, AFTER_OPTIMIZER_OFFLOAD_BYTES / n)),
    leftBytes: round(AFTER_OPTIMIZER_OFFLOAD_BYTES / n),
    half: formatMiB(mibOf(params, 2)),
    card: formatMiB(ceiling.mib),
    need: gpusNeeded(params, ceiling.mib),
  };
  const optimizerOffloadFits = mibOf(params, AFTER_OPTIMIZER_OFFLOAD_BYTES / n) < STATIC_ROOM * ceiling.mib;
  const key =
    lever === 'shard'
      ? 'lever.shard.fits'
      : lever === 'qlora'
        ? 'lever.shard.qlora'
        : !optimizerOffloadFits
          ? 'lever.shard.params'
          : n >= 2
            ? 'lever.shard.overOffload'
            : 'lever.shard.oneOptimizer';
  f.budget.shardWhy = t(loc, key, vars);
}

// diffusers' own words: its progress line while it loads the parts, and its pipeline classes.
const DIFFUSION_PIPELINE =
  /Loading pipeline components|\b\w{0,40}(?:Diffusion|Flux|Kandinsky|PixArt|Wuerstchen|CogVideoX|HunyuanVideo|Wan|Sana|Kolors)\w{0,30}Pipeline\b/;

/** The paste loads or names a diffusers pipeline (run.diffusionPipeline). */
export const readDiffusionPipeline = (text: string): boolean => DIFFUSION_PIPELINE.test(text.length > 1 << 20 ? text.slice(0, 1 << 20) : text);

/** A diffusion pipeline whose 16-bit weights fill the card: model CPU offload before quantizing. */
export const pipelineOffloadFirst = (f: Incident): boolean => f.run.diffusionPipeline === true && f.run.training !== true && quantizeFirst(f);

// The parameters already live on the host: ZeRO-3's offload_param to cpu/nvme (config or Lightning's flag), ColossalAI
// Gemini's offload_param_frac=1, FSDP's offload_params. Then the static part is off the card. Bounded, linear.
const PARAMS_OFFLOADED =
  /"offload_param"\s{0,3}:\s{0,3}\{[^}]{0,200}?"device"\s{0,3}:\s{0,3}"(?:cpu|nvme)"|\boffload_param_device[= :]{1,3}["']?(?:cpu|nvme)\b|\boffload_param_frac\s{0,2}=\s{0,2}1(?:\.0)?\b|\bfsdp_offload_params:\s{0,2}true\b|\bCPUOffload\(offload_params\s{0,2}=\s{0,2}True|\boffload_parameters\s{0,2}=\s{0,2}True/i;
// Gradient (activation) checkpointing already on: the lever is spent.
const CHECKPOINTING_ON =
  /gradient_checkpointing["']?\s{0,3}[=:]\s{0,3}["']?(?:true|1)\b|--gradient[-_]checkpointing(?![\w-])(?![ \t=]{1,3}['"]?(?:False|false|no|0)\b)|gradient_checkpointing_enable\(|--checkpointing\b|activation[-_ ]checkpointing["']?\s{0,3}[=:]\s{0,3}["']?true|use_gradient_checkpointing\s{0,2}=\s{0,2}(?:True|["']unsloth)/i;

/** The setting that offloads the parameters to the host, as the paste writes it (run.paramsOffloaded). */
export function readParamsOffloaded(text: string): string | undefined {
  const head = text.length > 1 << 20 ? text.slice(0, 1 << 20) : text;
  const m = PARAMS_OFFLOADED.exec(head);
  return m ? m[0].replace(/\s{1,40}/g, ' ').slice(0, 120) : undefined;
}

// The load already spreads the model over the visible GPUs: accelerate's dispatch (load_checkpoint_and_dispatch,
// dispatch_model) or from_pretrained's device_map that places layers by free memory. A .cuda() / .to(...) on the
// loaded model (`from_pretrained(..., device_map="auto").to(device)`) moves every layer back to one card: the split is
// undone, not spent. Bounded, linear.
const DISPATCHED = /\bload_checkpoint_and_dispatch\b|\bdispatch_model\(|device_map\s{0,2}=\s{0,2}["'](?:auto|balanced(?:_low_0)?|sequential)["']/;
const DISPATCH_UNDONE = /device_map\s{0,2}=\s{0,2}["'][\w]{1,16}["'][^()]{0,300}\)\s{0,8}(?:\.(?:eval|half|float|bfloat16)\(\)\s{0,8}){0,3}\.(?:cuda|to)\(/;

/** The paste loads the model through a dispatch over the GPUs and keeps it there (distributed.dispatchedOverCards; levers/split-cards.ts). */
export function readDispatchedOverCards(text: string): boolean {
  const head = text.length > 1 << 20 ? text.slice(0, 1 << 20) : text;
  return DISPATCHED.test(head) && !DISPATCH_UNDONE.test(head);
}

export const readCheckpointingOn = (text: string): boolean => CHECKPOINTING_ON.test(text.length > 1 << 20 ? text.slice(0, 1 << 20) : text);

/**
 * The parameters (and with them the optimizer state) live on the host already and checkpointing is off: what fills
 * the card in a training step is the activations and the layers gathered for it, so gradient checkpointing, which
 * keeps one activation per layer, comes before a batch that is small or unknown. The sequence and image readers
 * (conditions.ts) keep their lever where the paste states a long input.
 */
export const offloadedActivations = (f: Incident): boolean =>
  f.run.training === true &&
  f.run.paramsOffloaded !== undefined &&
  !f.run.checkpointingOn &&
  !f.run.inference &&
  (f.phase.name === undefined || f.phase.name === 'forward' || f.phase.name === 'backward') &&
  (f.run.batch === undefined || f.run.batchDefaultOf !== undefined || f.run.batch <= 2) &&
  !oomAfterSteps(f);
