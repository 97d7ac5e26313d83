// The optimizer's state named at the failure, where no frame says the phase (issue 23: the phase decides the lever).
// torch.optim's Adam / AdamW create their state in the first step by fixed code (`_init_group`: state['exp_avg'] =
// torch.zeros_like(p, ...), the same for exp_avg_sq), two tensors of each parameter's size; a line naming that state
// or function beside the OOM, or the creating source line, places the failure in the optimizer step, where a smaller
// batch shrinks nothing. Real thread (blind8 read split) beside synthetic variants written from torch.optim's source
// (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';
import { optimizerStateSaid } from '../../src/diagnose/levers/optimizer-said.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const OPT = /^The optimizer state does not fit/;
const oom = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.10 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.20 GiB is free.';

describe('real thread', () => {
  it("blind8/5618: Adam's _init_group / exp_avg named beside the OOM: offload or shard the optimizer state", async () => {
    const d = first(await firstOfCase('blind8', '5618'));
    expect(d).toMatch(OPT);
    expect(d).toMatch(/offload/);
  });
});

describe("synthetic variants (from torch.optim's state names)", () => {
  it.each([
    ['the state keys in a sentence at the failure', 'OOM when the optimizer creates exp_avg and exp_avg_sq after the first backward'],
    ["a cut traceback's source line", "    state['exp_avg'] = torch.zeros_like(p, memory_format=torch.preserve_format)"],
  ])('%s', async (_n, line) => {
    expect(first(await diagnosePaste([line, oom].join('\n')))).toMatch(OPT);
  });
  it("control: the state keys named on a line without the failure (a checkpoint's keys) do not place it", () => {
    const paste = ['resumed: loaded keys exp_avg, exp_avg_sq from the checkpoint', 'OOM in the forward pass at batch 64', oom].join('\n');
    expect(optimizerStateSaid(paste)).toBeUndefined();
  });
});
