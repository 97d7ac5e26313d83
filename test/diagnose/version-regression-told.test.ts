// Issue 23, the framework_version lever: the report tells a regression, the same run working on one version of a
// library, tool or build and failing on another ("works with transformers==4.51.3, OOM with 4.53.0", "after b1697",
// "bad version / working version", "regression between torch 2.10.0 and 2.11.0", "升级到 X 后"). What changed is the
// version, so the first fix goes back to the version that worked and tries the newest release, quoting only the
// versions of the paste; an upgrade told without a version is a comparison to make, offered after the diagnosis's own
// first fix (levers/version-regression.ts). Real examples: blind9 5773, blind10 6283 and 6295 (public threads, URLs in
// their cases.json) and the version13 group; the other texts are synthetic variants written from the principle.
// In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readToldRegression } from '../../src/diagnose/levers/version-regression.js';

const VERSION_FIRST = /^The report says (?:the same run work(?:s|ed) on|it fails since)/;

describe('a regression the report tells between two versions: the version is the first fix', () => {
  it.each([
    ['blind9', '5773', 'torch 2.10.0+cu130'],
    ['blind10', '6283', 'transformers 4.51.3'],
    ['blind10', '6295', 'b1696'],
    ['version13', '6700', 'diffusers 0.16'],
    ['version13', '6702', 'vllm 0.7.3'],
    ['version13', '6703', '0.11.2'],
    ['version13', '6704', 'VLLM 0.6.3'],
    ['version13', '6705', '2.5.10'],
    ['version13', '6708', 'transformers 4.28.1'],
    ['version13', '6710', '4.37.2'],
    ['phase4', '1714', 'pytorch 0.4.0'],
    ['version13', '6716', '1.1.1'],
    ['version13', '6717', '14.12.2019'],
    ['version13', '6718', 'torch 2.11.0.dev20260129+cu126'],
    ['version13', '6721', 'PyTorch 2.10.0+xpu'],
    ['version13', '6722', 'deepspeed 0.3.16'],
    ['version13', '6723', 'DeepSpeed 0.75'],
    ['version13', '6725', '0.22.0'],
  ])('real %s/%s', async (g, n, good) => {
    const d = await firstOfCase(g, n);
    expect(d?.fixes[0]?.summary).toMatch(VERSION_FIRST);
    expect(d?.fixes[0]?.summary).toContain(`Downgrade to ${good}`);
    expect(d?.fixes[0]?.changes).not.toHaveProperty('batch');
  });

  it.each([
    ['version13', '6701'],
    ['version13', '6706'],
  ])('real %s/%s: an update told with "the same conditions" / "worked before" and no version: the comparison comes first', async (g, n) => {
    const d = await firstOfCase(g, n);
    expect(d?.fixes[0]?.summary).toMatch(/^The report says it started after an upgrade/);
  });

  it('real version13/6707: a move between versions whose commands differ (no "same settings") keeps the diagnosis own first fix', async () => {
    const d = await firstOfCase('version13', '6707');
    expect(d?.fixes[0]?.summary).not.toMatch(/^The report says/);
    expect(d?.fixes[1]?.summary).toMatch(/^The report says the same run works on vllm 0\.7\.3/);
  });

  it('real version13/6713 (near miss): "workflows that used to work" after an update: the comparison comes second', async () => {
    const d = await firstOfCase('version13', '6713');
    expect(d?.fixes[0]?.summary).not.toMatch(/^The report says/);
  });

  it('real blind9/5712: PyTorch 0.3 -> 0.4 is the removed volatile, whose lever (no_grad) stays first', async () => {
    const d = await firstOfCase('blind9', '5712');
    expect(d?.fixes[0]?.summary).toMatch(/no_grad/);
  });

  // synthetic: the forms reports use, each beside a memory failure
  const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free.';
  const told: Record<string, [string, string]> = {
    'works with ==, fails with ==': [`${OOM}\nThe same script works with transformers==4.40.0 and fails with transformers==4.41.0.`, 'transformers 4.40.0'],
    'contrast in one sentence': [`${OOM}\nvllm 0.6.3 works fine, but vllm 0.6.4 runs out of memory on the same model.`, 'vllm 0.6.3'],
    'issue template labels': [`${OOM}\n- working version: 2.3.1\n- bad version: 2.4.0`, '2.3.1'],
    'regression between': [`${OOM}\nLooks like a regression between diffusers 0.30.0 and 0.31.0.`, 'diffusers 0.30.0'],
    'Chinese, upgrade to X': [`${OOM}\n升级到 vllm 0.7.0 后显存不足，vllm 0.6.6 版本正常。`, 'vllm 0.6.6'],
    'a move between versions with the same settings': [
      `${OOM}\nAfter I upgraded diffusers from 0.20.0 to 0.21.0 the same script runs out of memory.`,
      'diffusers 0.20.0',
    ],
    'bare three-part versions': [`${OOM}\nIt works fine with 3.2.1, and 3.3.0 runs out of memory.`, '3.2.1'],
    'can run with X, cannot with Y': [`${OOM}\nI can run the same command with sglang 0.4.1,but cannot with sglang 0.4.3.`, 'sglang 0.4.1'],
    'Chinese, the version used before and the same workflow': [`${OOM}\n之前用的是 1.2.0 版本，同样的工作流，现在的版本显存不足。`, '1.2.0'],
  };
  it.each(Object.entries(told))('synthetic: %s', async (_name, [text, good]) => {
    const d = await diagnosePaste(text);
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toContain(`Downgrade to ${good}`);
  });

  it('synthetic: the failing version alone, after an upgrade, quotes no version it was not given', async () => {
    const d = await diagnosePaste(`${OOM}\nIt started after upgrading to torch 2.5.0.`);
    expect(d?.fixes[0]?.summary).toMatch(/fails since torch 2\.5\.0/);
    expect(d?.fixes[0]?.summary).toContain('the version you ran before');
  });

  it('synthetic: an upgrade told without a version is a comparison, after the diagnosis own first fix', async () => {
    const d = await diagnosePaste(`${OOM}\nAfter upgrading transformers, training runs out of memory.`);
    expect(d?.fixes[0]?.summary).not.toMatch(/^The report says it started after an upgrade/);
    expect(d?.fixes[1]?.summary).toMatch(/^The report says it started after an upgrade/);
  });

  it('synthetic: an update told with "the same settings" and no version: the comparison comes first', async () => {
    const d = await diagnosePaste(`${OOM}\nAfter the update, generation runs out of memory with the same settings.`);
    expect(d?.fixes[0]?.summary).toMatch(/^The report says it started after an upgrade/);
  });

  it('synthetic: "it worked fine before" the update says nothing of the settings: the comparison comes second', async () => {
    const d = await diagnosePaste(`${OOM}\nAfter the update, generation runs out of memory. It worked fine before.`);
    expect(d?.fixes[0]?.summary).not.toMatch(/^The report says/);
    expect(d?.fixes[1]?.summary).toMatch(/^The report says it started after an upgrade/);
  });

  it('synthetic: one package at two releases of one line, with the same code: the older one ran', async () => {
    const d = await diagnosePaste(`${OOM}\nLast month: accelerate==0.20.3. Today, the same code with accelerate==0.21.0 fails.`);
    expect(d?.fixes[0]?.summary).toContain('Downgrade to accelerate 0.20.3');
  });

  it('synthetic: a move between versions beside another changed setting is offered second', async () => {
    const d = await diagnosePaste(`${OOM}\nI upgraded from vllm 0.5.0 to vllm 0.6.0 and raised --max-model-len to 32768.`);
    expect(d?.fixes[0]?.summary).not.toMatch(/^The report says/);
    expect(d?.fixes[1]?.summary).toMatch(/^The report says the same run works on vllm 0\.5\.0 and fails on vllm 0\.6\.0/);
  });

  // synthetic controls: numbers that are no versions, an upgrade tried as a fix, versions only listed
  it.each([
    `${OOM}\nWith --gpu-memory-utilization 0.9 it fails, with 0.8 it works.`,
    `${OOM}\nI upgraded to the latest torch 2.5.0 but it still runs out of memory.`,
    `${OOM}\nEnvironment: torch 2.1.0, transformers 4.35.0, CUDA 12.1.`,
    `${OOM}\nBatch size 16 works, 32 fails.`,
    `${OOM}\nlr 0.001 works fine.`,
    `${OOM}\nPyTorch version: 2.2.0a0+81ea7a4\nCUDA used to build PyTorch: 12.3\nCUDA runtime version: 12.3.107\nI ran the same code several times.`,
    `${OOM}\ncuda 12.3 works fine, cuda 12.3.107 is what I have.`,
    `${OOM}\n| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |\nIt worked fine yesterday.`,
  ])('synthetic control: no told regression (%#)', async (text) => {
    expect(readToldRegression(text)?.bad).toBeUndefined();
    const d = await diagnosePaste(text);
    expect(d?.fixes[0]?.summary ?? '').not.toMatch(/^The report says (?:the same run works|it fails since|it started after)/);
  });
});
