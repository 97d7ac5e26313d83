// Stacks read for their own figures and advice for the environment (issue 23 items 4, 5), pasted into the
// console chat (`gpu-doctor bot` over a pipe, as classes-console-chat.test.ts drives it): the reply's headline,
// its "who holds the memory" line and its first fix come from the stack's own format and the environment.
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
const file = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');
const firstFix = (reply: string) => /\nFix:\n1\. ([^\n]*)/.exec(reply)?.[1] ?? '';
const holder = (reply: string) => /Who holds the memory:\n([^\n]*)/.exec(reply)?.[1] ?? '';

describe('non-PyTorch stacks and environments pasted into the console chat', () => {
  it.each([
    [
      'llama.cpp weights (ggml-org/llama.cpp#20431)',
      'knowledge/ggml-cuda-buffer-alloc/match/llama-cpp-20431-weights.log',
      /llama\.cpp \/ ggml could not allocate a buffer on the GPU \[cuda_oom\]/,
      /141\.42 GiB to hold the model's offloaded layers/,
      /-ngl/,
    ],
    [
      'TGI warmup (predibase/lorax#354)',
      'knowledge/tgi-prefill-warmup/match/lorax-354-prefill.log',
      /warmup cannot fit its prefill batch \[cuda_oom\]/,
      /prefill batch of 1024 tokens/,
      /--max-batch-prefill-tokens \(e\.g\. 512\)/,
    ],
    [
      'TensorFlow BFC Stats (synthetic, TF 2.x format)',
      'test/fixtures/stack-routes/tf-gpu-bfc-stats.log',
      /\[cuda_oom\]/,
      /GPU_0_bfc holds 9\.73 GiB of its 10\.07 GiB limit/,
      /batch/,
    ],
  ])(
    '%s',
    (_name, path, headline, why, fix) => {
      const reply = chat(file(path));
      expect(reply).toMatch(headline);
      expect(holder(reply)).toMatch(why);
      expect(holder(reply)).not.toMatch(/gives no memory figures/);
      expect(firstFix(reply)).toMatch(fix);
    },
    90_000,
  );

  it('pinned host RAM in TensorFlow (tensorflow/tensorflow#11915): host memory, not the GPU', { timeout: 90_000 }, () => {
    const reply = chat(file('knowledge/tensorflow-host-bfc/match/tensorflow-11915-cuda-host-bfc.log'));
    expect(reply).toMatch(/host RAM, not the GPU\) \[host_oom_killed\]/);
    expect(firstFix(reply)).toMatch(/TF_GPU_HOST_MEM_LIMIT_IN_MB/);
  });

  it('another process on Colab: restart the session, not "stop what is not yours"', { timeout: 90_000 }, () => {
    const reply = chat(
      [
        'Traceback (most recent call last):',
        '  File "/content/drive/MyDrive/train.py", line 88, in <module>',
        '    outputs = model(**batch)',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 14.75 GiB of which 1.10 GiB is free. Process 2210 has 9.20 GiB memory in use. Including non-PyTorch memory, this process has 4.40 GiB memory in use. Of the allocated memory 4.02 GiB is allocated by PyTorch, and 100.11 MiB is reserved by PyTorch but unallocated.',
      ].join('\n'),
    );
    expect(firstFix(reply)).toMatch(/hosted notebook.*Restart session/);
    expect(reply).not.toMatch(/stop what is not yours/);
  });
});
