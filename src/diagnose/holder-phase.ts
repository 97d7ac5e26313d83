// The coarse phase holder.ts reads (load / optimizer / backward / forward) and whether an OOM's
// traceback is inference, from the five innermost frames and the source line under them. Moved out of
// facts.ts unchanged; the finer phase with its own levers is src/diagnose/phase.ts.
import type { LogText } from './normalize.js';

// Frames of the traceback above an OOM that say what the run was doing. Innermost frames decide:
// moving or loading the model (module.py `_apply`/`convert`, `from_pretrained`, `load_state_dict`)
// happens before any batch, so the weights are what does not fit.
const FRAME = /^\s{0,8}File "([^"\n]{1,400})", line \d{1,7}, in ([\w<>.]{1,80})/;
const LOAD_FRAMES =
  /^(?:_apply|convert|from_pretrained|load_state_dict|_load_from_state_dict|load_checkpoint|load_model|dispatch_model|_load_state_dict_into_meta_model|set_module_tensor_to_device|load_checkpoint_and_dispatch|to_empty)$/;
// torch/cuda/__init__.py's calls that create this process's CUDA context (and the frames a raw
// CUDA binding shows): an out-of-memory there means the card was full before anything of this job.
const CONTEXT_FRAMES = /^(?:_lazy_init|set_device|current_device|_cuda_init|init|cuInit|cuCtxCreate|cuDevicePrimaryCtxRetain)$/;
const CUDA_INIT_FILE = /torch[\\/]cuda[\\/]__init__\.py$/;
const OPTIMIZER_FRAMES = /^(?:_single_tensor_adamw?|_multi_tensor_adamw?|_fused_adamw?|adamw?|_init_group|step)$/;

/**
 * What the run was doing when the allocation failed (Facts.oomPhase). `context`: the process's first CUDA
 * call (set_device, lazy init) creates its context, a few hundred MiB; failing there, nothing of this job
 * was on the card yet.
 */
export type OomPhase = 'context' | 'load' | 'optimizer' | 'backward' | 'forward';

export function oomPhase(log: LogText, oomLine: number): OomPhase | undefined {
  const frames: { file: string; fn: string }[] = [];
  for (let l = oomLine - 1; l >= 0 && l >= oomLine - 120 && frames.length < 40; l--) {
    const m = FRAME.exec(log.line(l).slice(0, 600));
    if (m) frames.push({ file: m[1], fn: m[2] });
    else if (/^Traceback \(most recent call last\)/.test(log.line(l))) break;
  }
  // Some pastes put the message first and its traceback after it: then the last frames are innermost.
  const after: { file: string; fn: string }[] = [];
  for (let l = oomLine + 1; l < log.lineCount && l <= oomLine + 150 && after.length < 40; l++) {
    const m = FRAME.exec(log.line(l).slice(0, 600));
    if (m) after.push({ file: m[1], fn: m[2] });
  }
  return (
    phaseOf(frames) ??
    phaseOf(after.reverse()) ??
    codeLinePhase(log, oomLine) ??
    rustBacktracePhase(log, oomLine) ??
    rustLoadLines(log, oomLine) ??
    (PROSE_LOAD.test(log.line(oomLine).slice(0, 600)) ? 'load' : undefined)
  );
}

// Rust's std backtrace (RUST_BACKTRACE=1; anyhow / candle's Error::bt) under the error, innermost first:
// "   3: candle_core::safetensors::convert_slice", "  12: candle_transformers::models::falcon::Falcon::load",
// "   6: <candle_core::safetensors::MmapedSafetensors as candle_nn::var_builder::SimpleBackend>::get".
const RUST_FRAME = /^\s{0,12}\d{1,4}: (<?[A-Za-z_][\w:<> ]{0,300})\s*$/;
// Reading weights (safetensors / GGUF files, a VarBuilder, a model's `load`) happens before any input exists.
const RUST_LOAD = /(?:^|[:<])(?:safetensors|var_builder|gguf_file)::|::(?:load|load_\w{1,40}|from_mmaped_safetensors|from_safetensors|from_gguf)$/;
const RUST_FORWARD = /::(?:forward|forward_t|generate)$/;

