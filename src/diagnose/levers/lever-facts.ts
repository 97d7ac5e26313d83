// The parts of the incident the lever modules read (issue 23), added to the Facts type here so that
// each lever's evidence is a typed field beside the phase: the evaluation's own settings and what
// its frames showed, and how far training got before the OOM.

export interface EvalFacts {
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
}

export interface ProgressFacts {
  /** Training steps a progress line showed done before the failure, and that line (trimmed) as evidence. */
  stepsDone?: number;
  /** Whole epochs a progress line showed done before the failure. */
  epochsDone?: number;
  progressLine?: string;
}

export interface GrowthFacts {
  /** The paste's line that shows what growing memory keeps (a loss tensor added to a total, outputs appended), trimmed. */
  keptReference?: string;
}

export interface SequenceFacts {
  /** The longest sequence length the paste states, in tokens, the setting or sentence that states it, and half of it (levers/sequence.ts). */
  seqLen?: number;
  seqLenSetting?: string;
  seqLenNext?: number;
}

declare module '../facts.js' {
  interface Facts extends EvalFacts, ProgressFacts, GrowthFacts, SequenceFacts {}
}
