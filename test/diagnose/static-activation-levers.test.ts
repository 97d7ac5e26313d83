// The static and activation levers and their order (issue 23): quantize or a smaller model when inference or adapter
// training holds 16-bit weights that fill the card (src/diagnose/levers/quantize.ts), mixed precision first when
// training is shown in fp32 at a small or unstated batch (levers/amp.ts), and one large input read from the settings
// that name it (diffusers/CompVis height and width, YOLOv5's --img, Detectron2's TEST sizes, a video's frames;
// levers/input-size.ts). Synthetic variants written from each principle, in English and Chinese, through the CLI's
// own entry (diagnoseFile), beside the counter-cases where another lever must stay first.
import { describe, expect, it } from 'vitest';
import { type CaseDiagnosis, diagnosePaste } from './corpus-case.js';
import { readInputSize } from '../../src/diagnose/levers/input-size.js';
import { readFp32Training } from '../../src/diagnose/levers/amp.js';

// Each paste goes to the CLI's own entry on stdin, in process (corpus-case.ts).
const diagnoseText = diagnosePaste;
const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const oom = (total: string, allocated: string) =>
  `torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 100.00 MiB (GPU 0; ${total} GiB total capacity; ${allocated} GiB already allocated; 50.00 MiB free; ${allocated} GiB reserved in total by PyTorch)`;
const BACKWARD = '  File "/usr/lib/python3/site-packages/torch/autograd/__init__.py", line 200, in backward\n';
const OOM_24 = oom('23.65', '22.90');

describe('quantize or a smaller model: inference or adapter training whose 16-bit weights fill the card', () => {
  it.each([
    [
      'generate, 13B fp16 on a 24 GiB card',
      `model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-13b-chat-hf", torch_dtype=torch.float16)\nout = model.generate(ids, max_new_tokens=256)\n${OOM_24}`,
    ],
    [
      'prose, no dtype stated, the card named with its size',
      'I run Llama-2-13b-chat-hf on my RTX 4090 24GB and generate() fails\ntorch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB',
    ],
    ['Chinese, 7B on a 12 GB card', `用 Qwen-7B-Chat 在 3060 12G 上推理，显存不够\n${oom('12.00', '11.20')}`],
    [
      '8-bit already, 40B on a 40 GB card: 4 bits next',
      `model = AutoModelForCausalLM.from_pretrained("tiiuae/falcon-40b", load_in_8bit=True)\n${oom('39.39', '38.90')}`,
    ],
  ])('%s: quantize first, with the arithmetic', async (_name, text) => {
    const d = await diagnoseText(text);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(/^(?:The weights alone fill the card|光是权重就占满了卡)/);
    expect(first(d)).toMatch(/in 4 bits ≈|4-bit 时约/);
    expect(first(d)).toMatch(/quantiz|量化/i);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
  });
  it.each([
    [
      'PEFT frames, 13B base',
      `python finetune.py --base_model meta-llama/Llama-2-13b-hf --micro_batch_size 1\n  File "/site-packages/peft/tuners/lora.py", line 100, in forward\n${OOM_24}`,
    ],
    ['Chinese, LoRA on a 7B base with a 12 GB card', `用 lora 微调 Baichuan2-7B，batch_size=1，3060 12G\n${BACKWARD}${oom('12.00', '11.40')}`],
  ])("adapter training, %s: QLoRA's 4-bit base first", async (_name, text) => {
    const first0 = first(await diagnoseText(text));
    expect(first0).toMatch(/^(?:The frozen base model alone fills the card|光是冻结的底座模型就占满了卡)/);
    expect(first0).toMatch(/load_in_4bit=True/);
  });
  it('even 4 bits leave no room: a smaller model or more GPUs', async () => {
    const first0 = first(
      await diagnoseText(`model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-70b-chat-hf", torch_dtype=torch.float16)\n${OOM_24}`),
    );
    expect(first0).toMatch(/^The weights do not fit this card even quantized/);
  });
  it.each([
    [
      'full training: the optimizer state, not quantization',
      `python train.py --model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 1 --bf16\n  File "/site-packages/torch/optim/adamw.py", line 100, in step\n${oom('79.15', '78.00')}`,
    ],
    [
      'weights that leave room (7B fp16 on 80 GiB)',
      `model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-7b-hf", torch_dtype=torch.float16)\nout = model.generate(ids)\n${oom('79.15', '78.00')}`,
    ],
  ])('%s: no quantize first', async (_name, text) => {
    expect(first(await diagnoseText(text))).not.toMatch(/^(?:The weights alone fill the card|The frozen base model)/);
  });
});

