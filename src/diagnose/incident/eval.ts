// The evaluation's own settings and what its frames showed (levers/eval.ts).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface EvalPart {
  /** Evaluation ran generate() inside HF Trainer's loop (Seq2SeqTrainer, predict_with_generate). */
  evalGenerates?: boolean;
  /** A script's own evaluation failed on a line that concatenates or collects outputs. */
  evalCollects?: boolean;
  /** Keras / TensorFlow ran the evaluation. */
  evalKeras?: boolean;
  /** The evaluation batch the paste sets, and the setting that says so ("--per_device_eval_batch_size 16"). */
  evalBatch?: number;
  evalBatchSetting?: string;
  /** Half the evaluation batch, for the reply. */
  evalBatchNext?: number;
  /** HF TrainingArguments' eval_accumulation_steps, where the paste sets it. */
  evalAccumulation?: number;
  /** The failed request's share of the card when one evaluation input is that large ("34%"). */
  evalRequestShare?: string;
  /** The paste shows evaluation code under torch.no_grad() / inference_mode() (the quoted call). */
  noGradShown?: string;
  /** The report says the forward ran with gradients on ("without torch.no_grad()"): the quoted sentence. */
  gradsOnStated?: string;
  /** The report says the evaluation fed the whole evaluation set as one batch. */
  evalWholeSet?: boolean;
  /** The sentence at the failure says the evaluation ran at batch 1. */
  evalBatchOne?: boolean;
  /** An input shape the report states as a tuple ("the dimension (1025, 2049) ... at inference time"): pixels, text, half each side. */
  evalInputPixels?: number;
  evalInputSetting?: string;
  evalInputNext?: string;
  /** The framework whose evaluation already runs without gradients (PaddlePaddle, OpenMMLab, detectron2), as the paste names it. */
  evalEngine?: string;
  /** A line names an evaluation batch in words or a form the settings do not read ("for evaluation with batch_size of 4"). */
  evalBatchNamed?: boolean;
  /** The report says the evaluation runs at this smaller batch ("I don't get OOM only when I set validation batch size = 12"): the words, quoted. */
  evalBatchFits?: number;
  evalBatchFitsSaid?: string;
  /** The evaluation's own code failed below its frame with no model call in between: that frame, quoted (levers/eval-over-set.ts). */
  evalOverSet?: string;
  /** A progress line or sentence says the failure came after every batch of the pass ran, or while gathering outputs: quoted. */
  evalOverSetSaid?: string;
  /** TensorFlow's failed tensor is a whole data array (its leading dimension a set's length): the shape, quoted. */
  evalWholeArray?: string;
  /** A line tells memory climbing through an inference or evaluation pass over a set: quoted (levers/eval-over-set.ts). */
  evalPassGrowth?: string;
  /** The toolkit's own validation batch setting, where its validation runs in its trainer (levers/eval.ts EVAL_ENGINES). */
  evalEngineBatchFlag?: string;
  /** The YOLO family's per-epoch validation call (train.py's test.test / val.run) or its table header, quoted (levers/eval-batch.ts). */
  evalYoloVal?: string;
  /** Caffe's solver was testing (its test line or Solver::Test frame) when a CUDA check failed: quoted (levers/caffe-test.ts). */
  caffeTestNet?: string;
  /** Non-maximum suppression among the traceback's innermost frames, quoted (levers/eval-post.ts). */
  evalNms?: string;
  /** A metric library's frame (torchmetrics, torcheval, Ignite) in the traceback, quoted (levers/eval-post.ts). */
  evalMetricState?: string;
  /** PyTorch's "volatile was removed" warning, or the paste's PyTorch 0.3 and 0.4+ versions, quoted (levers/volatile.ts). */
  volatileRemoved?: string;
  /** flair's transformer embeddings class, embedding outside its trainer with fine_tune on (levers/library-grad-default.ts). */
  flairGradEmbed?: string;
  /** The report says evaluation needs more GPU memory than training (a sentence or two figures), quoted (levers/eval-above-train.ts). */
  evalAboveTrainSaid?: string;
  /** A source line runs a forward for its output and detaches it, in a paste that trains nothing: quoted (levers/forward-graph.ts). */
  detachedForward?: string;
}
