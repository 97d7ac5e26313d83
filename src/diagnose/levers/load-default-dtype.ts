// transformers' default load dtype (issue 23: precision inferred where the log states none). In transformers 4.x,
// PreTrainedModel.from_pretrained builds the model in torch's default dtype, float32, unless the call passes
// torch_dtype (dtype= from 4.56), a quantization (load_in_8bit / load_in_4bit / quantization_config) or the paste
// converts it (.half(), .to(torch.float16)); transformers 5 loads "auto" (the checkpoint's dtype) instead. So a model
// class's from_pretrained call whose arguments name no dtype, with no conversion in the paste and no transformers 5
// stated, loads 4 bytes per parameter. Read from the call as the paste shows it: the call's arguments up to its closing
// parenthesis (at most a few lines), bounded and linear.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';

const MAX_LINES = 4000;
const MAX_LINE = 600;
/** Lines after the call's own line its arguments may take. */
const ARG_LINES = 12;
// A model class (not a tokenizer, processor or config): AutoModel*, *For<Task>, *Model, *LMHeadModel.
const MODEL_CALL = /\b(?:AutoModel\w{0,40}|\w{1,60}For[A-Z]\w{1,40}|\w{1,40}(?:LMHead)?Model)\.from_pretrained\(/;
const DTYPE_ARG = /\b(?:torch_dtype|dtype|load_in_[48]bit|quantization_config)\s{0,2}=/;
// A conversion to half precision anywhere in the paste, or a default dtype set before the load.
const CONVERTED = /\.(?:half|bfloat16)\(\)|\.to\([^)\n]{0,60}torch\.(?:float16|bfloat16|half)\b|set_default_dtype\(\s{0,2}torch\.(?:float16|bfloat16)/;
// transformers 5 loads in the checkpoint's dtype by default.
const TRANSFORMERS_5 = /\btransformers(?:\s{0,2}(?:version)?\s{0,2}[:=]{1,2}\s{0,2}|[ \t]{1,3}v?|-)5\.\d/i;

/** The call that loads float32 by default ("AutoModelForCausalLM.from_pretrained(...) with no torch_dtype"), or nothing. */
export function fromPretrainedFp32(text: string): string | undefined {
  if (CONVERTED.test(text) || TRANSFORMERS_5.test(text)) return undefined;
  const lines = [...boundedLines(text, MAX_LINES, MAX_LINE)];
  let found: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const call = MODEL_CALL.exec(lines[i]);
    if (!call) continue;
    // The call's arguments: from the call to the line where its parentheses close.
    let args = lines[i].slice(call.index);
    let depth = 0;
    for (let j = i; j < lines.length && j <= i + ARG_LINES; j++) {
      const part = j === i ? args : lines[j];
      if (j > i) args += '\n' + part;
      for (const c of part) depth += c === '(' ? 1 : c === ')' ? -1 : 0;
      if (depth <= 0) break;
    }
    if (DTYPE_ARG.test(args)) return undefined;
    found ??= call[0].slice(0, -1);
  }
  return found;
}

/** Sets the weights' dtype to fp32 with its evidence, where the paste states none and loads with transformers' default. */
export function inferDefaultFp32(incident: Incident, text: string): void {
  if (incident.model.dtype !== undefined) return;
  const call = fromPretrainedFp32(text);
  if (call) [incident.model.dtype, incident.model.dtypeDefaultOf] = ['fp32', call];
}