// Rust runners' own log lines around a failed load: candle's examples print "retrieved the files in {:?}" once the
// weights are downloaded and "loaded the model in {:?}" once they are on the device, so an OOM between the two is the
// load; mistral.rs quantizes weights in place as it loads them (a panic in its pipeline/isq.rs or pipeline/loaders).
const CANDLE_FILES_RETRIEVED = /^\s{0,12}retrieved the files in \d/;
const CANDLE_MODEL_LOADED = /^\s{0,12}loaded the model in \d/;
const MISTRALRS_LOAD_PANIC = /panicked at mistralrs-core[\\/]src[\\/]pipeline[\\/](?:isq\.rs|loaders[\\/])/;

/** The load phase from candle's or mistral.rs's own lines just above the OOM (or on its line). */
function rustLoadLines(log: LogText, oomLine: number): OomPhase | undefined {
  for (let l = oomLine; l >= 0 && l >= oomLine - 30; l--) {
    const line = log.line(l).slice(0, 600);
    if (MISTRALRS_LOAD_PANIC.test(line)) return 'load';
    if (l < oomLine && CANDLE_MODEL_LOADED.test(line)) return undefined;
    if (l < oomLine && CANDLE_FILES_RETRIEVED.test(line)) return 'load';
  }
  return undefined;
}

/** A Rust backtrace's phase: the innermost frame that loads weights or runs a forward decides. */
function rustBacktracePhase(log: LogText, oomLine: number): OomPhase | undefined {
  let seen = 0;
  for (let l = oomLine + 1; l < log.lineCount && l <= oomLine + 80 && seen < 30; l++) {
    const m = RUST_FRAME.exec(log.line(l).slice(0, 400));
    if (!m || !m[1].includes('::')) continue;
    seen++;
    if (RUST_FORWARD.test(m[1])) return 'forward';
    if (RUST_LOAD.test(m[1])) return 'load';
  }
  return undefined;
}

/** The message's own line says it failed while the model was built or moved: "`CUDA error: out of memory` on model instantiation". */
const PROSE_LOAD =
  /\b(?:on|during|at) model (?:instantiation|creation|initiali[sz]ation|loading)\b|\b(?:when|while) (?:loading|moving|instantiating) the model\b/i;

// Frames of text generation (transformers' generate and its search loops, chat helpers) and of image
// diffusion (diffusers pipelines, the web UIs' processing and k-diffusion samplers).
const GENERATION_FILE =
  /diffusers[\\/]pipelines[\\/]|transformers[\\/]generation[\\/]|generation_utils\.py$|modules[\\/]processing\.py$|k_diffusion[\\/]sampling\.py$|ldm[\\/]models[\\/]diffusion[\\/]|comfy[\\/](?:samplers|sample)\.py$/;
const GENERATION_FN =
  /^(?:generate|_?sample|greedy_search|beam_search|_beam_search|contrastive_search|chat|stream_chat|txt2img|img2img|process_images|process_images_inner|sample_[a-z0-9_]{1,30})$/;
const TRAINING_FN = /^(?:backward|step|training_step|train_step|_inner_training_loop|train|fit|run_backward)$/;

