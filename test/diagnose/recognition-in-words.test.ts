// Failures the paste states only in the reporter's words (issue 23, recognition): an issue's title or a chat
// message's first line that names the failure in fixed vocabulary (OOM, out of memory; RAM / 内存 for the host),
// with no error of it and no other exception in the paste, is recognised by a recognition rule that the
// failure's own rule answers (knowledge/oom-reported-in-words, host-oom-reported-in-words; rule.yaml `answers`).
// Confusers stay confusers: talk of avoiding an OOM, another exception that explains the failure, a real
// message that its own rule reads. Through the CLI's own entry in this process (`gpu-doctor diagnose --json -`, the
// paste on stdin; corpus-case.ts).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { compileRuleBase, readRules, RuleLoadError } from '../../src/diagnose/rule-base.js';
import { diagnoseOutput } from './corpus-case.js';

// The first case compiles the rule base; generous for a shared, loaded CI machine (no timing is asserted).
const TEST_TIMEOUT = 180_000;
interface D {
  rule: string;
  category: string;
  fixes: { summary: string }[];
}
interface Out {
  diagnoses: D[];
  notMemory?: { exception: string };
}

async function diagnose(paste: string): Promise<Out> {
  return JSON.parse(await diagnoseOutput(['--json', '-'], { paste })) as Out;
}

