// The bot is one long-running process that diagnoses paste after paste, so one paste's diagnosis must not depend on
// the pastes read before it (a global regex's lastIndex, a memo keyed on less than its input, a cache that keeps a
// part of the incident). Principle: the answer is a function of the paste alone. Checked by diagnosing real logs
// of the corpus in one order and again in the reverse order in one process, in English and Chinese, and comparing
// the whole JSON contract and reply text of each. A shared global pattern left mid-text once made the eval lever
// miss code under no_grad after another paste had matched it (levers/eval.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { diagnose } from '../../src/diagnose/diagnose.js';
import { toJsonContract } from '../../src/diagnose/contract.js';
import { diagnosisReply } from '../../src/diagnose/reply.js';
import { renderText } from '../../src/adapters/console/render.js';
import { decodeLog } from '../../src/diagnose/input.js';
import { loadRuleBase } from '../../src/diagnose/rule-base.js';

const ROOT = resolve(import.meta.dirname, '../fixtures/untuned');

/** Every third log of every group, so each group's kinds of paste follow one another in both orders. */
function sample(): string[] {
  const files: string[] = [];
  for (const group of readdirSync(ROOT, { withFileTypes: true })) {
    if (!group.isDirectory()) continue;
    const logs = readdirSync(join(ROOT, group.name))
      .filter((f) => /^\d+-/.test(f))
      .sort();
    logs.forEach((f, i) => i % 3 === 0 && files.push(join(ROOT, group.name, f)));
  }
  return files;
}

describe('a diagnosis depends on its paste alone, not on the pastes diagnosed before it', () => {
  it('the corpus diagnosed forward and then in reverse gives each log the same JSON and the same zh reply', async () => {
    const rules = await loadRuleBase();
    const files = sample();
    expect(files.length).toBeGreaterThan(300);
    const answer = (file: string) => {
      const input = decodeLog(readFileSync(file));
      const json = JSON.stringify(toJsonContract(diagnose(input.text, rules), input));
      const zh = renderText(diagnosisReply(diagnose(input.text, rules, 'zh'), input, 'zh'));
      return `${json}\n${zh}`;
    };
    const forward = new Map(files.map((f) => [f, answer(f)]));
    const differing = [...files].reverse().filter((f) => answer(f) !== forward.get(f));
    expect(differing.map((f) => f.slice(ROOT.length + 1))).toEqual([]);
  }, 120_000);

  // Variants written from the principle: pastes that each set one part of the incident from a pattern that scans
  // the whole text (code under no_grad at the start or further in, eval settings, a growth series, a process list),
  // each diagnosed alone first and then right after every other one.
  it('synthetic pastes give the same answer alone and after any other paste', async () => {
    const rules = await loadRuleBase();
    const frame = (file: string, fn: string, code: string) => [`  File "${file}", line 88, in ${fn}`, `    ${code}`];
    const oom =
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.06 GiB is free. Of the allocated memory 20.11 GiB is allocated by PyTorch, and 212.00 MiB is reserved by PyTorch but unallocated.';
    const evalTb = [
      'Traceback (most recent call last):',
      ...frame('train.py', 'main', 'val_loss = validate(model, val_loader)'),
      ...frame('train.py', 'validate', 'out = model(images)'),
      oom,
    ].join('\n');
    const pastes = [
      `    with torch.no_grad():\n        for images, labels in val_loader:\n${evalTb}`,
      `@torch.no_grad()\ndef validate(model, loader):\n${evalTb}`,
      `${'# notes from the run\n'.repeat(40)}    with torch.inference_mode():\n${evalTb}`,
      `python train.py --per_device_eval_batch_size 16 --eval_accumulation_steps 4 --batch-size 8\n${evalTb}`,
      `Epoch 1 GPU_mem 10.2G\nEpoch 2 GPU_mem 14.8G\nEpoch 3 GPU_mem 19.5G\n${evalTb}`,
      `No with-block here.\n${evalTb}`,
    ];
    const answer = (text: string) => JSON.stringify(toJsonContract(diagnose(text, rules)));
    const alone = pastes.map((p) => {
      answer('a paste that matches nothing');
      return answer(p);
    });
    const differing: string[] = [];
    pastes.forEach((before, i) =>
      pastes.forEach((p, j) => {
        answer(before);
        if (answer(p) !== alone[j]) differing.push(`paste ${j} after paste ${i}`);
      }),
    );
    expect(differing).toEqual([]);
  });
});
