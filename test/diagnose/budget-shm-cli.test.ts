// Through the CLI (`gpu-doctor diagnose --json`): the static memory budget, /dev/shm in containers and
// Ray's memory monitor decide the first fix (issue 23). Synthetic variants written from each principle
// (a different model family, card, launcher or writer each), beside real threads of budget4/.
import { describe, expect, it } from 'vitest';
import { firstOfCase, type CaseDiagnosis, diagnosePaste } from './corpus-case.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const noBatchChange = (d: CaseDiagnosis | undefined) => (d?.fixes ?? []).every((f) => typeof f.changes.batch !== 'number');

// A report that quotes its code and the error, with no traceback: the request is one weight matrix in fp32.
const fp32Load = (model: string, tried: string, total: string, allocated: string, dtypeArg = '') =>
  [
    `model = AutoModelForCausalLM.from_pretrained("${model}", device_map="auto"${dtypeArg}).cuda()`,
    '',
    'It fails on that line with:',
    `torch.OutOfMemoryError: CUDA out of memory. Tried to allocate ${tried}. GPU 0 has a total capacity of ${total} of which 20.06 MiB is free. Including non-PyTorch memory, this process has ${allocated} memory in use. Of the allocated memory ${allocated} is allocated by PyTorch, and 1.50 MiB is reserved by PyTorch but unallocated.`,
  ].join('\n');

describe('the weights in fp32, read from the failed request, do not fit: load in half precision, not a smaller batch', () => {
  it.each([
    ['Mistral-7B on a 24 GB card (224 MiB = 14336 × 4096 × 4)', fp32Load('mistralai/Mistral-7B-v0.1', '224.00 MiB', '23.64 GiB', '23.40 GiB')],
    ['Llama-2-7b on a 24 GB card (172 MiB = 11008 × 4096 × 4)', fp32Load('meta-llama/Llama-2-7b-chat-hf', '172.00 MiB', '23.65 GiB', '22.99 GiB')],
    ['Llama-3.1-8B on a 24 GB card (224 MiB)', fp32Load('meta-llama/Llama-3.1-8B-Instruct', '224.00 MiB', '23.55 GiB', '23.30 GiB')],
  ])('%s', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/do not fit in fp32.*× 4 bytes/);
    expect(first(d)).toMatch(/torch_dtype=torch\.bfloat16/);
    expect(noBatchChange(d)).toBe(true);
  });
  it('the same paste loading in bf16 already is not told to load in half precision', async () => {
    const d = await diagnoseText(fp32Load('mistralai/Mistral-7B-v0.1', '224.00 MiB', '23.64 GiB', '23.40 GiB', ', torch_dtype=torch.bfloat16'));
    expect(JSON.stringify(d?.fixes ?? [])).not.toMatch(/do not fit in fp32/);
  });
  it('real thread (budget4/1800, InternLM-Chat-7B on a 4090): the 172 MiB request is read as fp32', async () => {
    const d = await firstOfCase('budget4', '1800');
    expect(first(d)).toMatch(/7B parameters in fp32 .*11008 × 4096 × 4 bytes.*Load them in half precision/);
  });
});

describe('weights that do not fit in 16-bit at load or inference: quantize or split, not LoRA or ZeRO', () => {
  it('real thread (budget4/1802, CodeGeeX-13B on a 3090): the weights lever, not the training text', async () => {
    const d = await firstOfCase('budget4', '1802');
    // The weights lever: the holder's words, or levers/quantize.ts's arithmetic when the name sizes the model.
    expect(first(d)).toMatch(/weights (?:are what fills|alone fill) the card.*quantized/);
    expect(first(d)).not.toMatch(/Train LoRA/);
  });
});

describe('/dev/shm: NCCL or DataLoader workers, with the flag of the place the job runs', () => {
  const ncclSegment = 'host:12:40 [1] misc/shmutils.cc:112 NCCL WARN Error while creating shared memory segment /dev/shm/nccl-Qx81Za (size 9637888)';
  it.each([
    [
      'vLLM tensor parallel in Docker',
      `$ docker run --gpus all vllm/vllm-openai:latest --tensor-parallel-size 2\n${ncclSegment}\ntorch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5`,
      /--ipc=host/,
    ],
    ['torchrun in a pod', `$ kubectl logs trainer-0\n${ncclSegment}\nRuntimeError: NCCL error: unhandled system error`, /emptyDir with medium: Memory/],
    ['the segment alone', ncclSegment, /--shm-size=8g.*emptyDir/],
  ])('NCCL, %s', async (_name, text, how) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/NCCL could not create its shared-memory segment \(9637888 bytes each/);
    expect(first(d)).toMatch(how);
    expect(first(d)).not.toMatch(/NCCL_SOCKET_IFNAME/);
  });
  it('DataLoader workers in a pod: the pod spec, with workers as the fallback', async () => {
    const d = await diagnoseText(
      "$ kubectl logs train-5\nRuntimeError: DataLoader worker (pid 311) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
    );
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/DataLoader workers .* emptyDir with medium: Memory/);
    expect(first(d)).not.toMatch(/--ipc=host/);
  });
  it('real thread (budget4/1804, EasyR1 under Ray with NCCL_SHM_DISABLE in its runtime_env): shm first, and the ignored setting said', async () => {
    const d = await firstOfCase('budget4', '1804');
    expect(d?.category).toBe('shm_exhausted');
    expect(first(d)).toMatch(/does not reach the process that failed/);
  });
});

describe("Ray's memory monitor is host RAM: Ray's knobs, not DataLoader workers or the GPU", () => {
  it.each([
    [
      'a training actor, Ray 2.x sentence',
      'Memory on the node (IP: 10.1.2.3, ID: 9a) where the task (actor ID: 77, name=PPOTrainer.__init__, pid=4410, memory used=58.20GB) was running was 120.10GB / 125.80GB (0.954698), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 5c) because it was the most recently scheduled task',
      /PPOTrainer\.__init__, 58\.20 GB; node 120\.10 \/ 125\.80 GB ≥ 0\.95/,
    ],
    [
      'the raylet summary only',
      '(raylet) node_manager.cc:3069: 2 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 1f, IP: 10.0.0.4) over the last time period.',
      /RAY_memory_usage_threshold/,
    ],
  ])('%s', async (_name, text, figures) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/Ray's memory monitor killed the task because the node's RAM/);
    expect(first(d)).toMatch(figures);
    expect(first(d)).not.toMatch(/DataLoader workers/);
  });
  it('real thread (budget4/1810, vLLM Ray worker): host RAM, not a serving knob', async () => {
    const d = await firstOfCase('budget4', '1810');
    expect(d?.category).toBe('host_oom_killed');
    expect(first(d)).toMatch(/RayWorkerVllm\.__init__, 11\.15 GB/);
  });
});
