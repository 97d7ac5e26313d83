// The request's length as the lever of a generation (issue 23). While a model generates, its KV cache holds every
// token of the context and the output (layers × 2 × hidden size × tokens, in the weights' dtype) and attention's
// scores grow with the context: with weights that leave room on the card, a long request is what fills it, and
// there is no training batch to halve. The length is read from the generation settings' own names (transformers'
// max_new_tokens / max_length in a generate call or config, vLLM's max_model_len / --max-model-len in a script
// that runs it in-process); a serving tool recognised by its log gets its own knobs instead (tools.yaml).
// Every pattern bounded and linear.
import { quantizeFirst } from './quantize.js';
import type { Incident, SequencePart } from '../incident/index.js';

const WINDOW = 512 * 1024;
/** At this many tokens of context or output and more, one request's KV cache and attention take gigabytes. */
export const LONG_REQUEST = 8192;
// Digits may be grouped as Python and prose write them: "1_000_000", "25,000".
const VALUE = String.raw`(\d{1,3}(?:[_,]\d{3}){1,2}|\d{3,7}|\d{1,4}[kK])(?!\w|\.\d)`;
// The context a run is given, by its own names: --context_window / --context-length flags and keys, and the length of
// the text or prompt stated as a value ("text length=25000", "prompt length: 32k").
// llama.cpp and Ollama name it their own way: --ctx-size, the Modelfile's "PARAMETER num_ctx 131072", options' num_ctx,
// and llama.cpp's context report "llama_new_context_with_model: n_ctx      = 32768" (not n_ctx_train, the model's own).
// Ollama's server config names its default context "OLLAMA_CONTEXT_LENGTH:8192" (env map) or "=8192" (the variable set);
// the clients in front of a local runner write it in camelCase: Continue's model settings "contextLength: 24000" (its
// config.json / config.yaml), LM Studio's load config {"contextLength": 32768} and its load-failure report's
// "errorData": {"n_ctx": 1048576}.
const GENERATION_LENGTH = new RegExp(
  String.raw`(?:--(?:max[-_]model[-_]len|context[-_](?:window|length|len)|ctx[-_]size)(?:=|[ \t]{1,4})|\bPARAMETER[ \t]{1,4}num_ctx[ \t]{1,4}|(?<![\w-])(?:max_new_tokens|max_model_len|max_length|context_window|context_length|num_ctx|n_ctx|OLLAMA_CONTEXT_LENGTH|(?:text|prompt|input)[ _]length)['"]?[ \t]{0,2}[=:][ \t]{0,2}|(?<![\w-])contextLength['"]?[ \t]{0,2}:[ \t]{0,2}|(?<![\w-])n_ctx[ \t]{0,8}=[ \t]{0,2})['"]?${VALUE}`,
  'gi',
);

// transformers' own warning names the prompt's length: "Token indices sequence length is longer than the specified
// maximum sequence length for this model (150000 > 131072)"; the first number is the tokens one request carries.
// Serving runners print the tokens of the prompt they load: Ollama's runner 'msg="loading cache slot" id=0 cache=0
// prompt=95938', llama.cpp's server "n_prompt_tokens = 95938".
const PROMPT_TOKENS =
  /Token indices sequence length is longer than the specified maximum sequence length for this model \((\d{3,8}) > \d{1,8}\)|msg="loading cache slot"[^\n]{0,60}?\bprompt=(\d{3,8})\b|\bn_prompt_tokens\s{0,2}=\s{0,2}(\d{3,8})\b/g;

const tokens = (value: string) => (/k$/i.test(value) ? Number(value.slice(0, -1)) * 1024 : Number(value.replace(/[_,]/g, '')));

/** The longest generation length the paste sets, the setting that states it and half of it. */
export function readGenerationLength(fullText: string): Pick<SequencePart, 'generateLen' | 'generateLenSetting' | 'generateLenNext'> {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  let best: { n: number; quote: string } | undefined;
  GENERATION_LENGTH.lastIndex = 0;
  for (let m = GENERATION_LENGTH.exec(text); m; m = GENERATION_LENGTH.exec(text)) {
    const n = tokens(m[1]);
    if (n > 0 && n <= 10_000_000 && (!best || n > best.n)) best = { n, quote: m[0].replace(/["']/g, '').trim() };
  }
  PROMPT_TOKENS.lastIndex = 0;
  for (let m = PROMPT_TOKENS.exec(text); m; m = PROMPT_TOKENS.exec(text)) {
    const n = Number(m[1] ?? m[2] ?? m[3]);
    if (n <= 100_000_000 && (!best || n > best.n)) best = { n, quote: `${n} tokens in the prompt` };
  }
  return best ? { generateLen: best.n, generateLenSetting: best.quote, generateLenNext: Math.floor(best.n / 2) } : {};
}

/**
 * The request's length first: a generation (its frames, or a pipeline) with no serving tool, a stated length of
 * LONG_REQUEST tokens or more, and weights that do not fill the card on their own (else quantize comes first).
 * Who holds the card is checked beside it (conditions.ts).
 */
export function generationLengthFirst(f: Incident): boolean {
  if (f.phase.generating !== true && f.phase.name !== 'generate') return false;
  if (f.run.inference === true || f.run.training === true) return false;
  if (f.sequence.generateLen === undefined || f.sequence.generateLen < LONG_REQUEST) return false;
  return !quantizeFirst(f);
}

/**
 * A serving tool (vLLM, TGI, llama.cpp, Ollama: run.inference) started with a long context: one request of that length
 * needs its KV cache and attention beside the weights, so the context length is the first of the tool's knobs, where
 * the weights do not fill the card on their own (else quantize or split comes first). Who holds the card is checked
 * beside it (conditions.ts).
 */
export function servingContextFirst(f: Incident): boolean {
  if (f.run.inference !== true) return false;
  if (f.sequence.generateLen === undefined || f.sequence.generateLen < LONG_REQUEST) return false;
  return !quantizeFirst(f);
}

// A generation the paste's own code runs: a model's generate() call, a transformers text-generation pipeline, vLLM's
// LLM(...).generate. Read only where no frame places the failure and no training step is in the paste (diagnose.ts).
const GENERATION_CALL =
  /^[ \t]{0,16}(?:[\w.[\]'", ]{1,80}=[ \t]{0,2})?[\w.[\]]{1,60}\.generate\(|\bpipeline\([ \t]{0,2}(?:task[ \t]{0,2}=[ \t]{0,2})?["']text-generation["']/m;

/**
 * The paste's code runs a generation (a call at a line's start, or a text-generation pipeline) at a stated length of
 * LONG_REQUEST tokens or more: what the length lever needs, and nothing more (a short request's OOM keeps its holder).
 */
export function longGenerationInCode(f: Incident, fullText: string): boolean {
  if (f.sequence.generateLen === undefined || f.sequence.generateLen < LONG_REQUEST) return false;
  return GENERATION_CALL.test(fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW));
}
