// What the run was doing when it failed, read from the traceback's frames: each phase has its own
// levers (issue 23). Frames are a framework's fixed format ("File "…", line N, in NAME", IPython's
// "File …/x.py:N, in Class.name(", rich's "x.py:N in name"), so the patterns read function names and
// module paths, never a thread's wording. Every pattern is anchored and bounded (linear).
import type { LogText } from './normalize.js';
import { evalWorkAfterForward } from './levers/eval-frames.js';

export type Phase = 'load' | 'checkpoint' | 'forward' | 'backward' | 'optimizer' | 'eval' | 'generate' | 'data' | 'collective';

export interface PhaseVerdict {
  phase: Phase;
  /** The frame (or log line) that showed it, as the reply quotes it: "trainer_pt_utils.py, in nested_concat". */
  frame: string;
  /** The evaluation's own code failed below it with no model call in between (levers/eval-over-set.ts): the frame, quoted. */
  evalOverSet?: string;
  /** Evaluation only: whose loop it is. HF Trainer and Lightning run it without gradients already. */
  evalLoop?: 'hf' | 'lightning' | 'plain';
  /** HF Trainer was concatenating every batch's predictions on the GPU (nested_concat). */
  gathersPredictions?: boolean;
  /** Evaluation ran generate() (Seq2SeqTrainer's predict_with_generate): beams and new tokens are its memory. */
  evalGenerates?: boolean;
  /** A script's own evaluation failed on a line that concatenates or collects outputs (torch.cat, .append): kept across steps. */
  evalCollects?: boolean;
  /** Keras / TensorFlow ran the evaluation (no autograd graph to drop: its batch_size is the lever). */
  evalKeras?: boolean;
  /** The report says the forward ran with gradients on ("without torch.no_grad()"): the quoted sentence. */
  gradsOnStated?: string;
  /** The report says the evaluation fed the whole evaluation set as one batch. */
  evalWholeSet?: boolean;
  /** The sentence at the failure says the evaluation ran at batch 1. */
  evalBatchOne?: boolean;
  /** The frames run the evaluation under a grad-mode decorator (@torch.no_grad()): the decorator's frame, quoted. */
  noGradFrame?: string;
}

export interface Frame {
  file: string;
  fn: string;
  /** The source line the traceback prints under the frame, when the paste kept it. */
  code?: string;
}

