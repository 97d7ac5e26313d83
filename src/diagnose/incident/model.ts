// The model: its name, size and the dtype its weights load in, with the evidence for an inferred dtype.
// A typed part of the incident (index.ts), split from the old Facts fields once (a812476, by a codemod since removed); edited by hand.

export interface ModelPart {
  // {model} in rule templates and the JSON contract's facts.
  name?: string;
  /** Billions of parameters, from the model's name ("Llama-2-7b-hf", "Qwen1.5-14B"). */
  paramsB?: number;
  /** The dtype the weights are loaded in, where the log states it. */
  dtype?: 'fp32' | 'fp16' | 'bf16' | 'int8' | 'int4';
  /** How the dtype was inferred when the log states none ("28672 × 8192 × 4 bytes (Llama-2-70B)"), and the reply's words for it. */
  dtypeEvidence?: string;
  dtypeWhy?: string;
  /** The load call that takes transformers' default float32 (no torch_dtype), when the dtype was read from it (levers/load-default-dtype.ts). */
  dtypeDefaultOf?: string;
  /** The setting or error line that shows training in fp32 with no half precision stated, and the reply's words for it (levers/amp.ts). */
  fp32Setting?: string;
  /** The report's line that says the run fits with half precision and runs out without it (levers/amp.ts). */
  halfPrecisionWorked?: string;
  ampWhy?: string;
}
