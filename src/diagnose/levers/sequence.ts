// The sequence length as a lever (issue 23). A training step's activations, and its logits (vocabulary ×
// tokens, in fp32 for the loss: Llama-3's 128256 × 18000 ≈ 8.6 GiB alone), grow with the tokens per sample.
// When the paste states a long length and the batch is already small, halving the batch cannot shrink one
// long sample: the length is the first lever (cut it, split long samples, pack short ones). A batch of 4 or more
// at a moderate length keeps the batch lever. The length is read from the settings' own names (HF/TRL
// max_seq_length and max_length, Unsloth max_seq_length, LLaMA-Factory cutoff_len, axolotl sequence_len,
// ms-swift max_length, the --model_max_length flag, seq_len, block_size) and plain prose ("context length of 18000",
// "序列长度 8192"), never a thread's own wording. Every pattern is bounded and linear.
import { batchLever } from '../levers.js';
import { incidentOf, type Incident } from '../incident/index.js';
import { readGenerationLength } from './generation-length.js';

const WINDOW = 512 * 1024;
/** At this many tokens per sample and more, one sample's activations and logits are the step's largest part. */
export const LONG_SEQUENCE = 8192;
/** A batch this small is not halved first when the sequence is long. */
const SMALL_BATCH = 2;
/**
 * At a stated batch of 1 the batch is no lever at all, so a shorter length than LONG_SEQUENCE already decides: from this
 * many tokens one sample's activations and logits (Llama-3's 128256-word vocabulary × 4096 tokens in fp32 ≈ 2 GiB) are
 * what is left to cut once the static part fits.
 */
export const LONG_SEQUENCE_AT_BATCH_ONE = 4096;

// A length: 18000, 16384, "16k" / "32K" (×1024).
const VALUE = String.raw`(\d{3,6}|\d{1,3}[kK])(?!\w|\.\d)`;
const KEYS = 'max_seq_length|max_seq_len|max_sequence_length|max_length|max_len|cutoff_len|sequence_len|seq_len|seq_length|max_source_length|block_size';
// `--key 8192`, `--key=8192`, `key: 8192`, `"key": 8192`, `key = 8192` (keyword arguments in code too).
// model_max_length only as the training scripts' flag: a tokenizer's repr prints its own (model_max_length=131072).
const KEY_SETTING = new RegExp(
  String.raw`(?:--(?:${KEYS}|model_max_length)(?:=|[ \t]{1,4})['"]?|(?:^|[\s,({\u3000-\u9fff\uff00-\uffef])['"]?(?:${KEYS})['"]?[ \t]{0,2}[=:][ \t]{0,2}['"]?)${VALUE}`,
  'gim',
);
// Prose: "context length of 18000", "max sequence length 8192", "seq len 8192", "上下文长度 16k", "序列长度为8192".
// A length set in Chinese prose names the setting itself: "length设置为20k", "长度设为16384".
const PROSE = new RegExp(
  String.raw`(?:\b(?:max(?:imum)?[ \t]{1,2})?(?:context|sequence|seq)[ \t]{1,2}(?:length|len|window)[ \t]{0,2}(?:of|is|=|:|to)?[ \t]{0,2}|(?:上下文|序列)长度[ \t]{0,2}[为是：:=]?[ \t]{0,2}|(?:\blength|长度)[ \t]{0,2}(?:设置为|设置成|设为|调到)[ \t]{0,2})${VALUE}`,
  'gim',
);

// The value before its noun: "a 32k context", "200k context length", "128k-token context", "16384 tokens of context".
const PROSE_BEFORE = new RegExp(
  String.raw`(?<![\w.])(\d{3,6}|\d{1,3}[kK])[ \t-]{0,2}(?:tokens?[ \t-]{1,2}(?:of[ \t]{1,2})?|length[ \t]{1,2})?context(?:[ \t]{1,2}(?:length|window))?\b`,
  'gi',
);

function tokens(value: string): number {
  return /k$/i.test(value) ? Number(value.slice(0, -1)) * 1024 : Number(value);
}

/** The longest sequence length the paste states, the text that states it and half of it (facts.seqLen, seqLenSetting, seqLenNext). */
export function readSequenceLength(fullText: string): Incident {
  const text = fullText.length <= 2 * WINDOW ? fullText : fullText.slice(0, WINDOW) + '\n' + fullText.slice(-WINDOW);
  let best: { n: number; quote: string } | undefined;
  for (const re of [KEY_SETTING, PROSE, PROSE_BEFORE]) {
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      const n = tokens(m[1]);
      if (n > 0 && n <= 10_000_000 && (!best || n > best.n)) best = { n, quote: m[0].trim() };
    }
  }
  // The generation's own length beside it (levers/generation-length.ts), read here so settings.ts reads one sequence part.
  const generation = readGenerationLength(text);
  return incidentOf({ sequence: { ...(best ? { seqLen: best.n, seqLenSetting: best.quote, seqLenNext: Math.floor(best.n / 2) } : {}), ...generation } });
}

/**
 * The stated length is the first lever: a training step (not inference or a server) whose batch preconditions
 * hold (a forward/backward, no growth, a static part that fits), a length of LONG_SEQUENCE tokens or more (at a
 * stated batch of 1, LONG_SEQUENCE_AT_BATCH_ONE), and a batch that is already small or not stated. Who holds the card is checked beside it (conditions.ts).
 */
export function sequenceFirst(f: Incident): boolean {
  if (f.run.training !== true || f.run.inference || f.phase.generating) return false;
  const batchOne = f.run.batch === 1 && f.run.batchDefaultOf === undefined;
  if (f.sequence.seqLen === undefined || f.sequence.seqLen < (batchOne ? LONG_SEQUENCE_AT_BATCH_ONE : LONG_SEQUENCE)) return false;
  if (f.run.batch !== undefined && f.run.batch > SMALL_BATCH) return false;
  return batchLever(f).holds;
}
