// The phase the reporter names, for pastes whose traceback shows no frame that says it (issue 23): "CUDA
// out of memory during validation", "trainer.evaluate() ... runs out of memory", "验证时显存不足". Frames
// decide when they exist (phase.ts); a sentence is weaker evidence and is read only when they say nothing.
// The sentence must name the failure and the phase together: a run that fails "after validation" or "when
// the second epoch starts" failed in training. Whose loop it is comes from the framework the paste names
// (HF Trainer's API, Lightning, Keras); what the loop keeps from the sentence ("appended to a list",
// "concatenated on the GPU"). Every pattern is bounded and applied per line: linear in the paste's length.
import type { PhaseVerdict } from '../phase.js';
import { boundedLines } from '../lines.js';

const MAX_LINES = 400;
const MAX_LINE = 600;
const QUOTE_CHARS = 140;

// The failure named in words or by its message.
// TensorFlow's exception names the failure too ("ResourceExhaustedError in predict_function").
// A shortage said in words counts too ("insufficient GPU memory"): "GPU memory not enough", "not enough GPU memory", "exceed the gpu memory"; so does
// the card said to be used up whole ("it eats up all the GPU memory", "takes all of the VRAM", "fills the whole GPU memory").
const FAILURE =
  /\b(?:eats?|ate|eating|takes?|took|taking|uses?|used|using|fills?|filled|filling|consumes?|consumed|consuming|occup(?:y|ies|ied|ying))\s{1,3}(?:up\s{1,3})?(?:all|the\s{1,3}(?:whole|entire|full))\s{1,3}(?:of\s{1,3})?(?:the\s{1,3}|my\s{1,3})?(?:GPU|CUDA|VRAM|video)(?:\s{1,3}(?:memory|RAM))?\b|out of memory|\bOOM\b|OutOfMemory|memory (?:error|exception)|CUDA error|ResourceExhausted|RESOURCE_EXHAUSTED|\bresource\s{1,3}exhausted\b|显存(?:不足|不够|爆|溢出|占满|撑不住|扛不住|装不下|放不下)|爆显存|内存不足|\bmemory\s{1,3}(?:is\s{1,3})?not\s{1,3}enough\b|\bnot\s{1,3}enough\s{1,3}(?:GPU\s{1,3}|CUDA\s{1,3}|VRAM\s{1,3})?memory\b|\bexceed(?:s|ed|ing)?\s{1,3}(?:the\s{1,3})?(?:GPU|CUDA|device)\s{1,3}memory\b|\binsufficient\s{1,3}(?:GPU\s{1,3}|CUDA\s{1,3}|VRAM\s{1,3}|video\s{1,3})?memory\b/i;
// The phase named at the failure: "during / in / while / on / when" evaluation, validation, eval, predict(ion).
// "after validation" and "before validation" are left out: the failure is then in the training around it.
// Testing is evaluation too: "while testing", "in test mode", "on the test set", "during the test phase", "an
// accuracy test"; so is running the repository's own evaluation script ("running eval.py", "python test.py"), a
// sentence that evaluates ("when attempting to evaluate the models", "trying to predict"), and Keras's compiled
// evaluation functions by name (predict_function, test_function). "unit test" and pytest are not: the words must
// sit at the failure (same line) with a preposition or verb that places it there.
// The evaluation as the failure's subject counts too: "Validation out of memory", "the validation would meet out of memory".
const EVAL_WORDS =
  /\b(?:during|in|while|on|upon|when|at)\s{1,3}(?:(?:computing|running|doing|do|the|an?|my|first|accuracy|model)\s{1,3}){0,3}(?:validation|validating|evaluation|evaluating|eval|predicting|prediction|testing|test(?:\s{1,3}(?:mode|phase|stage|set|data|time|loop|step))?)(?:_step|_epoch_end|_loop)?\b|\b(?:when|while)\s{1,3}(?:I\s{1,3})?(?:run(?:ning)?\s{1,3})?(?:validat|evaluat)\w{0,4}\b|\b(?:validation|evaluation|eval|valid|val|test)\s{1,3}(?:step|loop|phase|stage|epoch|pass|mode)\b|\b(?:attempt(?:ing)?|try(?:ing)?|tried)\s{1,3}to\s{1,3}(?:evaluate|validate|test|predict)\b|\b(?:run(?:ning)?|python3?)\s{1,3}(?:the\s{1,3})?(?:[\w./-]{0,40}[\\/])?(?:eval|evaluate|evaluation|test|val|validate|predict|demo)\.py\b|\b(?:predict|test)_function\b|\btrainer\.(?:evaluate|predict)\(\)|(?:验证|评估|评测|预测|测试|推理)(?:时|的时候|阶段|过程|集上)|\b(?:validation|validating|evaluation|evaluating|eval|inference|prediction|predicting|testing)\s{0,2}(?:时|的时候|阶段|过程)|\b(?:running|calling|call|run|using)\s{1,3}(?:the\s{1,3})?(?:[\w]{1,20}\.){0,4}(?:predict|evaluate)(?:\(\))?(?=\s|$|[.,;:])|\b(?:validation|evaluation|eval|testing)\s{1,3}(?:(?:would|will|always|still|also|then)\s{1,3})?(?:(?:meets?|hits?|gets?|runs?|ran|goes|went|causes?|throws?|gives?)\s{1,3}(?:an?\s{1,3}|into\s{1,3})?)?(?:OOM|out[ -]of[ -]memory)\b/i;