describe('mixed precision first: fp32 training shown at a batch of 1 or 2 or none', () => {
  it.each([
    ['HF flag turned off, batch 2', `python train.py --fp16 False --per_device_train_batch_size 2\n${BACKWARD}${OOM_24}`, '--fp16 False'],
    ["Lightning's precision=32, batch unstated", `trainer = pl.Trainer(precision=32, accelerator="gpu")\n${BACKWARD}${OOM_24}`, 'precision=32'],
    [
      "Chinese, accelerate's mixed_precision: no at batch 1",
      `accelerate 配置 mixed_precision: no，batch_size=1，3090 训练就爆显存\n${BACKWARD}${OOM_24}`,
      'mixed_precision: no',
    ],
    ['a YAML amp: false', `model:\n  amp: false\ntrain:\n  batch_size: 1\n${BACKWARD}${OOM_24}`, 'amp: false'],
  ])('%s', async (_name, text, setting) => {
    const d = await diagnoseText(text);
    expect(first(d)).toMatch(/^(?:Training runs in fp32|训练跑在 fp32 上)/);
    expect(first(d)).toContain(setting);
    expect(d?.fixes[0]?.changes?.batch).toBeUndefined();
  });
  it("TensorFlow's failed tensor of type float at batch 1: Keras' mixed-precision policy first", async () => {
    const d = await diagnoseText(
      'model.fit(x, y, batch_size=1, epochs=10)\nEpoch 1/10\nRTX 3090\nResourceExhaustedError: OOM when allocating tensor with shape[1,64,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
    );
    expect(first(d)).toMatch(/^Training runs in fp32: the tensor that did not fit is fp32/);
    expect(first(d)).toContain("set_global_policy('mixed_float16')");
  });
  it("TensorFlow's failed tensor of type float is fp32 training; type half is not", () => {
    const oomOf = (type: string) => `OOM when allocating tensor with shape[1,64,1024,1024] and type ${type} on /job:localhost`;
    expect(readFp32Training(`Epoch 1/10\n${oomOf('float')}`)).toMatch(/type float$/);
    expect(readFp32Training(`Epoch 1/10\n${oomOf('half')}`)).toBeUndefined();
    // No training frame or line: a prediction in fp32 is no training to put under mixed precision.
    expect(readFp32Training(oomOf('float'))).toBeUndefined();
  });
  it.each([
    ['a batch of 16 keeps the batch first', `python train.py --fp16 False --batch_size 16\n${BACKWARD}${OOM_24}`],
    [
      'half precision stated elsewhere (bf16 beside fp16 off)',
      `python train.py --fp16 False --bf16 True --per_device_train_batch_size 1\n${BACKWARD}${OOM_24}`,
    ],
    ['a pre-Volta card (no tensor cores, no bf16)', `GTX 1080 Ti 11GB, python train.py --amp false --batch_size 1\n${BACKWARD}${oom('10.92', '10.20')}`],
    [
      'inference',
      `pipe = pipeline("text-generation", model=m, fp16=False)\n  File "/site-packages/transformers/generation/utils.py", line 1, in generate\n${OOM_24}`,
    ],
  ])('%s: no mixed precision first', async (_name, text) => {
    expect(first(await diagnoseText(text))).not.toMatch(/^Training runs in fp32/);
  });
  it('--fp16 False states no half precision', async () => {
    const d = await diagnoseText(`python train.py --fp16 False --per_device_train_batch_size 2\n${BACKWARD}${OOM_24}`);
    expect(d?.facts.dtype).toBeUndefined();
  });
});