/** The OOM's traceback (above or below its message) runs through inference and no training step. */
export function isGenerating(log: LogText, oomLine: number): boolean {
  let generating = false;
  const scan = (from: number, to: number, step: number) => {
    for (let l = from, n = 0; step > 0 ? l <= to : l >= to; l += step) {
      const m = FRAME.exec(log.line(l).slice(0, 600));
      if (!m) continue;
      // torch's grad-mode decorator (autograd/grad_mode.py decorate_context) wraps a no_grad function, not backward.
      const decorator = m[2] === 'decorate_context' && /autograd[\\/]grad_mode\.py$/.test(m[1]);
      if (TRAINING_FN.test(m[2]) || (!decorator && /autograd[\\/]|optim[\\/]/.test(m[1]))) return false;
      if (GENERATION_FILE.test(m[1]) || GENERATION_FN.test(m[2])) generating = true;
      if (++n >= 60) break;
    }
    return true;
  };
  if (!scan(oomLine - 1, Math.max(0, oomLine - 150), -1)) return false;
  if (!scan(oomLine + 1, Math.min(log.lineCount - 1, oomLine + 150), 1)) return false;
  return generating;
}

// The source line printed under the innermost frame says what ran when the frames themselves were
// cut from the paste: Module.to's convert, Adam's state update, autograd's backward.
const CODE_LINE_PHASES: [RegExp, OomPhase][] = [
  [/torch\._C\._cuda_init\(\)|torch\._C\._cuda_setDevice\(|^\s{0,12}torch\.cuda\.(?:set_device|init)\(/, 'context'],
  [/return t\.to\(\s?device, dtype if t\.is_floating_point\(\)|param_applied = fn\(param\)|return t\.cuda\(device\)|lambda t: t\.cuda\(device\)/, 'load'],
  [/\bexp_avg(?:_sq)?\b|\bmax_exp_avg_sq\b|torch\._foreach_(?:mul|add|addcmul|addcdiv|sqrt|lerp)_?\(/, 'optimizer'],
  [/Variable\._execution_engine\.run_backward\(|_engine_run_backward\(|^\s{0,12}[\w.[\]]{1,60}\.backward\(/, 'backward'],
];

function codeLinePhase(log: LogText, oomLine: number): OomPhase | undefined {
  for (let l = oomLine - 1; l >= 0 && l >= oomLine - 2; l--) {
    const line = log.line(l).slice(0, 600);
    if (/^\s{0,8}File "/.test(line)) break;
    for (const [re, phase] of CODE_LINE_PHASES) if (re.test(line)) return phase;
  }
  return undefined;
}

/** Module.to / .cuda / .half move the model's weights: a load, not a step. */
const MODULE_FILE = /nn[\\/]modules[\\/]module\.py$/;
const NN_MODULES_FILE = /torch[\\/]nn[\\/]modules[\\/]\w{1,40}\.py$/;
const MODULE_MOVES = new Set(['to', 'cuda', 'half', 'bfloat16', 'float', 'type']);

/** frames[0] is the innermost; the five innermost decide. */
function phaseOf(frames: { file: string; fn: string }[]): OomPhase | undefined {
  for (const f of frames.slice(0, 5)) {
    if (CONTEXT_FRAMES.test(f.fn) && (CUDA_INIT_FILE.test(f.file) || /^(?:set_device|_lazy_init|_cuda_init)$/.test(f.fn))) return 'context';
    if (f.fn === 'backward' || (/autograd[\\/]/.test(f.file) && !(f.fn === 'decorate_context' && /grad_mode\.py$/.test(f.file)))) return 'backward';
    if (OPTIMIZER_FRAMES.test(f.fn) && /optim/.test(f.file)) return 'optimizer';
    if (LOAD_FRAMES.test(f.fn) || (MODULE_MOVES.has(f.fn) && MODULE_FILE.test(f.file))) return 'load';
    // A torch.nn layer's constructor (its __init__ or reset_parameters) allocates the parameters of a model still
    // being built, on the GPU when that is the default device: no batch exists yet.
    if ((f.fn === '__init__' || f.fn === 'reset_parameters') && NN_MODULES_FILE.test(f.file)) return 'load';
    if (f.fn === 'forward' || f.fn === '_call_impl' || f.fn === '_wrapped_call_impl') return 'forward';
  }
  return undefined;
}
