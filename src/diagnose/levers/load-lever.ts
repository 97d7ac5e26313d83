// Which lever a load that does not fit opens with, by what the run is (issue 23: each phase has its own levers, and a
// lever needs the evidence it cites). When the weights fill the card while the model is loaded or moved to the GPU (or
// in a run said to be inference, where the weights are on the card as they are at the load):
// - a diffusers pipeline (its class by the library's own form, `XxxPipeline.from_pretrained(`, or a known pipeline
//   family) is several models run one after another; moved whole to the GPU it holds all of them at once, and model CPU
//   offload keeps only the running one there: offload first;
// - a training run that trains every parameter, or a run that shards (FSDP / ZeRO-3 / DeepSpeed named in the paste),
//   moves the whole model onto each rank's GPU before any sharding happens (Trainer's model.to(device) when DeepSpeed is
//   not active yet, .cuda() before the FSDP wrap): build or load it sharded (ZeRO-3's zero.Init through the Trainer's
//   deepspeed config before from_pretrained, FSDP wrapping on the CPU or meta device before moving) first;
// - a serving tool or UI (vLLM, ComfyUI, the web UIs: tools.yaml `inference`) places the weights with its own knobs
//   (--lowvram, --gpu-memory-utilization, --tensor-parallel-size, its quantization flag): those first;
// - anything else (inference) keeps holder_weights' order: quantize, a smaller model, split, offload.
// Patterns are a library's fixed vocabulary, bounded and linear.
import { whoHoldsMemory } from '../holder.js';
import { splitOverCards } from './split-cards.js';
import type { Incident } from '../incident/index.js';

// diffusers' own pipeline classes loaded by from_pretrained (CogView4Pipeline, HunyuanVideoPipeline, AutoPipelineForText2Image),
// or a diffusion model family by name (FLUX, SDXL, SD3, Stable Diffusion, HunyuanVideo, CogVideoX, Wan2.x): each is
// a pipeline of text encoders, a transformer or UNet and a VAE.
const DIFFUSERS_PIPELINE_LOAD =
  /\b(?:[A-Z][A-Za-z0-9]{1,40}Pipeline|AutoPipelineFor[A-Za-z0-9]{1,20})\.from_(?:pretrained|single_file)\(|\b(?:FLUX(?:\.1)?|SD-?XL|SD3(?:\.5)?|Stable[ -]Diffusion|HunyuanVideo|CogVideoX|Wan2\.\d)\b/i;
// The run shards its model across GPUs: FSDP by name or by its own calls and settings, DeepSpeed ZeRO-3.
const SHARDING_NAMED =
  /\bFSDP\b|\bapply_fsdp\b|\bFullyShardedDataParallel\b|\bfully_shard\(|\bfsdp_(?:config|sharding_strategy|shard_size|transformer_layer_cls_to_wrap)\b|--fsdp\b|\bzero[_-]?3\b|\bzero_stage\s{0,2}[=:]\s{0,2}3\b|\bzero\.Init\(/i;

const head = (text: string) => (text.length > 1 << 20 ? text.slice(0, 1 << 20) : text);

/** The paste loads a diffusers pipeline by its class (run.diffusionPipeline). */
export const readPipelineLoad = (text: string): boolean => DIFFUSERS_PIPELINE_LOAD.test(head(text));
/** The paste names sharding the model over GPUs (FSDP, ZeRO-3): run.shardingNamed. */
export const readShardingNamed = (text: string): boolean => SHARDING_NAMED.test(head(text));

const atLoad = (f: Incident) => f.phase.name === 'load' || (f.phase.name === undefined && f.phase.oomPhase === 'load');

export type LoadLever = 'pipeline_offload' | 'shard_at_load' | 'tool_knobs';

/** The lever a load whose weights fill the card opens with, when the run says which; undefined: holder_weights' order. */
export function loadLever(f: Incident): LoadLever | undefined {
  // Said to be inference (reported-load.ts): the weights are on the card as they are at the load.
  if (!atLoad(f) && f.run.inferenceSaid === undefined) return undefined;
  if (f.run.inference === true && f.run.toolKnobs !== undefined) return 'tool_knobs';
  if (f.run.diffusionPipeline === true && f.run.training !== true) return 'pipeline_offload';
  if (!atLoad(f)) return undefined;
  if ((f.run.training === true && !f.run.adapterTraining) || f.distributed.shardingNamed === true) return 'shard_at_load';
  return undefined;
}

/** The weights fill the card at the load and the run names `lever` first. */
const weightsAtLoad = (f: Incident, lever: LoadLever) => whoHoldsMemory(f)?.holder === 'weights' && loadLever(f) === lever;

/** The conditions the rules name (conditions.ts spreads them). */
export const LOAD_LEVER_CONDITIONS = {
  // Several GPUs stated and the weights (or this process) fill one outside training (levers/split-cards.ts).
  split_over_cards: ({ incident }: { incident: Incident }) =>
    splitOverCards(incident) && ['weights', 'activations', undefined].includes(whoHoldsMemory(incident)?.holder),
  load_pipeline_offload: ({ incident }: { incident: Incident }) => weightsAtLoad(incident, 'pipeline_offload'),
  load_shard_first: ({ incident }: { incident: Incident }) => weightsAtLoad(incident, 'shard_at_load'),
  load_tool_knobs: ({ incident }: { incident: Incident }) => weightsAtLoad(incident, 'tool_knobs'),
};
