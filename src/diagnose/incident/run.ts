// The tool that wrote the log and the run's settings (command line, trainer dumps, argparse, TrainingArguments).
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface RunPart {
  commandLine?: string;
  /** The tool that wrote the log (knowledge/tools.yaml) and its own knobs, quoted by the fixes. */
  tool?: string;
  toolName?: string;
  toolKnobs?: string;
  /** A serving tool (vLLM, web UIs): no training batch or AMP to change. */
  inference?: boolean;
  /** The report's line that says the run is inference (an inference script, "deploy", "use the model"; levers/reported-load.ts). */
  inferenceSaid?: string;
  batch?: number;
  autobatch?: number;
  /** The batch is the tool's default, not read from the log (its name, for the reply). */
  batchDefaultOf?: string;
  /** The batch was read from the failing tensor's leading dimension (TensorFlow's shape[...]). */
  batchFromShape?: string;
  /** How the tool's command line takes a batch it does not state (tools.yaml batch_arg). */
  batchArg?: string;
  batchFlag?: string;
  imgsz?: number;
  cache?: string | boolean;
  singleCls?: boolean;
  resume?: boolean;
  amp?: boolean;
  ampHow?: string;
  ampDefaultOn?: boolean;
  accumulate?: number;
  epochs?: number;
  /** The tool's way to split weights over devices, for the weights fix. */
  weightsSplitHow?: string;
  /** The log is a training run (optimizer, backward, a trainer), and whether it trains adapters only (LoRA/PEFT). */
  training?: boolean;
  adapterTraining?: boolean;
  /** The paste states a full fine-tune (full fine-tuning, finetuning_type full, 全参, "without PEFT"), not only training. */
  fullTrainingStated?: boolean;
  /** The setting that offloads the parameters to the host (ZeRO-3 offload_param, Gemini, FSDP), as written; levers/static-order.ts. */
  paramsOffloaded?: string;
  /** Gradient (activation) checkpointing is on already. */
  checkpointingOn?: boolean;
  /** The report's words that the run fits with gradient checkpointing and runs out without it (levers/setting-experiment.ts). */
  checkpointingWorked?: string;
  /** A diffusers pipeline (several models run in turn: text encoders, UNet/transformer, VAE); levers/static-order.ts. */
  diffusionPipeline?: boolean;
}