describe('a GPU out-of-memory stated in the first line, with no error message of it', () => {
  // The DeepSpeed thread's own title above its cut traceback (static5/2108), and variants written from the principle.
  it.each([
    'ZeRO2 out of memory with Megtron-LM for less than 30B parameters\n[INFO] Creating fp16 ZeRO stage 2 optimizer\nTraceback (most recent call last):\n  File "pretrain_gpt2.py", line 708, in <module>\n    main()\n',
    'CUDA OOM when fine-tuning llama 7B with LoRA\nI am using a single A100 40GB.',
    'OOM on the first eval\nTraining runs fine for 1000 steps on a 24GB 3090, then the first evaluation crashes.',
    'out of memory when batch size 32\nWith batch size 16 it trains, with 32 it fails at the first step. Using a 2080 Ti.',
    'Model loading runs out of memory\nLoading the 13B model on my 24 GB card fails.',
    '[BUG] Qwen2-VL OOM at 8k context on 4x4090\n![screenshot](https://example.invalid/1.png)',
  ])(
    '%#: the GPU OOM answer, saying it read the words and asking for the figures that decide',
    async (paste) => {
      const out = await diagnose(paste);
      expect(out.diagnoses[0]).toMatchObject({ rule: 'oom-reported-in-words', category: 'cuda_oom' });
      const fixes = out.diagnoses[0].fixes.map((f) => f.summary);
      expect(fixes.at(-1)).toMatch(/report's own words: the paste holds no error message/);
    },
    TEST_TIMEOUT,
  );

  it(
    'in a Chinese terminal the reply says it in Chinese',
    async () => {
      const text = await diagnoseOutput(['-'], { paste: 'CUDA OOM when running inference with a 7B model\n就是跑不动', locale: 'zh' });
      expect(text).toContain('依据报告里的描述');
      expect(text).toContain('这个回答是根据报告里的描述得出的');
    },
    TEST_TIMEOUT,
  );
});

describe('host RAM stated in the first line', () => {
  // The quantised-model thread's title (novel/1228) and variants.
  it.each([
    '在16G的无gpu机器上运行Int 4量化模型，16G内存都跑不起来\n程序启动 模型加载到90%左右，就out of memory了',
    'CPU RAM OOM when loading the 70B checkpoint\nThe machine has 64 GB.',
    'System memory runs out during tokenization of a 200 GB corpus',
    '训练模型时减少内存的使用\n训练集增长到1700张时电脑会重启，猜测最有可能的原因就是内存溢出。',
  ])(
    '%#: the host-RAM answer at lower confidence',
    async (paste) => {
      const out = await diagnose(paste);
      expect(out.diagnoses[0]).toMatchObject({ rule: 'host-oom-reported-in-words', category: 'host_oom_killed' });
      expect(out.diagnoses[0].fixes.at(-1)!.summary).toMatch(/report's own words/);
    },
    TEST_TIMEOUT,
  );
});

describe('confusers stay confusers', () => {
  it.each([
    'How to avoid OOM when fine-tuning a 7B model?\nWhat settings should I use on a 24 GB card?',
    'Reduce memory usage to prevent out of memory on long sequences',
    '[Feature] estimate memory before loading to predict OOM',
    'Training does not OOM anymore after the update',
  ])(
    '%#: a first line about avoiding or estimating an OOM is no failure',
    async (paste) => {
      expect((await diagnose(paste)).diagnoses).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'another exception in the paste explains the failure: the title never overrides its type',
    async () => {
      const paste = [
        'OOM with the big test set',
        'Traceback (most recent call last):',
        '  File "eval.py", line 12, in <module>',
        '    label = mapping[name]',
        "KeyError: 'cat'",
      ].join('\n');
      const out = await diagnose(paste);
      expect(out.diagnoses).toEqual([]);
      expect(out.notMemory?.exception).toBe('KeyError');
    },
    TEST_TIMEOUT,
  );

  it(
    'a run that got past an OOM and failed later for another reason is that reason',
    async () => {
      const paste = [
        'Out of memory at the first step, then it crashes',
        'I lowered the batch and the OOM went away, but now:',
        'Traceback (most recent call last):',
        '  File "train.py", line 40, in <module>',
        '    out = model(x)',
        'RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!',
      ].join('\n');
      const out = await diagnose(paste);
      expect(out.diagnoses.filter((d) => d.category === 'cuda_oom')).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it(
    'host memory named on the first line is not a GPU OOM',
    async () => {
      const out = await diagnose('Process killed: out of memory (RAM) while loading the dataset');
      expect(out.diagnoses.every((d) => d.category !== 'cuda_oom')).toBe(true);
    },
    TEST_TIMEOUT,
  );

  it(
    'a real error message is read by its own rule, and the words add no second answer',
    async () => {
      const paste = [
        'OOM on the first eval',
        'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.64 GiB of which 1.10 GiB is free.',
      ].join('\n');
      const out = await diagnose(paste);
      expect(out.diagnoses[0].rule).toBe('cuda-oom');
      expect(out.diagnoses.map((d) => d.rule)).not.toContain('oom-reported-in-words');
    },
    TEST_TIMEOUT,
  );
});

describe("a framework's own words for a GPU allocation it could not make", () => {
  it.each([
    // TensorRT's builder and runtime (an SDXL demo's engine load; mmdeploy's and StreamDiffusion's engine builds)
    '[W] Requested amount of GPU memory (20132809216 bytes) could not be allocated. There may not be enough free memory for allocation to succeed.',
    '[11/10/2022-15:02:13] [TRT] [W] Requested amount of GPU memory (4294967296 bytes) could not be allocated.',
    '[W] UNSUPPORTED_STATESkipping tactic 0 due to insufficient memory on requested size of 11580055552 detected for tactic 0x0000000000000000.',
  ])(
    '%#: TensorRT, answered as a GPU out-of-memory',
    async (paste) => {
      const out = await diagnose(paste);
      expect(out.diagnoses[0]).toMatchObject({ rule: 'tensorrt-gpu-memory', category: 'cuda_oom' });
      expect(out.diagnoses[0].fixes.at(-1)!.summary).toMatch(/setMemoryPoolLimit/);
    },
    TEST_TIMEOUT,
  );

  it(
    "beside CUDA's own message, the CUDA rule answers",
    async () => {
      const out = await diagnose(
        '[W] Requested amount of GPU memory (4294967296 bytes) could not be allocated.\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has a total capacity of 15.70 GiB of which 1.20 GiB is free.',
      );
      expect(out.diagnoses.map((d) => d.rule)).toEqual(['cuda-oom']);
    },
    TEST_TIMEOUT,
  );

  it(
    "the title's Chinese words for it: 无法分配请求的GPU内存量 is GPU memory, CPU内存不足 is host RAM",
    async () => {
      expect((await diagnose('推理模型时 无法分配请求的GPU内存量\n![image](https://example.invalid/1.png)')).diagnoses[0]?.rule).toBe('oom-reported-in-words');
      expect((await diagnose('加载模型时CPU内存不足\n机器只有32G')).diagnoses[0]?.rule).toBe('host-oom-reported-in-words');
    },
    TEST_TIMEOUT,
  );
});

describe('a container killed with exit 137', () => {
  const inspect = (oom: string) => `"State": {\n    "Status": "exited",\n    "OOMKilled": ${oom},\n    "ExitCode": 137\n},`;
  it(
    'docker inspect\'s "OOMKilled": false says it was not the memory limit, also beside "Exit Code 137"',
    async () => {
      const out = await diagnose(`Container Termination Discrepancy for Exit Code 137\n${inspect('false')}`);
      expect(out.diagnoses.filter((d) => d.category === 'host_oom_killed')).toEqual([]);
    },
    TEST_TIMEOUT,
  );

  it.each([inspect('true'), 'State:          Terminated\n  Reason:       OOMKilled\n  Exit Code:    137'])(
    '%#: OOMKilled as true or as the reason is the host-RAM kill',
    async (paste) => {
      expect((await diagnose(paste)).diagnoses[0]).toMatchObject({ rule: 'host-oom-killed', category: 'host_oom_killed' });
    },
    TEST_TIMEOUT,
  );
});

describe('rule.yaml answers: a recognition rule is answered by another rule', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gd-answers-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const rule = (id: string, body: string) => {
    mkdirSync(join(dir, id), { recursive: true });
    writeFileSync(join(dir, id, 'rule.yaml'), `id: ${id}\ntitle: ${id} as a title\npriority: 10\npatterns: ['${id} happened']\nsource: {note: test}\n${body}`);
  };
  const load = async () => {
    const { files, rules } = await readRules(dir);
    return compileRuleBase(files, rules);
  };

  it(
    "takes the answering rule's conditions and fixes after its own",
    async () => {
      rule('answer-rule', "category: cuda_oom\nwhen: [not_absurd_request]\nfixes: [{kind: advice, text: 'the answer'}]\n");
      rule('words-rule', "category: cuda_oom\nanswers: answer-rule\nfixes: [{kind: advice, text: 'said in words'}]\n");
      const base = await load();
      const words = base.rules.find((r) => r.id === 'words-rule')!;
      expect(words.fixes.map((f) => f.text)).toEqual(['the answer', 'said in words']);
      expect(words.when).toEqual(['not_absurd_request']);
    },
    TEST_TIMEOUT,
  );

  it(
    'refuses an answer of another category or one that is no rule, and a rule with neither fixes nor answers',
    async () => {
      rule('words-rule', 'category: host_oom_killed\nanswers: answer-rule\nfixes: []\n');
      await expect(load()).rejects.toThrow(RuleLoadError);
      await expect(load()).rejects.toThrow(/category must be cuda_oom/);
      rule('words-rule', 'category: cuda_oom\nanswers: no-such-rule\nfixes: []\n');
      await expect(load()).rejects.toThrow(/"no-such-rule" is no rule's id/);
      rule('words-rule', 'category: cuda_oom\nfixes: []\n');
      await expect(load()).rejects.toThrow(/a rule needs fixes unless it answers another rule/);
    },
    TEST_TIMEOUT,
  );
});
