// DistributedDataParallel's reducer errors about parameters (issue 23): PyTorch's fixed messages, not memory.
// "Expected to have finished reduction in the prior iteration before starting a new one" means a parameter
// produced no gradient in the last iteration (an unused branch or head, an output left out of the loss):
// find_unused_parameters=True, or make every parameter take part. "Expected to mark a variable ready only once"
// / "marked as ready twice" means one parameter's hook fired twice in one backward (reentrant activation
// checkpointing, a module called twice): static_graph=True or non-reentrant checkpointing (use_reentrant=False).
// What the paste shows picks the words: which error, whether find_unused_parameters is already on, the
// parameter PyTorch names. Patterns are PyTorch's own text or a setting's spelling, bounded (untrusted input).
import type { LogText } from '../normalize.js';
import type { DistributedPart } from '../incident/index.js';

export type DdpUnusedFacts = Pick<DistributedPart, 'ddpMarkedTwice' | 'ddpFindUnusedSet' | 'ddpParameter'>;

const MARKED_TWICE = /Expected to mark a variable ready only once|has been marked as ready twice/;
// The setting as a config, code or command line sets it ("find_unused_parameters = True" alone on a config line,
// "DistributedDataParallel(model, ..., find_unused_parameters=True)", "--ddp_find_unused_parameters true"), or the
// user's sentence that it is set and the run still fails or hangs. The error's own sentence ("passing the keyword
// argument `find_unused_parameters=True` to ...") is advice, not a setting.
const FIND_UNUSED_SET = [
  /^\s{0,40}(?:ddp_)?find_unused_parameters\s{0,3}[=:]\s{0,3}true,?\s{0,3}$/i,
  /DistributedDataParallel\([^\n]{0,300}find_unused_parameters\s{0,2}=\s{0,2}True/,
  /--ddp_find_unused_parameters[ =]true\b/i,
  /\b(?:set|setting|enabled?|with|added?|turn(?:ed)? on)\b[^\n]{0,20}find_unused_parameters[`'"]?\s{0,3}=\s{0,3}[`'"]?true\b[^\n]{0,80}\b(?:still|but|freez\w{0,3}|hangs?|hung|stuck|same error)\b/i,
];
const ERROR_ADVICE = /keyword argument|You can enable unused parameter detection/;
const NAMED = /with name ([\w.]{1,200}) has been marked as ready twice|did not receive grad for rank \d{1,6}:\s{0,3}([\w.]{1,200})/;
const MAX_LINE = 4000;

export function readDdpUnused(log: LogText): DdpUnusedFacts {
  const out: DdpUnusedFacts = {};
  for (let l = 0; l < log.lineCount; l++) {
    const line = log.line(l).slice(0, MAX_LINE);
    if (!out.ddpMarkedTwice && MARKED_TWICE.test(line)) out.ddpMarkedTwice = true;
    if (!out.ddpFindUnusedSet && !ERROR_ADVICE.test(line) && FIND_UNUSED_SET.some((re) => re.test(line))) out.ddpFindUnusedSet = true;
    if (out.ddpParameter === undefined) {
      const m = NAMED.exec(line);
      if (m) out.ddpParameter = m[1] ?? m[2];
    }
  }
  return out;
}
