// The H200-style classes of issue 23 through a chat adapter: each log pasted into the console chat
// (`gpu-doctor bot` over a pipe, as test/console-chat.test.ts drives it) gets its class's headline and
// first fix, never "halve the batch" where the batch is not the lever. Logs: test/fixtures/phase-levers
// (real threads, and h200-classes/ written from PyTorch 2.11's and transformers' fixed formats).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const chat = (paste: string) =>
  execFileSync('bin/gpu-doctor', ['bot'], {
    input: `${paste}\n.\n`,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, SLACK_BOT_TOKEN: '', DISCORD_TOKEN: '', LC_ALL: '', LC_MESSAGES: '', LANG: 'C.UTF-8' },
  });
const log = (name: string) => readFileSync(new URL(`../fixtures/phase-levers/${name}`, import.meta.url), 'utf8');
/** The first fix of the reply: the line after "Fix:". */
const firstFix = (reply: string) => /\nFix:\n1\. ([^\n]*)/.exec(reply)?.[1] ?? '';

describe('the H200-style classes pasted into the console chat', () => {
  it.each([
    ['validation without no_grad', 'image-captioning-57-validate.log', /\[cuda_oom\]/, /torch\.no_grad\(\)/],
    ['eval accumulation (Trainer gathering predictions)', 'hf-17089-eval-nested-concat.log', /\[cuda_oom\]/, /eval_accumulation_steps/],
    ['fp32 load of a 70B model', 'h200-classes/fp32-load-70b.log', /\[cuda_oom\]/, /28672 × 8192 × 4 bytes.*fp32/],
    ['ranks on one GPU', 'megatron-661-duplicate-gpu.log', /\[nccl_or_distributed\]/, /set_device\(int\(os\.environ\["LOCAL_RANK"\]\)\)/],
    ['container shm', 'h200-classes/container-shm.log', /\[shm_exhausted\]/, /--ipc=host or --shm-size=8g|--shm-size=8g or --ipc=host/],
    ['another process holding the card', 'h200-classes/another-process.log', /\[cuda_oom\]/, /Another process holds GPU memory.*2210411/],
    [
      'an absurd attention matrix',
      'h200-classes/absurd-attention.log',
      /impossible allocation request[^\n]*\[cuda_oom\]/,
      /768\.00 GiB request on a 79\.19 GiB GPU/,
    ],
  ])(
    '%s',
    (_class, file, headline, fix) => {
      const reply = chat(log(file));
      expect(reply).toMatch(headline);
      const first = firstFix(reply);
      expect(first).toMatch(fix);
      expect(first).not.toMatch(/^(?:Reduce|Halve) the batch/);
    },
    90_000,
  );

  it('a plain batch OOM in a training forward: the batch first, with the corrected command', { timeout: 90_000 }, () => {
    const reply = chat(log('h200-classes/plain-batch.log'));
    expect(reply).toMatch(/\[cuda_oom\]/);
    expect(firstFix(reply)).toMatch(/^Reduce the batch: 64 -> 32/);
    expect(reply).toContain('python train.py --batch_size 32 --epochs 20');
  });

  // One reply that agrees with itself (issue 23 item 7): the holder line says what the headline and the fix say.
  it('an impossible request: "who holds the memory" does not say its own tensors fill the card', { timeout: 90_000 }, () => {
    const reply = chat(log('h200-classes/absurd-attention.log'));
    const holder = /Who holds the memory:\n([^\n]*)/.exec(reply)?.[1] ?? '';
    expect(holder).toMatch(/more than the whole 79\.19 GiB card/);
    expect(holder).not.toMatch(/fill the card/);
  });

  it.each(['image-captioning-57-validate.log', 'hf-17089-eval-nested-concat.log'])(
    '%s: no figures, but the frame the fix quotes is not denied',
    (file) => {
      const reply = chat(log(file));
      expect(reply).toMatch(/Who holds the memory:\nNot stated: the log gives no memory figures[^\n]*only where it failed \(/);
      expect(reply).not.toMatch(/no frame that says what ran/);
    },
    90_000,
  );
});