// The standard format; IPython 8 ("File /x/trainer.py:2113, in Trainer.evaluate(self, …)"); IPython 7
// ("/x/module.py in _call_impl(self, …)"); rich ("│ /x/offload.py:105 in weighs_to_device │").
const FRAME_STD = /^\s{0,12}File "([^"\n]{1,400})", line \d{1,7}, in ([\w<>.]{1,80})/;
const FRAME_IPY8 = /^\s{0,12}File ([^\s,"]{1,400}\.py):\d{1,7}, in ([\w<>.]{1,80})/;
const FRAME_IPY7 = /^\s{0,12}([^\s"]{1,400}\.py) in ([\w<>]{1,80})\(/;
const FRAME_RICH = /^[\s│|]{0,12}([^\s│|"]{1,400}\.py):\d{1,7} in ([\w<>]{1,80})/;
const TRACEBACK_HEAD = /^\s{0,4}(?:Traceback \(most recent call last\)|-{20,}\s*$)/;
const MAX_LINE = 600;

/** The frame a line shows (the function's last dotted part: "Trainer.evaluate" is "evaluate"). */
export function frameOf(line: string): Frame | undefined {
  const text = line.length > MAX_LINE ? line.slice(0, MAX_LINE) : line;
  const m = FRAME_STD.exec(text) ?? FRAME_IPY8.exec(text) ?? FRAME_IPY7.exec(text) ?? FRAME_RICH.exec(text);
  if (!m) return undefined;
  const dot = m[2].lastIndexOf('.');
  return { file: m[1], fn: dot === -1 ? m[2] : m[2].slice(dot + 1) };
}

// A source line under a frame: indented code, not another frame, a caret line or the message.
const CODE_LINE = /^\s{2,16}(?!File |Traceback|\^|~)\S/;

/** The frame with the source line printed under it (the line at `next`, when it is code). */
function withCode(f: Frame, log: LogText, next: number, end: number): Frame {
  if (next >= end || next >= log.lineCount) return f;
  const line = log.line(next).slice(0, MAX_LINE);
  return CODE_LINE.test(line) && !frameOf(line) ? { ...f, code: line.trim() } : f;
}

/**
 * The frames of the traceback that ends at `errorLine`, innermost first. A paste that puts the message
 * before its traceback is read below it (then the last frames are the innermost).
 */
export function tracebackFrames(log: LogText, errorLine: number): Frame[] {
  const above: Frame[] = [];
  for (let l = errorLine - 1; l >= 0 && l >= errorLine - 200 && above.length < 80; l--) {
    const line = log.line(l);
    const f = frameOf(line);
    if (f) above.push(withCode(f, log, l + 1, errorLine));
    else if (TRACEBACK_HEAD.test(line.slice(0, 200))) break;
  }
  if (above.length) return above;
  const below: Frame[] = [];
  for (let l = errorLine + 1; l < log.lineCount && l <= errorLine + 200 && below.length < 80; l++) {
    const f = frameOf(log.line(l));
    if (f) below.push(withCode(f, log, l + 1, log.lineCount));
  }
  return below.reverse();
}

type Marker = Phase | 'eval_gather' | 'train';

// HF Trainer's gathering of predictions: every batch's logits are concatenated on the device.
const EVAL_GATHER_FN = /^(?:nested_concat|torch_pad_and_concatenate|_nested_gather|gather_function)$/;
// Evaluation loops: HF Trainer, Lightning, Keras, and the names training scripts give their own loops; detectron2's
// inference_on_dataset and a script's own inference loop (generate() below it is generation: the innermost marker decides).
const EVAL_FN =
  /^(?:evaluate|evaluation_loop|prediction_loop|prediction_step|_evaluation_loop|_evaluation_step|evaluation_step|validation_step|validation_epoch_end|on_validation_epoch_end|_run_sanity_check|test_step|predict_step|validate|validation|val_step|valid_step|eval_step|eval_epoch|val_epoch|valid_epoch|validate_epoch|validation_epoch|evaluate_epoch|run_validation|run_eval|run_evaluation|eval_one_epoch|val_one_epoch|evaluate_one_epoch|_run_validation|validation_loop|run_validation_epoch|inference_on_dataset|inference|run_inference|do_inference|do_predict|run_predict|predict_epoch|predict_one_epoch)$/;
// A script's own evaluation function by the words of its name ("evaluate_model", "do_eval", "val_one_epoch",
// "validate_and_log"): one of its underscore-separated words is an evaluation word. "test" is left out: pytest
// names its functions test_*.
const EVAL_NAME_WORD = /(?:^|_)(?:eval|evaluate|evaluation|evaluating|val|valid|validate|validation|validating|inference)(?:_|$)/i;
// A script's own test function ("def test(model, loader)", "test_epoch", "run_test", "model_test"): evaluation,
// except under pytest or unittest (phaseFromFrames checks the traceback for them). A name that begins "test_" and
// goes on to say what it tests ("test_forward_large_batch") is pytest's naming even where the paste cut the runner's
// frames; only the loop's own units (test_epoch, test_step, test_loop) count there.
const TEST_NAME_WORD = /^(?:test|testing)$|_(?:test|testing)(?:_|$)|^test_(?:one_)?(?:epoch|step|loop|batch)s?$/i;
const TEST_RUNNER_FILE = /(?:^|[\\/])(?:_pytest|pytest|unittest)[\\/]|(?:^|[\\/])(?:conftest|pytest)\.py$/;
// Keras / TensorFlow's own evaluation and prediction entry points (model.evaluate / predict and the compiled
// functions they run, the Estimator's evaluate), read only in their packages' files.
const TF_EVAL_FN =
  /^(?:evaluate|predict|predict_on_batch|test_on_batch|predict_function|test_function|predict_step|test_step|predict_loop|test_loop|evaluate_generator|predict_generator|_evaluate_model|_evaluate_once|_evaluate_build_graph)$/;
// Keras / tf.keras and TensorFlow itself (the Estimator's evaluate, session runs): evaluation runs batch by batch
// without a graph kept for backward.
const KERAS_FILE = /(?:^|[\\/])(?:keras|tf_keras)[\\/]|tensorflow[\\/]python[\\/]/;
const TF_FILE = KERAS_FILE;
// An evaluation script by its name ("eval_image.py", "evaluate_retrieval.py", "run_eval.py"; not test_*.py: pytest's), and a
// metrics module ("metrics/precision_recall.py", "metric_utils.py"): what runs there is the evaluation's scoring.
const EVAL_FILE =
  /(?:^|[\\/])(?:eval|evaluate|evaluation)_\w{1,40}\.py$|(?:^|[\\/])\w{1,40}_(?:eval|evaluate|evaluation)\.py$|[\\/]metrics?[\\/][\w/\\]{0,80}\.py$|(?:^|[\\/])metrics?(?:_\w{1,30})?\.py$|(?:^|[\\/])(?:val|eval|evaluate|validate|validation|validator)\.py$|detectron2[\\/]evaluation[\\/]evaluator\.py$|loops[\\/](?:[\w]{1,30}[\\/])?(?:evaluation_loop|evaluation_epoch_loop|prediction_loop)\.py$/;
const GENERATE_FILE = /transformers[\\/]generation[\\/]|generation_utils\.py$|vllm[\\/](?:worker|v1[\\/]worker|engine|v1[\\/]engine|executor)[\\/]/;
const GENERATE_FN =
  /^(?:generate|_sample|greedy_search|beam_search|_beam_search|sample|contrastive_search|_assisted_decoding|profile_run|determine_num_available_blocks|determine_available_memory|_initialize_kv_caches|initialize_cache|_dummy_run|_dummy_sampler_run|capture_model)$/;
const LOAD_FN =
  /^(?:from_pretrained|_load_pretrained_model|_from_config|from_config|_load_state_dict_into_meta_model|set_module_tensor_to_device|dispatch_model|load_checkpoint_and_dispatch|load_checkpoint_in_model|to_empty|load_model|load_weights|_move_model_to_device|post_init|init_weights)$/;
const TF_VARIABLES_INIT_CODE = /\b(?:global_variables_initializer|initialize_all_variables|local_variables_initializer)\(\)/;
const MODULE_FILE = /nn[\\/]modules[\\/]module\.py$/;
const MODULE_MOVES = /^(?:to|cuda|half|bfloat16|float|type|_apply|convert)$/;
const CHECKPOINT_FILE = /torch[\\/]serialization\.py$/;
// transformers' own checkpoint loaders (the Trainer's best-model reload and resume, sharded checkpoints).
const CHECKPOINT_LOADER_FN = /^(?:load_sharded_checkpoint|_load_best_model|_load_from_checkpoint|_load_rng_state)$/;
const CHECKPOINT_FN = /^(?:load|_load|_legacy_load|persistent_load|restore_location|default_restore_location|_cuda_deserialize|load_tensor|_deserialize)$/;
const DATA_FILE = /torch[\\/]utils[\\/]data[\\/]|torch[\\/]multiprocessing[\\/]reductions\.py$/;
const COLLECTIVE_FN =
  /^(?:init_process_group|barrier|all_reduce|all_gather|all_gather_into_tensor|all_gather_object|broadcast|broadcast_object_list|reduce_scatter|reduce_scatter_tensor|_verify_param_shape_across_processes|_verify_params_across_processes|_sync_module_states|_sync_params_and_buffers|new_group|_new_process_group_helper)$/;
const DDP_FILE = /parallel[\\/]distributed\.py$/;
const OPTIMIZER_FN = /^(?:_single_tensor_adamw?|_multi_tensor_adamw?|_fused_adamw?|adamw?|_init_group|step)$/;
const BACKWARD_FN = /^(?:backward|_engine_run_backward|run_backward)$/;
// DeepSpeed ZeRO builds and steps its optimizer state in runtime/zero/ (stage_1_and_2.py, stage3.py): an OOM there is
// the optimizer state's, before or after the batch's activations.
const ZERO_OPTIMIZER_FN = /^(?:initialize_optimizer_states|_create_fp32_partitions|_setup_for_real_optimizer|_optimizer_step|step)$/;
const ZERO_FILE = /deepspeed[\\/]runtime[\\/]zero[\\/]/;
// torch's grad-mode decorator (@torch.no_grad(), @torch.inference_mode(): autograd/grad_mode.py in torch < 2.0,
// utils/_contextlib.py after) wraps the function below it: a forward without gradients, not autograd's backward.
export const GRAD_MODE_DECORATOR = (f: Frame) => f.fn === 'decorate_context' && /(?:autograd[\\/]grad_mode|utils[\\/]_contextlib)\.py$/.test(f.file);
const AUTOGRAD_FILE = (f: Frame) => /autograd[\\/]/.test(f.file) && !GRAD_MODE_DECORATOR(f);
const FORWARD_FN = /^(?:forward|_call_impl|_wrapped_call_impl)$/;
const TRAIN_FN = /^(?:training_step|train_step|_inner_training_loop|train_one_epoch|train_epoch|_run_train|fit_loop|optimizer_step)$/;

// A torch.distributed collective called on the frame's line: "torch_distrib.init_process_group(", "dist.barrier()".
const COLLECTIVE_CALL_CODE =
  /\b(?:dist|distributed|torch_distrib|torch\.distributed)\.(?:init_process_group|barrier|all_reduce|all_gather|broadcast|reduce_scatter)\(/;
// The source line under a frame calls a framework's evaluation entry point by its API name (a paste that cut the
// frames inside it): HF Trainer's evaluate/predict, Lightning's validate/test/predict, a script's own evaluate().
const EVAL_CALL_CODE =
  /\b(?:trainer|model|runner|learner|evaluator|validator)\.(?:evaluate|validate|predict|test)\(|^(?:[\w.[\], ]{1,60}=\s{0,2})?(?:evaluate|validate|run_validation|run_eval|inference_on_dataset)\(/;
// The innermost frame's source line calls a model loader (a traceback cut just below it, as pasted excerpts often are:
// LLaMA-Factory's "model = load_model(tokenizer, model_args, ...)" in run_sft, a script's "model = X.from_pretrained(").
const LOAD_CALL_CODE =
  /^(?:[\w.[\], ]{1,60}=\s{0,2})?(?:[\w.]{1,80}\.)?(?:from_pretrained|load_model|load_pretrained_model|load_checkpoint_and_dispatch|dispatch_model|load_checkpoint_in_model|from_config)\(/;
/** The loop an evaluation call names: trainer.evaluate() is HF Trainer's; validate/test are Lightning's; predict goes with the frames. */
function evalLoopOfCall(code: string, frames: Frame[]): PhaseVerdict['evalLoop'] {
  const loop = evalLoopOf(frames);
  if (loop !== 'plain') return loop;
  if (/\btrainer\.evaluate\(/.test(code)) return 'hf';
  if (/\btrainer\.(?:validate|test)\(/.test(code)) return 'lightning';
  return 'plain';
}

/** What one frame says the run was doing ('forward' is the weakest: every phase runs forwards). */
function markerOf(f: Frame): Marker | undefined {
  if (EVAL_GATHER_FN.test(f.fn) && /trainer/.test(f.file)) return 'eval_gather';
  if (TF_EVAL_FN.test(f.fn) && TF_FILE.test(f.file)) return 'eval';
  if (CHECKPOINT_FILE.test(f.file) && CHECKPOINT_FN.test(f.fn)) return 'checkpoint';
  if (f.fn === 'load_state_dict' || f.fn === '_load_from_state_dict' || CHECKPOINT_LOADER_FN.test(f.fn)) return 'checkpoint';
  if (f.code && /^(?:[\w.[\], ]{1,60}=\s{0,2})?torch\.load\(/.test(f.code)) return 'checkpoint';
  // TensorFlow 1.x creating the variables in a session (sess.run(tf.global_variables_initializer()), the older
  // initialize_all_variables, tf.compat.v1's): the weights and optimizer slots are allocated, no batch has run yet.
  if (f.code && TF_VARIABLES_INIT_CODE.test(f.code)) return 'load';
  if (DATA_FILE.test(f.file)) return 'data';
  if (COLLECTIVE_FN.test(f.fn) || (DDP_FILE.test(f.file) && f.fn === '__init__')) return 'collective';
  if (GRAD_MODE_DECORATOR(f)) return undefined;
  if (BACKWARD_FN.test(f.fn) || AUTOGRAD_FILE(f)) return 'backward';
  if ((OPTIMIZER_FN.test(f.fn) && /optim/.test(f.file)) || (ZERO_OPTIMIZER_FN.test(f.fn) && ZERO_FILE.test(f.file))) return 'optimizer';
  if (LOAD_FN.test(f.fn) || (MODULE_MOVES.test(f.fn) && MODULE_FILE.test(f.file))) return 'load';
  if (GENERATE_FN.test(f.fn) && (f.fn === 'generate' || GENERATE_FILE.test(f.file))) return 'generate';
  if (EVAL_FN.test(f.fn) || EVAL_FILE.test(f.file) || EVAL_NAME_WORD.test(f.fn)) return 'eval';
  if (TRAIN_FN.test(f.fn)) return 'train';
  if (FORWARD_FN.test(f.fn)) return 'forward';
  return undefined;
}

const baseName = (file: string) => file.slice(Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\')) + 1);
const quote = (f: Frame) => `${baseName(f.file)}, in ${f.fn}`;

// HF Trainer's gathering written in its own loop (transformers < 4.2 prediction_loop: "preds = torch.cat(...)").
const GATHER_CODE = /\bnested_concat\(|\btorch\.cat\(|\bnested_gather\(/;
// A script's own loop collecting every batch's outputs: concatenated, stacked or appended.
const COLLECT_CODE = /\btorch\.(?:cat|stack|vstack|hstack|concat)\(|\.append\(|\.extend\(|\bnp\.concatenate\(/;

function evalLoopOf(frames: Frame[]): PhaseVerdict['evalLoop'] {
  if (frames.some((f) => /transformers[\\/]trainer/.test(f.file) || /^(?:evaluation_loop|prediction_step|prediction_loop)$/.test(f.fn))) return 'hf';
  if (frames.some((f) => /(?:^|[\\/])(?:pytorch_)?lightning[\\/]/.test(f.file))) return 'lightning';
  return 'plain';
}

/**
 * The phase from frames, innermost first: the innermost frame that says more than "a forward ran"
 * decides (an evaluation that calls the model is evaluation; a backward inside training is backward).
 */
export function phaseFromFrames(frames: Frame[]): PhaseVerdict | undefined {
  let forward: Frame | undefined;
  const underTestRunner = frames.some((f) => TEST_RUNNER_FILE.test(f.file));
  for (const f of frames) {
    const marker = markerOf(f) ?? (!underTestRunner && TEST_NAME_WORD.test(f.fn) ? 'eval' : undefined);
    if (!marker && f === frames[0] && f.code && LOAD_CALL_CODE.test(f.code)) return { phase: 'load', frame: `${quote(f)}: ${f.code.slice(0, 100)}` };
    // The innermost frame's line calls a collective by its torch.distributed name (the frames inside it cut): the collective.
    if (!marker && f === frames[0] && f.code && COLLECTIVE_CALL_CODE.test(f.code))
      return { phase: 'collective', frame: `${quote(f)}: ${f.code.slice(0, 100)}` };
    if (!marker) {
      // No frame name says it, but the line the frame ran calls an evaluation entry point: the run was evaluating.
      if (f.code && EVAL_CALL_CODE.test(f.code)) {
        const verdict: PhaseVerdict = { phase: 'eval', frame: `${quote(f)}: ${f.code.slice(0, 100)}`, evalLoop: evalLoopOfCall(f.code, frames) };
        if (frames.some((g) => KERAS_FILE.test(g.file))) verdict.evalKeras = true;
        return verdict;
      }
      continue;
    }
    if (marker === 'forward') {
      forward ??= f;
      continue;
    }
    if (marker === 'train') return { phase: 'forward', frame: quote(forward ?? f) };
    if (marker === 'eval_gather') return { phase: 'eval', frame: quote(f), evalLoop: 'hf', gathersPredictions: true };
    if (marker === 'eval') return evalVerdict(frames, f, forward);
    // Seq2SeqTrainer's prediction_step calls generate(): the Trainer's evaluation, with generation's own knobs.
    if (marker === 'generate') {
      const hfEval = frames.find((g) => markerOf(g) === 'eval' && evalLoopOf([g]) === 'hf');
      if (hfEval) return { phase: 'eval', frame: quote(hfEval), evalLoop: 'hf', evalGenerates: true };
      // A script's own evaluation function that calls generate() (evaluate.py's evaluate(), a val loop): generation
      // inside that evaluation, under generate's own no_grad. Not a Keras / TensorFlow file's, nor a generic inference one.
      const ownEval = frames.find(
        (g) => markerOf(g) === 'eval' && evalLoopOf([g]) === 'plain' && !TF_FILE.test(g.file) && !/^(?:inference|run_inference|do_inference)$/.test(g.fn),
      );
      if (ownEval)
        return {
          phase: 'eval',
          frame: quote(ownEval),
          evalLoop: 'plain',
          evalGenerates: true,
          noGradFrame: `${quote(f)} (generate() runs under torch.no_grad())`,
        };
    }
    // Reading a shard inside from_pretrained is the model load (its levers are dtype and placement).
    if (marker === 'checkpoint') {
      const loader = frames.find((g) => markerOf(g) === 'load');
      if (loader) return { phase: 'load', frame: quote(loader) };
    }
    return { phase: marker, frame: quote(f) };
  }
  return forward ? { phase: 'forward', frame: quote(forward) } : undefined;
}

/** The evaluation verdict at its innermost eval frame `f`; `forward`: a model call below it, if any. */
function evalVerdict(frames: Frame[], f: Frame, forward: Frame | undefined): PhaseVerdict {
  const loop = evalLoopOf(frames);
  const verdict: PhaseVerdict = { phase: 'eval', frame: quote(f), evalLoop: loop };
  // The failing line itself gathers (no model call under it): HF's own loop concatenating, or a script collecting.
  if (!forward && f.code) {
    if (loop === 'hf' && GATHER_CODE.test(f.code)) verdict.gathersPredictions = true;
    else if (loop === 'plain' && COLLECT_CODE.test(f.code)) verdict.evalCollects = true;
  }
  // The evaluation's outermost frame: its script's or loop's, with everything it ran inside it (a scoring function, a metric).
  let outer = frames.indexOf(f);
  for (let i = frames.length - 1; i > outer; i--) if (markerOf(frames[i]) === 'eval') outer = i;
  const work = forward ? undefined : evalWorkAfterForward(frames, outer);
  if (work) verdict.evalOverSet = work;
  if (frames.some((g) => KERAS_FILE.test(g.file))) verdict.evalKeras = true;
  const decorator = frames.find(GRAD_MODE_DECORATOR);
  if (decorator) verdict.noGradFrame = `${quote(decorator)} (@torch.no_grad() / inference_mode())`;
  return verdict;
}

// Lines frameworks print when a phase starts, for pastes without frames: Lightning's progress bar,
// HF Trainer's banner, vLLM's memory profiling.
// Also Lightning's test and predict bars, tqdm bars an evaluation loop names, detectron2's inference_on_dataset
// and mmengine's val/test loop lines.
const LIGHTNING_BAR = /^\s{0,4}(?:Validation|Validating|Sanity Checking|Testing|Predicting)(?: DataLoader \d{1,3})?:/;
const PHASE_LINES: [RegExp, Phase][] = [
  [LIGHTNING_BAR, 'eval'],
  [/^\s{0,4}(?:Evaluating|Evaluation|Eval|Validating|Validation|Valid|Val|Testing|Test)\s{0,3}(?:\[[^\]\n]{0,20}\])?:?\s{0,3}\d{1,3}%\|/, 'eval'],
  [/\bStart inference on \d{1,9} (?:batches|images)|\bInference done \d{1,9}\/\d{1,9}\.|\bEpoch\((?:val|test)\)\s{0,3}\[/, 'eval'],
  [/\*{3,} Running (?:Evaluation|Prediction) \*{3,}/, 'eval'],
  // Ultralytics' validation table header (YOLOv5 "Class Images Labels P R mAP@.5", YOLOv8+ "Class Images Instances Box(P").
  [/^\s{0,24}Class\s{1,24}Images\s{1,24}(?:Labels|Instances)\s/, 'eval'],
  [/Memory profiling takes [\d.]{1,10} seconds|init engine \(profile, create kv cache, warmup model\)/, 'generate'],
];

// Training's own progress lines (mmengine's Epoch(train), Lightning's "Epoch 3:" bar, HF Trainer's loss dict, an
// Ultralytics epoch row "  2/100  3.52G"): an evaluation line above one of them is over.
const TRAINING_LINE = /\bEpoch\(train\)|^\s{0,4}Epoch \d{1,5}:\s{0,3}\d{1,3}%|^\s{0,4}\{'loss':|^\s{0,12}\d{1,5}\/\d{1,5}\s{1,12}\d{1,4}(?:\.\d{1,3})?G\s/;

// The source line a traceback prints under its innermost frame, when a paste keeps only that line.
const SOURCE_LINES: [RegExp, Phase][] = [
  [/\.from_pretrained\(|\.from_config\(|\bfrom_pretrained\(/, 'load'],
  [/\btorch\.load\(/, 'checkpoint'],
];

/** Whose evaluation a phase line is: HF Trainer's banner, Lightning's DataLoader bars, else a script's or another framework's loop. */
function evalLoopOfLine(line: string): PhaseVerdict['evalLoop'] {
  if (/Running (?:Evaluation|Prediction)/.test(line)) return 'hf';
  return LIGHTNING_BAR.test(line) ? 'lightning' : 'plain';
}

/**
 * The phase the paste's last traceback shows when the paste cut it before its error line (a failure told in words
 * above a traceback excerpt): its innermost frames still say what ran.
 */
export function cutTracebackPhase(log: LogText): PhaseVerdict | undefined {
  // Its last frame (an excerpt may start at the frames, without the "Traceback" head): the frames above it, innermost first.
  for (let l = log.lineCount - 1; l >= 0 && l >= log.lineCount - MAX_TRACEBACK_SCAN; l--) {
    // (Up to the line after it: the source line the last frame printed is what it was running.)
    if (frameOf(log.line(l).slice(0, MAX_LINE))) return phaseFromFrames(tracebackFrames(log, Math.min(l + 2, log.lineCount)));
  }
  return undefined;
}
const MAX_TRACEBACK_SCAN = 2000;

/** The phase of the failure whose message is at `errorLine`, from its traceback, else from the lines just before it. */
export function failurePhase(log: LogText, errorLine: number): PhaseVerdict | undefined {
  const fromFrames = phaseFromFrames(tracebackFrames(log, errorLine));
  if (fromFrames) return fromFrames;
  for (let l = errorLine - 1; l >= 0 && l >= errorLine - 2; l--) {
    const line = log.line(l).slice(0, MAX_LINE);
    for (const [re, phase] of SOURCE_LINES) if (re.test(line)) return { phase, frame: line.trim() };
  }
  for (let l = errorLine - 1; l >= 0 && l >= errorLine - 30; l--) {
    const line = log.line(l).slice(0, 300);
    // A training step's progress line after the evaluation's: the run had gone back to training when it failed.
    if (TRAINING_LINE.test(line)) return undefined;
    for (const [re, phase] of PHASE_LINES) {
      if (re.test(line)) return { phase, frame: line.trim(), ...(phase === 'eval' ? { evalLoop: evalLoopOfLine(line) } : {}) };
    }
  }
  // The exception raised from the OOM names the step it broke (a tool's "Exception: Failed to load SDXL model",
  // "ERROR:Failed to load the model."): the allocation was part of a model load.
  for (let l = errorLine + 1; l < log.lineCount && l <= errorLine + 20; l++) {
    const line = log.line(l).slice(0, 300);
    if (LOAD_FAILED_RAISED.test(line)) return { phase: 'load', frame: line.trim() };
  }
  return undefined;
}
const LOAD_FAILED_RAISED = /^\s{0,8}(?:[\w.]{0,60}(?:Error|Exception)|ERROR)\s{0,2}:\s{0,3}(?:Failed|Unable) to load (?:the |a )?[\w.-]{0,40} ?model\b/i;

/** Copies a verdict onto the facts the rules and fixes read. */
export function withPhase(
  // The incident's phase and evaluation parts as a phase fills them (structurally: the incident's part modules import this file).
  incident: {
    phase: { name?: Phase; phaseFrame?: string; evalLoop?: PhaseVerdict['evalLoop']; gathersPredictions?: boolean };
    eval: Pick<PhaseVerdict, 'evalGenerates' | 'evalCollects' | 'evalKeras' | 'gradsOnStated' | 'evalWholeSet' | 'evalBatchOne' | 'evalOverSet'> & {
      noGradShown?: string;
    };
  },
  verdict: PhaseVerdict | undefined,
): void {
  if (!verdict) return;
  incident.phase.name = verdict.phase;
  incident.phase.phaseFrame = verdict.frame;
  if (verdict.evalLoop) incident.phase.evalLoop = verdict.evalLoop;
  if (verdict.gathersPredictions) incident.phase.gathersPredictions = true;
  if (verdict.evalGenerates) incident.eval.evalGenerates = true;
  if (verdict.evalCollects) incident.eval.evalCollects = true;
  if (verdict.evalKeras) incident.eval.evalKeras = true;
  if (verdict.gradsOnStated) incident.eval.gradsOnStated = verdict.gradsOnStated;
  if (verdict.evalWholeSet) incident.eval.evalWholeSet = true;
  if (verdict.evalBatchOne) incident.eval.evalBatchOne = true;
  if (verdict.evalOverSet) incident.eval.evalOverSet = verdict.evalOverSet;
  if (verdict.noGradFrame) incident.eval.noGradShown ??= verdict.noGradFrame;
}
