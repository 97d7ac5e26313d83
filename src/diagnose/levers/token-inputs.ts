// What an inference session is fed, by the input names the paste gives it: a tokenizer's fixed output names
// (input_ids, attention_mask, token_type_ids; transformers' BatchEncoding, the names every exported text model keeps)
// say the feed is token sequences, so the size of one run is the number of sequences times their length; there is no
// image size to lower. ONNX Runtime's arena message names no input (levers/stack-levers.ts reads its request): this is
// what orders its levers. Bounded patterns (untrusted input, linear).
import type { Incident, StackPart } from '../incident/index.js';
import type { LogText } from '../normalize.js';

const MAX_LINE = 2000;
const TOKEN_INPUT = /\b(?:input_ids|attention_mask|token_type_ids)\b/;
// Image inputs named beside them (a vision-language model, pixel_values) leave the image size a lever too.
const IMAGE_INPUT = /\b(?:pixel_values|images?|img|imgsz|image_size|resolution)\b/i;

export function readTokenInputs(log: LogText): Partial<StackPart> {
  let tokens = false;
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (IMAGE_INPUT.test(line)) return {};
    if (!tokens && TOKEN_INPUT.test(line)) tokens = true;
  }
  return tokens ? { tokenInputs: true } : {};
}

export const TOKEN_INPUT_CONDITIONS = {
  // ONNX Runtime's arena failed on a session fed token sequences: the sequences per run (the batch) and their length.
  ort_token_inputs: ({ incident: i }: { incident: Incident }) =>
    i.stack.ortAskMiB !== undefined && i.stack.tokenInputs === true && i.stack.ortAskMiB <= 4 * 2 ** 20,
};