// HF Trainer's evaluation banner ("***** Running Evaluation *****") named in a sentence ("一到Running Evaluation，就爆显存"):
// its capitalised words, case-sensitive, so that "running evaluation scripts" is not read as the banner.
const TRAINER_BANNER = /\bRunning\s{1,3}(?:Evaluation|Prediction)\b/;
// The failure placed after or outside the evaluation ("after validation", "the next epoch"): not an evaluation OOM.
const AFTER_EVAL = /\bafter\s{1,3}(?:the\s{1,3})?(?:first\s{1,3})?(?:validation|evaluation|eval)\b[^\n]{0,80}\b(?:epoch|training)\b|验证(?:之后|后|结束后)/i;

// The title (the paste's first line) places the failure in evaluation even where the sentence that names the failure
// does not ("Evaluation Error Ran out of memory" above "... I encounter a error when doing evaluation"; "预测评估时总是OOM"):
// an evaluation word at the failure as above, or the evaluation named as the title's subject. A bare "test" is left
// out (unit tests), and so is a paste whose failure a line places in training (TRAINING_FAILURE).
const TITLE_EVAL = /\b(?:validation|validating|validate|evaluation|evaluating|evaluate|predicting|prediction)\b|(?:验证|评估|评测|预测)/i;
// A log line is not a title: a progress bar, a timestamped or levelled logger line, a frame, an exception line. The
// progress lines themselves are read in phase.ts, where a training line after an evaluation bar ends the evaluation.
const LOG_LINE =
  /\d{1,3}%\||\bit\/s\b|\bs\/it\b|^\s{0,8}\[?\d{2,4}[-/]\d{2}|^\s{0,8}\d{1,2}:\d{2}|\b(?:INFO|WARNING|DEBUG|ERROR)\b|^\s{0,12}File "|^\s{0,8}Traceback|^\s{0,8}[\w.]{1,80}(?:Error|Exception):/;
// The failure placed in training by the sentence that names it ("OOM during training", "training is out of memory",
// "训练时显存不足"); a sentence
// that says training is fine ("training works fine", "训练正常") does not place it there.
const TRAINING_FAILURE =
  /\b(?:during|in|while|when|at)\s{1,3}(?:the\s{1,3})?(?:first\s{1,3})?training\b(?![^\n]{0,40}\b(?:fine|ok|okay|normal(?:ly)?|works?|worked|well)\b)|\btraining\s{1,3}(?:itself\s{1,3})?(?:is|was|runs?|ran|goes|went|gets?|got|fails?|failed|crash\w{0,3})\s{1,3}(?:\w{1,8}\s{1,3})?(?:OOM|out[ -]of[ -]memory)\b|训练(?:时|的时候|过程中)(?:显存|内存)?(?:不足|不够|溢出|爆|OOM)/i;

// Training said to work and the evaluation said to fail, each in its own words ("train is ok. / test is error.", "I just
// run the test code, but get the error. ... the train code, It is ok", "训练正常，验证报错"): the contrast places the failure
// in the evaluation even where no sentence joins the failure and the phase with a preposition. Both halves must be there:
// a bare "test ... error" is also how a unit test fails.
const TRAINING_OK =
  /\btrain(?:ing)?\b[^\n.!?]{0,30}?\b(?:is|was|are|were|goes|went|works?|worked|runs?|ran|seems?|looks?)\s{1,3}(?:\w{1,10}\s{1,3})?(?:ok|okay|fine|well|normal(?:ly)?|good)\b|训练(?:过程|时|阶段)?(?:中)?(?:一切)?(?:都)?(?:正常|没问题|没有问题|不报错|可以跑)/i;
const EVAL_FAILS =
  /\b(?:test(?:ing)?|validation|validating|evaluation|evaluating|eval|inference|predict(?:ion|ing)?)(?:\s{1,3}(?:code|script|step|phase|part|stage|process|loop))?\s{1,3}(?:is|was|gets?|got|gives?|gave|throws?|threw|raises?|fails?|failed|crash(?:es|ed)?|goes|went)\s{1,3}(?:an?\s{1,3}|the\s{1,3})?(?:error|wrong|OOM|out[ -]of[ -]memory)\b|\brun(?:ning)?\s{1,3}(?:the\s{1,3})?(?:test|eval|evaluation|validation|inference|prediction)\s{1,3}(?:code|script)\b[^\n]{0,30}\b(?:error|fail\w{0,3}|OOM|out[ -]of[ -]memory)\b|(?:测试|验证|评估|推理|预测)[^\n]{0,12}(?:报错|出错|失败|爆显存|显存不足|溢出|OOM)/i;
// The report names the function or method that failed, in prose ("for the epochVal method", "when the validate()
// function is called", "in my evaluate_model function"): its name's words (snake_case or camelCase) say the phase, as a
// frame's would (phase.ts). A name that begins test_/testX and goes on (test_forward) is pytest's naming, not a loop.
const NAMED_FUNCTION =
  /(?:^|[\s(`'"])([A-Za-z_][A-Za-z0-9_]{1,48})(?:\(\))?[`'"]?\s{1,3}(?:method|function|func|routine)\b|\b(?:in|for|at|inside|within|during|when|calling|call|running|run|the|my)\s{1,3}[`'"]?([A-Za-z_][A-Za-z0-9_]{1,48})\(\)/;
const EVAL_NAME_PARTS = new Set([
  'val',
  'valid',
  'validate',
  'validation',
  'validating',
  'eval',
  'evaluate',
  'evaluation',
  'evaluating',
  'infer',
  'inference',
  'predict',
  'prediction',
]);
const TEST_LOOP_NAMES = /^(?:test|testing)(?:_?(?:epoch|step|loop|model|net|all|one|set|data))?$|(?:_|[a-z])(?:test|Test|testing)$/;
/** Whether a function name's words name an evaluation: validate_epoch, epochVal, runInference, test, model_test. */
function evalName(name: string): boolean {
  if (TEST_LOOP_NAMES.test(name)) return true;
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split('_');
  return words.some((w) => EVAL_NAME_PARTS.has(w));
}
function namedEvalFunction(line: string): boolean {
  const m = NAMED_FUNCTION.exec(line);
  const name = m?.[1] ?? m?.[2];
  return name !== undefined && evalName(name);
}

// Whose evaluation loop: HF Trainer's API or its gathering, Lightning, Keras; else the script's own.
const HF =
  /\b(?:Seq2Seq)?Trainer\b[^\n]{0,40}\b(?:evaluate|predict)\b|\btrainer\.(?:evaluate|predict)\(|\b(?:evaluation_loop|prediction_loop|nested_concat|eval_accumulation_steps|compute_metrics)\b/;
// HF Trainer named by its classes or its TrainingArguments' own setting names (a config, a command or a call that sets
// them), or by a tool whose training is HF Trainer's (LLaMA-Factory, ms-swift; "SFT", supervised fine-tuning, is the
// stage name of TRL's SFTTrainer and of the tools built on it, all HF Trainer subclasses), or by transformers' example
// scripts that run it (run_glue.py, run_clm.py, run_summarization.py ...; their _no_trainer twins are excluded below). The accelerate "no_trainer" examples take the
// same flags with a loop of their own: not the Trainer's.
const HF_SETTINGS =
  /\b(?:TrainingArguments|Seq2SeqTrainingArguments|SFTTrainer|SFTConfig|Seq2SeqTrainer|per_device_eval_batch_size|per_device_train_batch_size|evaluation_strategy|eval_strategy|eval_steps|do_eval|do_predict|predict_with_generate|load_best_model_at_end|metric_for_best_model)\b|\brun_(?:glue|clm|mlm|plm|summarization|translation|qa|seq2seq_qa|ner|swag|xnli|classification|image_classification|audio_classification|speech_recognition_seq2seq|speech_recognition_ctc)\.py\b|\btransformers\.Trainer\(|\bllama-?factory\b|\bsft\b|\bms-swift\b/i;
// HF Trainer's own log lines, printed by Trainer.log as a Python dict in a fixed key order: a training step's "{'loss':
// 0.7091, 'learning_rate': 8.7e-06, 'epoch': 0.56}" (transformers >= 4.38 puts 'grad_norm' between), an evaluation's
// "{'eval_loss': 0.41, ... 'eval_runtime': 12.3". They name the Trainer's loop where the paste names no class or setting.
const HF_LOG_DICT =
  /\{'loss': [\d.e+-]{1,24}, (?:'grad_norm': [^,\n]{1,40}, )?'learning_rate': [\d.e+-]{1,24}, 'epoch': [\d.]{1,12}\}|\{'eval_loss': [\d.e+-]{1,24}, [^\n]{0,300}?'eval_runtime': /;
const NO_TRAINER = /no_trainer/;
const LIGHTNING = /\bpytorch_lightning\b|\blightning\.pytorch\b|\bLightningModule\b|\bPyTorch Lightning\b/;
// Keras by name, its evaluate/predict call, or its compiled evaluation functions (predict_function, test_function).
// TensorFlow's own OOM (ResourceExhaustedError, "OOM when allocating tensor"): a graph framework with no autograd graph to
// drop either, so its evaluation has the same levers as Keras's.
const KERAS =
  /\bkeras\b|\bmodel\.(?:evaluate|predict)\([^\n)]{0,80}\bbatch_size\b|\b(?:predict|test)_function\b|\bResourceExhaustedError\b|\bOOM when allocating tensor\b|\bRESOURCE_EXHAUSTED\b/i;
// HF Trainer concatenating predictions on the device: named by its function or in words.
const GATHER_WORDS =
  /\bnested_concat\b|\b(?:aggregat|concatenat|accumulat|gather)\w{0,4}\b[^\n]{0,40}\bpredictions?\b[^\n]{0,40}\bGPU\b|\bpredictions?\b[^\n]{0,60}\b(?:aggregat|concatenat|accumulat|gather)\w{0,4}\b[^\n]{0,40}\bGPU\b/i;
// A script's loop keeping every batch's outputs: appended, added or stacked into a list or tensor.
const COLLECT_WORDS =
  /\b(?:outputs?|logits|predictions?|preds|results?|features|embeddings)\b[^\n]{0,80}\b(?:(?:are|is|get|gets|being)\s{1,3})?(?:appended|added|stored|kept|collected|stacked|concatenated)\s{1,3}(?:to|in|into)\s{1,3}(?:a\s{1,3})?(?:list|tensor)\b/i;

// The report says the forward ran with gradients on: "without torch.no_grad()", "without setting 'with
// torch.no_grad()'", "computes loss on test set without turning gradient computations off", "no_grad is not used",
// "there is no torch.no_grad()", "forgot to add torch.no_grad()", "没有加 torch.no_grad()", "这段循环之前没有类似 test.py 之中的
// with torch.no_grad()"; or PyTorch says so itself: its "volatile was removed and now has no effect" warning is printed
// where a script still marks its evaluation inputs volatile (PyTorch < 0.4's no-grad), so that forward keeps its graph.
// The report's own experiment says it too: the same forward "works when wrapped in torch.no_grad()".
// A forward that needs no gradients yet keeps them is what no_grad / inference_mode fixes.
const GRADS_ON =
  /\bwithout\s{1,3}(?:(?:setting|using|calling|adding|wrapping(?:\s{1,3}it)?\s{1,3}in|a|the)\s{1,3}){0,2}['"`]?(?:with\s{1,3})?(?:torch\.)?(?:no_grad|inference_mode)\b|\bwithout\s{1,3}(?:turning|switching|disabling)\s{1,3}(?:off\s{1,3})?(?:the\s{1,3})?(?:gradients?|grad|autograd)(?:\s{1,3}computations?)?\b|\b(?:no_grad|inference_mode)(?:\(\))?['"`]?\s{1,3}(?:is|was)\s{1,3}(?:not|never)\s{1,3}(?:used|set|called)\b|\b(?:does|did|do)(?:\s{1,3}not|n't)\s{1,3}(?:use|call|have)\s{1,3}(?:any\s{1,3})?['"`]?(?:with\s{1,3})?(?:torch\.)?(?:no_grad|inference_mode)|\b(?:there\s{1,3}is\s{1,3}no|missing|forgot(?:ten)?(?:\s{1,3}to\s{1,3}(?:add|use|call|wrap\s{1,3}\w{1,12}\s{1,3}in))?)\s{1,3}(?:a\s{1,3}|the\s{1,3})?['"`]?(?:with\s{1,3})?(?:torch\.)?(?:no_grad|inference_mode)|(?:没有|没|未)(?:加|用|使用|设置)[^\n]{0,14}no_grad|(?:没有|忘了|忘记|缺少|缺)[^\n]{0,24}?no_grad|不(?:加|用|使用|设置)[^\n]{0,14}no_grad|(?:可以|应该|需要|要)(?:加|加上|加下|加个|使用|用)[^\n]{0,14}no_grad|\bshould\s{1,3}(?:add|use|call|wrap\s{1,3}\w{1,20}\s{1,3}in)\s{1,3}(?:a\s{1,3})?['"`]?(?:with\s{1,3})?(?:torch\.)?(?:no_grad|inference_mode)|\bvolatile was removed and now has no effect\b|\b(?:works?|worked|fits?|runs?|ran|succeeds?|succeeded)\b[^\n]{0,40}\b(?:wrapped|wrapping|run|ran|put)\s{1,3}(?:it\s{1,3})?(?:in|into|with|under|around|inside)\s{1,3}['"`]?(?:with\s{1,3})?(?:torch\.)?(?:no_grad|inference_mode)/i;
// The evaluation fed the whole evaluation set as one batch: "the whole validation dataset (batch_size = 6,854) was
// passed in", "it feeds in the entire validation set into the network", "all the validation sets are treated as a batch".
const WHOLE_SET =
  /\b(?:whole|entire|full|complete|all\s{1,3}(?:of\s{1,3})?the)\*{0,2}\s{1,3}\*{0,2}(?:validation|val|valid|test|eval|evaluation|dev)\*{0,2}\s{1,3}(?:data\s{0,3})?(?:sets?|data|split)\b[^\n]{0,80}\b(?:passed|fed|feeds?|given|sent|at once|in one (?:batch|go|forward)|as (?:one|a (?:single\s{1,3})?)batch|into the (?:network|model|net))|\b(?:passe[sd]|feeds?|fed|puts?|sends?)\s{1,3}(?:in\s{1,3})?(?:the\s{1,3})?(?:whole|entire|full|complete)\s{1,3}(?:validation|val|valid|test|eval|evaluation|dev)\s{1,3}(?:data\s{0,3})?(?:set|data|split)\b/i;
// The sentence at the failure states the evaluation ran at batch 1: "I've reduced to `batch_size=1` and still",
// "even with batch size 1", "batch of 1".
const BATCH_ONE =
  /\bbatch[ _-]?size\s{1,3}(?:is|was)\s{1,3}set\s{1,3}to\s{1,3}1\b(?![.,]?\d)|\bbatch[ _-]?size\W{0,3}(?:=|:|of|to|is|at)?\W{0,3}1\b(?![.,]?\d)|\bbatch(?:\s{1,3}of)?\s{1,3}1\b(?![.,]?\d)|\bbs\s{0,2}=\s{0,2}1\b(?![.,]?\d)/i;
// A command that runs an evaluation script by its conventional name (an inference script's levers are the weights' and
// the request's, not the evaluation's); and one that runs a training script.
const EVAL_COMMAND = /(?:^|[\s`$>])python3?(?:\s{1,3}-[\w-]{1,20}){0,3}\s{1,3}(?:[\w./-]{0,60}[\\/])?(?:test|eval|evaluate|evaluation|validate|val|demo)\.py\b/;
const TRAIN_COMMAND = /(?:^|[\s`$>])(?:python3?|torchrun|accelerate\s{1,3}launch|deepspeed)\b[^\n]{0,80}?\btrain\w{0,20}\.py\b/;
const quoted = (line: string) => `"${line.length > QUOTE_CHARS ? line.slice(0, QUOTE_CHARS) + '…' : line}"`;

const lines = (text: string) => boundedLines(text, MAX_LINES, MAX_LINE);

/** The evaluation phase a sentence of the paste names at its failure, with that sentence as the evidence. */
export function reportedPhase(text: string): PhaseVerdict | undefined {
  let said: string | undefined;
  let gathers = false;
  let collects = false;
  let hf = false;
  let lightning = false;
  let keras = false;
  let failure = false;
  let gradsOn: string | undefined;
  let wholeSet = false;
  let title: string | undefined;
  let trainingFailure = false;
  let noTrainer = false;
  let trainingOk = false;
  let evalFails: string | undefined;
  let namedFn: string | undefined;
  let evalBatchOneSaid = false;
  let evalCommand: string | undefined;
  let trainCommand = false;
  for (const line of lines(text)) {
    if (!evalCommand && EVAL_COMMAND.test(line)) evalCommand = line.trim();
    if (TRAIN_COMMAND.test(line)) trainCommand = true;
    if (title === undefined && line.trim()) title = line.trim();
    if (FAILURE.test(line)) failure = true;
    if (FAILURE.test(line) && TRAINING_FAILURE.test(line) && !EVAL_WORDS.test(line)) trainingFailure = true;
    if (NO_TRAINER.test(line)) noTrainer = true;
    if (HF_SETTINGS.test(line) || HF_LOG_DICT.test(line)) hf = true;
    const evalNamed = EVAL_WORDS.test(line) || TRAINER_BANNER.test(line);
    if (!said && FAILURE.test(line) && evalNamed && !AFTER_EVAL.test(line)) said = line.trim();
    if (!gradsOn && GRADS_ON.test(line)) gradsOn = line.trim();
    if (TRAINING_OK.test(line)) trainingOk = true;
    // Batch 1 stated on any line that names the evaluation ("at inference time (and here the batch size is set to 1)").
    if (EVAL_WORDS.test(line) && BATCH_ONE.test(line) && !TRAINING_FAILURE.test(line)) evalBatchOneSaid = true;
    if (!evalFails && EVAL_FAILS.test(line) && !AFTER_EVAL.test(line)) evalFails = line.trim();
    if (!namedFn && namedEvalFunction(line) && !AFTER_EVAL.test(line)) namedFn = line.trim();
    if (WHOLE_SET.test(line)) {
      wholeSet = true;
      // The whole evaluation set fed at once places the failure in evaluation ("... was passed in. Then it caused OOM").
      if (failure || FAILURE.test(line)) said ??= line.trim();
    }
    if (GATHER_WORDS.test(line)) gathers = true;
    if (COLLECT_WORDS.test(line)) collects = true;
    if (HF.test(line)) hf = true;
    if (LIGHTNING.test(line)) lightning = true;
    if (KERAS.test(line)) keras = true;
  }
  // No sentence at the failure names a phase: the title names the evaluation, and no line places the failure in training.
  if (!said && failure && !trainingFailure && title && !LOG_LINE.test(title) && (TITLE_EVAL.test(title) || EVAL_WORDS.test(title)) && !AFTER_EVAL.test(title))
    said = title;
  // Training said to work and the evaluation said to fail; or the failing function named, its name an evaluation's.
  if (!said && failure && !trainingFailure && trainingOk && evalFails) said = evalFails;
  if (!said && failure && !trainingFailure && namedFn) said = namedFn;
  // The run is the repository's own evaluation script (`python tools/test.py ...`, `python eval.py`) and no
  // training script runs in the paste: an eval-only run, whatever line the failure is on.
  if (!said && failure && !trainingFailure && evalCommand && !trainCommand) said = evalCommand;
  if (noTrainer) hf = false;
  // A failure the report places in no phase, but whose forward it says ran with gradients on: that forward needed
  // none (evaluation, test or inference), so it is read as an evaluation without no_grad.
  const at = said ?? (failure ? gradsOn : undefined);
  if (!at) return undefined;
  const loop: PhaseVerdict['evalLoop'] = hf ? 'hf' : lightning ? 'lightning' : 'plain';
  const verdict: PhaseVerdict = { phase: 'eval', frame: quoted(at), evalLoop: loop };
  if (gradsOn) verdict.gradsOnStated = quoted(gradsOn);
  if (wholeSet) verdict.evalWholeSet = true;
  if ((said && BATCH_ONE.test(said)) || evalBatchOneSaid) verdict.evalBatchOne = true;
  if (loop === 'hf' && gathers) verdict.gathersPredictions = true;
  if (loop === 'plain' && collects) verdict.evalCollects = true;
  if (keras) verdict.evalKeras = true;
  return verdict;
}
