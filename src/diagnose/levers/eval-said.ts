// What a paste says about its evaluation beyond the settings levers/eval.ts reads (issue 23): that HF's evaluation
// generates (predict_with_generate), and that the evaluation runs at a smaller batch than the one that failed, the
// user's own experiment ("I don't get OOM only when I set validation batch size = 12", "batchsize调为1以后才能够正常运行").
// A run at a smaller evaluation batch is the evidence that decides: the evaluation batch moves what fills the card.
// Every pattern is bounded and applied to a bounded text: linear in the paste's length.

// HF Seq2SeqTrainingArguments' predict_with_generate, as a flag, a key or a dump ("--predict_with_generate",
// "predict_with_generate: true", "predict_with_generate=True,"); "False" / "0" switch it off.
const PREDICT_WITH_GENERATE = /(?:^|[\s,({'"])(?:--)?predict_with_generate\b['"]?(?:[ \t]{0,2}[=:][ \t]{0,2}['"]?(\w{1,5}))?/gim;

/** The paste turns HF's predict_with_generate on (the last setting wins). */
export function predictWithGenerate(text: string): boolean {
  let on: boolean | undefined;
  PREDICT_WITH_GENERATE.lastIndex = 0;
  for (let m = PREDICT_WITH_GENERATE.exec(text), n = 0; m && n < 50; m = PREDICT_WITH_GENERATE.exec(text), n++)
    on = !/^(?:false|0|no|none)$/i.test(m[1] ?? 'true');
  PREDICT_WITH_GENERATE.lastIndex = 0;
  return on === true;
}

// A batch size stated with a verdict of success, in either order: "with validation batch size = 12 it works", "I don't
// get OOM only when I set validation batch size = 12", "batch_size=4 runs fine", "batchsize调为1以后才能够正常运行".
// "eval_batch_size=4", "val batch size 8", "bs=2": the key may end a longer name.
const BATCH_N = String.raw`(?:batch[ _-]?size|\bbs)\b[^\n\d]{0,12}?(\d{1,5})\b`;
// No other number between the batch and the verdict: "a batch_size of 96-128 ... I can only fit 64" is not 96 fitting.
const SUCCESS_AFTER = String.raw`[^\n\d]{0,60}?(?:\b(?:it\s{1,3})?(?:works?|worked|fits?|fitted|runs?\s{1,3}(?:fine|well|normally|ok)|ran\s{1,3}(?:fine|well|normally|ok))\b|(?:正常运行|可以运行|能运行|能跑|可以跑|跑通|跑得动|不会爆|不爆|没问题|没有问题))`;
const NO_OOM_BEFORE = String.raw`\b(?:don't|do not|didn't|does not|doesn't|won't|no longer)\s{1,3}(?:get|have|hit|see|throw|run out)\s{1,3}(?:an?\s{1,3}|of\s{1,3})?(?:OOM|out[ -]of[ -]memory|memory errors?|errors?)\b[^\n]{0,60}?`;
const FITS_AFTER = new RegExp(BATCH_N + SUCCESS_AFTER, 'gi');
const FITS_BEFORE = new RegExp(NO_OOM_BEFORE + BATCH_N, 'gi');
// "even with batch size 1 it still does not work", "batch_size=1 也不行": a failure, not a run that fits.
const STILL_FAILS = /\b(?:still|even|not|never|no|can't|cannot|doesn't|didn't|won't|fails?|failed)\b|依然|还是|仍然|仍|也不|不行|不能|报错/i;
// A run that fits in training says nothing about the evaluation batch ("training with batch size 24 works").
const ABOUT_TRAINING = /\btrain(?:ing)?\b|训练/i;
const MAX_CHARS = 20_000;
const QUOTE_CHARS = 120;

/** The smallest evaluation batch the paste says runs, with its words; undefined when no sentence says one does. */
export function evalBatchSaidToFit(text: string): { batch: number; said: string } | undefined {
  // A success said on the next line ("当将batchsize调为1以后\n\n才能够正常运行"): read the lines as one sentence.
  const joined = text.slice(0, MAX_CHARS).replace(/\s*\n\s*/g, ' ');
  let best: { batch: number; said: string } | undefined;
  for (const re of [FITS_AFTER, FITS_BEFORE]) {
    re.lastIndex = 0;
    for (let m = re.exec(joined), n = 0; m && n < 50; m = re.exec(joined), n++) {
      const said = m[0];
      // The success words of FITS_AFTER follow the number; a negation between them makes it a failure.
      const tail = re === FITS_AFTER ? said.slice(said.indexOf(m[1]) + m[1].length) : '';
      // The words just before the match say whose batch it is ("Training with batch size 24 works").
      const before = joined.slice(Math.max(0, m.index - 40), m.index);
      const lead = before.slice(Math.max(before.lastIndexOf('. '), before.lastIndexOf('。'), before.lastIndexOf('; ')) + 1);
      if (STILL_FAILS.test(tail) || ABOUT_TRAINING.test(said) || ABOUT_TRAINING.test(lead)) continue;
      const batch = Number(m[1]);
      if (batch >= 1 && (best === undefined || batch < best.batch))
        best = { batch, said: `"${said.length > QUOTE_CHARS ? said.slice(0, QUOTE_CHARS) + '…' : said.trim()}"` };
    }
    re.lastIndex = 0;
  }
  return best;
}