describe('one large input read from the settings that name it', () => {
  it.each([
    ["diffusers' height and width", 'image = pipe(prompt, height=2048, width=2048).images[0]', 2048 * 2048],
    ["CompVis txt2img's --H and --W", 'python scripts/txt2img.py --prompt "a cat" --W 1536 --H 1024 --n_samples 1', 1024 * 1536],
    ["YOLOv5's --img", 'python train.py --img 1280 --batch 2 --data coco.yaml', 1280 * 1280],
    ["Detectron2's test size", 'python tools/train_net.py --eval-only INPUT.MIN_SIZE_TEST 1600', 1600 * 1600],
    ["a video's frames times its size", 'python sample.py --num_frames 49 --height 720 --width 1280', 49 * 720 * 1280],
    ["TF's 5-d volume, channels first", 'OOM when allocating tensor with shape[1,16,160,192,224] and type float', 160 * 192 * 224],
    ["TF's 5-d volume, channels last", 'OOM when allocating tensor with shape[2,128,128,96,32] and type float', 128 * 128 * 96],
  ])('%s', (_name, text, pixels) => {
    expect(readInputSize(text).inputPixels).toBe(pixels);
  });
  it.each([
    ['CompVis flags, no batch', `python scripts/txt2img.py --prompt "a castle" --H 1536 --W 1536\n${OOM_24}`, '--H 1536 --W 1536'],
    ['YOLOv5 --img at batch 2', `python train.py --img 1280 --batch 2 --data coco.yaml --weights yolov5s.pt\n${BACKWARD}${OOM_24}`, '--img 1280'],
    ['video sampler, Chinese', `生成视频时爆显存：python sample.py --num_frames 49 --height 720 --width 1280\n${OOM_24}`, '--num_frames 49'],
  ])('%s: the input size first, quoted', async (_name, text, quote) => {
    const d = await diagnoseText(text);
    expect(first(d)).toMatch(/^(?:One input is large|单个输入太大)/);
    expect(first(d)).toContain(quote);
  });
  it('a bare "img" or height in prose is no setting', () => {
    expect(readInputSize('the img 1280 pixels wide').inputPixels).toBeUndefined();
    expect(readInputSize('my height is 1800 and width unknown').inputPixels).toBeUndefined();
    // A 5-d shape of small sides (a sequence of feature vectors) is no volume.
    expect(readInputSize('OOM when allocating tensor with shape[64,8,16,512,512] and type float').inputPixels).toBeUndefined();
    expect(readInputSize('OOM when allocating tensor with shape[64,8,8,16,1024] and type float').inputPixels).toBeUndefined();
  });
});

describe("a long generation request whose weights leave room: the request's length first", () => {
  const GENERATE = '  File "/site-packages/transformers/generation/utils.py", line 2000, in generate\n';
  it.each([
    [
      'max_new_tokens in a generate call',
      `model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-7B-Instruct", torch_dtype=torch.bfloat16)\nout = model.generate(**inputs, max_new_tokens=32768)\n${GENERATE}${OOM_24}`,
      'max_new_tokens=32768',
    ],
    ['Chinese, max_length in k', `用 Llama-3-8B-Instruct 生成长文本，max_length=16k 就爆显存\n${GENERATE}${OOM_24}`, 'max_length=16k'],
  ])('%s', async (_name, text, quote) => {
    const first0 = first(await diagnoseText(text));
    expect(first0).toMatch(/^The request is long/);
    expect(first0).toContain(quote);
  });
  it.each([
    [
      'a short request',
      `model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-7B-Instruct", torch_dtype=torch.bfloat16)\nout = model.generate(**inputs, max_new_tokens=512)\n${GENERATE}${OOM_24}`,
    ],
    [
      'weights that fill the card: quantize first',
      `model = AutoModelForCausalLM.from_pretrained("meta-llama/Llama-2-13b-hf", torch_dtype=torch.float16)\nout = model.generate(ids, max_new_tokens=16384)\n${GENERATE}${OOM_24}`,
    ],
    [
      'training with a long max_length: the sequence lever, not this one',
      `python train.py --max_length 16384 --per_device_train_batch_size 1\n${BACKWARD}${OOM_24}`,
    ],
  ])('%s: not the request length first', async (_name, text) => {
    expect(first(await diagnoseText(text))).not.toMatch(/^The request is long/);
  });
});
