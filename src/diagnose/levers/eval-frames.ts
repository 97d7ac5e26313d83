// The traceback's evidence that an evaluation failed in its own work over the set, not in a model call (issue 23;
// levers/eval-over-set.ts holds the lever). Frames are typed structurally here so that phase.ts can import this without
// an import circle through the incident's types. Patterns are anchored and bounded.

/** A traceback frame as phase.ts reads it. */
interface FrameLike {
  file: string;
  fn: string;
  code?: string;
}

// A model call inside the evaluation: nn.Module's call frames (module.py: __call__ in PyTorch < 1.7, _call_impl after),
// a forward, or a source line that calls the network, its encoder or generate().
const MODULE_FILE = /nn[\\/]modules[\\/]module\.py$/;
const MODEL_FN = /^(?:forward|__call__|_call_impl|_wrapped_call_impl|generate|encode|decode)$/;
const TF_FILE = /(?:^|[\\/])(?:keras|tf_keras)[\\/]|tensorflow[\\/]python[\\/]/;
const CONCAT = /concat/i;
// A step function, or the model handed to a call (a traceback cut above the model's own frames), counts as a model call too.
const MODEL_CALL_CODE =
  /\b(?:self\.)?(?:model|net|network|encoder|decoder|backbone|module)\w{0,12}\(|\.(?:forward|encode|generate)\(|\b\w{0,20}_?step\(|\b(?:self\.)?(?:model|net)\s{0,2}[,)]/;

const WRAPPER_CODE = /^return\s{1,3}\w{1,40}\(\*args,\s{0,3}\*\*kwargs\)/;
// torch's no_grad / inference_mode decorator and the usual names of functools wrappers.
const WRAPPER_FN = /^(?:decorate_context|wrapper|wrapped|_wrapper|inner)$/;

/**
 * The innermost frame, when the evaluation frame at `evalAt` (frames innermost first) ran code of its own below it and none
 * of it calls the model: the failure is in what the evaluation computes from the outputs, quoted with its source line.
 */
export function evalWorkAfterForward(frames: FrameLike[], evalAt: number): string | undefined {
  if (evalAt <= 0) return undefined;
  const inner = frames.slice(0, evalAt);
  // A wrapper at the bottom (a decorator's `return func(*args, **kwargs)`) calls on: the excerpt stops before the failing work.
  if (WRAPPER_CODE.test(frames[0].code ?? '') || WRAPPER_FN.test(frames[0].fn)) return undefined;
  if (inner.some((g) => MODULE_FILE.test(g.file) || MODEL_FN.test(g.fn) || (g.code !== undefined && MODEL_CALL_CODE.test(g.code)))) return undefined;
  // Keras / TensorFlow run the model through their own functions: only their concatenation of the outputs says it.
  if (inner.some((g) => TF_FILE.test(g.file)) && !inner.some((g) => CONCAT.test(g.fn) || CONCAT.test(g.code ?? ''))) return undefined;
  const f = frames[0];
  const base = f.file.slice(Math.max(f.file.lastIndexOf('/'), f.file.lastIndexOf('\\')) + 1);
  return `${base}, in ${f.fn}${f.code ? `: ${f.code.slice(0, 80)}` : ''}`;
}
