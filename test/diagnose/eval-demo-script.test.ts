// Principle (issue 23, phase): running a repository's demo script (`python demo.py`, "when I run demo.py") is an
// inference-only run, as running its test.py or eval.py is: no optimizer, no backward. With no frame that says otherwise,
// the failure is read as an evaluation of the script's own, whose first lever is no_grad / inference_mode (a forward with
// gradients keeps its graph), not the training batch. Frames still decide where the paste has them. The real log is from
// the read split blind6; the others are synthetic variants written from the principle.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';
const OOM_OLD =
  'RuntimeError: CUDA out of memory. Tried to allocate 88.00 MiB (GPU 0; 7.93 GiB total capacity; 6.82 GiB already allocated; 68.50 MiB free; 65.36 MiB cached)';

describe('a demo script is an inference run', () => {
  it('blind6/3823 (real): DSFD "i got memory error when i run demo.py": no_grad first', async () => {
    const d = await firstOfCase('blind6', '3823');
    expect(d?.fixes[0]?.summary).toMatch(/no_grad|inference_mode/);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it('synthetic: "python tools/demo.py --image x.jpg" then the OOM', async () => {
    expect(await first(`$ python tools/demo.py --image street.jpg\n${OOM_OLD}`)).toMatch(/no_grad|inference_mode/);
  });
  it('synthetic control: a training script is not an inference run', async () => {
    expect(await first(`$ python train.py --epochs 10\n${OOM_OLD}`)).not.toMatch(/evaluation loop/);
  });
  it('synthetic control: frames of a model load decide over the demo command', async () => {
    const log = [
      '$ python demo.py',
      'Traceback (most recent call last):',
      '  File "demo.py", line 12, in <module>',
      '    model = AutoModelForCausalLM.from_pretrained(path).cuda()',
      '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 905, in cuda',
      '    return self._apply(lambda t: t.cuda(device))',
      OOM_OLD,
    ].join('\n');
    expect(await first(log)).not.toMatch(/evaluation loop/);
  });
});
