// A forward run only for its output, with autograd on (issue 23, the no_grad lever outside an evaluation loop). A script
// that calls a model on an input and detaches the result (`out = model(x).sample.detach().cpu()`) shows two things in
// one line: it wants no gradient (it throws the graph away after the call), and the graph was recorded (detach() is
// how a tensor that carries one is cut from it). Until that line returns, autograd keeps every layer's activations for
// a backward that never comes, so the forward needs several times what the same forward under torch.no_grad() /
// torch.inference_mode() needs, and tiling or a smaller batch only slices a cost that should not be there. Evidence,
// each in a fixed form: a source line (a traceback's or the paste's code) that calls something and detaches its result
// on the same line; no backward, optimizer step or loss anywhere in the paste (training detaches for logging); no
// no_grad / inference_mode shown (levers/eval.ts reads that). Bounded per line: linear in the paste's length.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';
import { staticOverCard } from './static-fit.js';

const MAX_LINES = 20_000;
const MAX_LINE = 600;
const QUOTE_CHARS = 120;

// `name = callee(args)` then attribute or index steps, then .detach(): "output = vae(tensor_o).sample.detach().cpu()",
// "feats = self.model(img)[0].detach()", "emb = encoder(**batch).last_hidden_state.detach().cpu().numpy()".
const DETACHED_CALL = /^\s{0,40}[\w.[\], ]{1,60}=\s{0,2}[\w.]{1,60}\([^\n]{0,160}?\)(?:\.\w{1,30}|\[[^\]\n]{1,20}\]){0,4}\.detach\(\)/;
// A training step anywhere in the paste: its detach() is a logging copy, and the graph is needed for the backward.
const TRAINING_STEP = /\.backward\(|\boptimi[sz]er\w{0,10}\.(?:step|zero_grad)\(|\bloss\s{0,2}(?:=|\+=)|\bloss\.item\(\)|\bTrainer\(|\.fit\(|\btraining_step\b/;

/** The source line that runs a forward for its output and detaches it, in a paste that trains nothing; quoted. */
export function readDetachedForward(text: string): string | undefined {
  let found: string | undefined;
  for (const line of boundedLines(text, MAX_LINES, MAX_LINE)) {
    if (TRAINING_STEP.test(line)) return undefined;
    if (!found && DETACHED_CALL.test(line)) {
      const t = line.trim();
      found = `"${t.length > QUOTE_CHARS ? t.slice(0, QUOTE_CHARS) + '…' : t}"`;
    }
  }
  return found;
}

// Phases where a forward for its output runs: no phase read, a forward, an evaluation or generation (the evaluation's own
// texts come first there); not a backward, an optimizer step, a load or data loading.
const FORWARD_PHASES = new Set<string | undefined>([undefined, 'forward', 'eval', 'generate']);

/**
 * The forward kept its graph: the detached call shown, no no_grad shown or said, no training step in the paste, a phase
 * where a forward ran, and the weights fit (where they do not, no forward setting makes room).
 */
export const forwardKeepsGraph = (f: Incident) =>
  f.eval.detachedForward !== undefined && f.eval.noGradShown === undefined && FORWARD_PHASES.has(f.phase.name) && !staticOverCard(f);
