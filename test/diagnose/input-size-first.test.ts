// One input is the lever (issue 23): when the run handles one input already (one image generated, segmented or
// upscaled, one 3-D volume, one video of many frames, one long recording, one long context) the per-input
// activations fill the card and halving the batch cannot shrink it. The input-size lever is named first exactly when
// the paste gives its evidence: a size read in the forms reports state it (W x H with a sentence's full stop after it,
// a 3-D size, megapixels, 720p / 4K, a clip's frames, a recording's minutes), the report's own experiment (a smaller
// size or length worked, a larger failed), or, outside training, the report calling its input large; and never when a
// batch above 2 is stated (the batch lever's) or the weights alone do not fit. Real threads from the tuned group
// input8/ (test/fixtures/untuned/input8) beside synthetic variants written from the principle (said so below).
import { describe, expect, it } from 'vitest';
import { inputSaidLargeFirst, readInputSize } from '../../src/diagnose/levers/input-size.js';
import { inputLengthFirst, readInputLength } from '../../src/diagnose/levers/input-length.js';
import { readSmallerInput, smallerInputFirst } from '../../src/diagnose/levers/smaller-input.js';
import { readVaeDecode, vaeDecodeFirst } from '../../src/diagnose/levers/vae-decode.js';
import { sequenceFirst } from '../../src/diagnose/levers/sequence.js';
import { incidentOf } from '../../src/diagnose/incident/index.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const INPUT_WORDS = /image size|resolution|context length|sequence length|frames per pass|chunks/i;

describe('real threads (input8/): the input is named first', () => {
  it.each([
    ['3202', 'E2FGVI, "1k-2k frames" of one video', /One input is long \(1k-2k frames\)/],
    ['3204', 'DiffBIR, one 4080 × 3060 photo (the pair, not "resolution 4080")', /One input is large \(4080 × 3060\)/],
    ['3205', 'FBCNN, "12 MPix" images', /One input is large \(12 MPix\)/],
    ['3208', 'CrisperWhisper, an audio of 2 minutes', /One input is long \(audio of 2 minute\)[\s\S]*chunk_length_s=30/],
    ['3209', 'llama.cpp: context 2048 works, 4096 fails', /works at context length 2048 and fails at context length 4096/],
    ['3216', 'MONAI, a 1504x1504x561 CT volume at batch 1', /One input is large \(1504x1504x561\)/],
    ['3218', 'SegNet, "width=2048 and height 1024." at batch 1', /One input is large \(width=2048 and height 1024\)/],
  ])('%s: %s', async (n, _what, want) => {
    const d = await firstOfCase('input8', n);
    expect(d?.category).toBe('cuda_oom');
    expect(first(d)).toMatch(want);
    expect(first(d)).not.toMatch(/^Reduce the batch|experiment that decides: one step at batch 1/);
  });
  it('control 3224 (batch_size = 32, 16 works): a stated batch above 2 keeps the batch lever', async () => {
    expect(first(await firstOfCase('input8', '3224'))).toMatch(/^Reduce the batch/);
  });
  it.each(['3220', '3221', '3222', '3223'])('control %s (the batch is the lever): the input is not named first', async (n) => {
    expect(first(await firstOfCase('input8', n))).not.toMatch(/One input is|The report says the input is large|works at .* and fails at/);
  });
});

describe('sizes read in the forms reports write them (synthetic variants)', () => {
  it.each([
    ['a sentence ends after the height', 'The images are width=2048 and height 1024.', 2048 * 1024],
    ['a W x H after a key is the pair, not the key alone', 'input resolution 4000 × 3000, one image', 4000 * 3000],
    ['a 3-D size is a volume', 'inference on a 512x512x512 cryo-EM map', 512 ** 3],
    ['a 3-D patch with stars', 'patch size 192*192*96 at batch 1', 192 * 192 * 96],
    ['megapixels, run together', 'upscaling a 24MP photo fails', 24e6],
    ['megapixels in words', 'a 16-megapixel scan', 16e6],
    ['a named video resolution', 'generating 720p video with 81 frames', 720 * 1280],
    ['4K beside an image word', 'denoising a 4K image on a 3090', 2160 * 3840],
    ["kohya's bare pair", 'accelerate launch sdxl_train_network.py --resolution=1024,1024 --train_batch_size=1', 1024 * 1024],
    ['a Chinese size word', '分辨率为2048的图片一张都跑不了', 2048 * 2048],
    ['a Chinese size word with a full-width colon', '输入尺寸：1536', 1536 * 1536],
    ["TF's feature map at batch 1, channels first", 'OOM when allocating tensor with shape[1,64,1536,1536] and type float', 1536 * 1536],
    ["TF's feature map at batch 1, channels last", 'OOM when allocating tensor with shape[1,2048,1024,32]', 2048 * 1024],
  ])('%s', (_name, text, pixels) => {
    expect(readInputSize(text).inputPixels).toBe(pixels);
  });
  it('a feature map at a batch above 2 says nothing of one input', () => {
    expect(readInputSize('OOM when allocating tensor with shape[16,64,1024,1024]').inputPixels).toBeUndefined();
  });
  it('a decimal or a 4k context is no size', () => {
    expect(readInputSize('loss 1024.5 at step 2048.25').inputPixels).toBeUndefined();
    expect(readInputSize('a 4k context window with 8k tokens').inputPixels).toBeUndefined();
    expect(readInputSize('kernel 3x3x3, 64x64x64 is fine').inputPixels).toBe(64 ** 3);
  });
  it.each([
    ['frames in prose', 'the clip has 240 frames', 'frames', 240],
    ['a frame range takes the larger', 'between 500-1200 frames per video', 'frames', 1200],
    ['frames in Chinese', '一段300帧的视频就爆显存', 'frames', 300],
    ['a frame setting', 'python infer.py --num_frames 121 --fps 24', 'frames', 121],
    ['video duration', 'a 30 second video at 1080p', 'video', 30],
    ['audio before its duration', 'transcribing an audio file of 45 minutes', 'audio', 2700],
    ['audio after its duration', 'a 1 hour recording', 'audio', 3600],
    ['audio in Chinese', '一段20分钟的音频', 'audio', 1200],
  ])('long input: %s', (_name, text, kind, length) => {
    const got = readInputLength(text);
    expect(got.inputLengthKind).toBe(kind);
    expect(got.inputLength).toBe(length);
  });
  it('short clips and recordings are no long input', () => {
    expect(readInputLength('16 frames at 256x256').inputLength).toBeUndefined();
    expect(readInputLength('a 20 second audio clip').inputLength).toBeUndefined();
    expect(readInputLength('trained 30 minutes then stopped').inputLength).toBeUndefined();
    expect(readInputLength('recording memory history for 10 minutes before the OOM').inputLength).toBeUndefined();
    expect(readInputLength('Requested to load CLIP model, took 12 seconds').inputLength).toBeUndefined();
  });
});

describe("the report's own experiment: a smaller size or length worked (synthetic variants)", () => {
  it.each([
    ['image sizes', '512x512 works fine but 1024x1024 gives CUDA out of memory', '512x512', '1024x1024'],
    ['context lengths', 'n_ctx 8192 runs ok, with n_ctx 32768 it crashes with OOM', 'n_ctx 8192', 'n_ctx 32768'],
    ['max_length', 'max_length 1024 works, max_length 4096 fails with out of memory', 'max_length 1024', 'max_length 4096'],
    ['Chinese', '768*768可以跑，1024*1024就爆显存', '768*768', '1024*1024'],
  ])('%s', (_name, text, smaller, larger) => {
    expect(readSmallerInput(text)).toEqual({ smallerWorked: smaller, largerFailed: larger });
  });
  it('two sizes with no success and failure said are no experiment', () => {
    expect(readSmallerInput('resize 1024x1024 to 512x512 before the model')).toEqual({});
    expect(readSmallerInput('1024x1024 and 2048x2048 both fail with OOM')).toEqual({});
  });
  it('a stated batch above 2 keeps the batch lever', () => {
    const f = incidentOf({ input: { smallerWorked: '512x512', largerFailed: '1024x1024' } });
    expect(smallerInputFirst(f)).toBe(true);
    expect(smallerInputFirst(incidentOf(f, { run: { batch: 16 } }))).toBe(false);
  });
});

describe('preconditions of the length and said-large levers (synthetic)', () => {
  const clip = incidentOf({ input: { inputLength: 500, inputLengthKind: 'frames', inputLengthSetting: '500 frames' } });
  it('a long clip at no stated batch: the length', () => expect(inputLengthFirst(clip)).toBe(true));
  it('a long clip at batch 8: the batch', () => expect(inputLengthFirst(incidentOf(clip, { run: { batch: 8 } }))).toBe(false));
  it('a long clip whose memory grows: not the length', () => expect(inputLengthFirst(incidentOf(clip, { series: { memoryShape: 'growth' } }))).toBe(false));
  it('weights over the card: not the length', () =>
    expect(inputLengthFirst(incidentOf(clip, { model: { paramsB: 70, dtype: 'fp16' }, card: { gpuMemoryMiB: 24576 } }))).toBe(false));
  const said = incidentOf({ input: { inputSaidLarge: 'big image' } });
  it('said large, no training: the input', () => expect(inputSaidLargeFirst(said)).toBe(true));
  it('said large in training: the batch experiment decides', () => expect(inputSaidLargeFirst(incidentOf(said, { run: { training: true } }))).toBe(false));
  it('said large but a small size stated: the size decides', () =>
    expect(inputSaidLargeFirst(incidentOf(said, { input: { inputPixels: 300 * 300 } }))).toBe(false));
});

describe('whole pastes through the CLI entry (synthetic variants)', () => {
  const OOM = 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 2.10 GiB is free.';
  it.each([
    ['a 3-D volume at batch 1', `running a 1024x1024x400 CT scan through the 3-D UNet, batch_size=1\n${OOM}`, /One input is large \(1024x1024x400\)/],
    ['megapixels with an upscaler', `upscaling a 20MP photo with the x4 model\n${OOM}`, /One input is large \(20MP\)/],
    ['a long video in frames', `running the inpainting on 900 frames of one video\n${OOM}`, /One input is long \(900 frames\)/],
    ['a long recording', `transcribing a 40 minute audio in one call\n${OOM}`, /One input is long/],
    ['the report says its image is big', `segmenting one big image with the predictor\n${OOM}`, /The report says the input is large \("big image"\)/],
    ['a smaller size worked', `generating at 768x768 works fine, at 1536x1536 it fails\n${OOM}`, /works at 768x768 and fails at 1536x1536/],
  ])('%s: the input first', async (_name, paste, want) => {
    const got = first(await diagnosePaste(paste));
    expect(got).toMatch(want);
    expect(got).toMatch(INPUT_WORDS);
  });
  it.each([
    ['batch 16 beside a large image', `training at 1024x1024 with batch_size=16\n${OOM}`],
    ['batch 8 beside many frames', `batch size 8, each sample 128 frames\n${OOM}`],
  ])('%s: not the input first', async (_name, paste) => {
    const got = first(await diagnosePaste(paste));
    expect(got).not.toMatch(/One input is|The report says the input is large|works at .* and fails at/);
  });
});

describe('an impossible request beside a stated large input is that input (synthetic variants)', () => {
  const ABSURD =
    'RuntimeError: CUDA out of memory. Tried to allocate 64.00 GiB (GPU 0; 24.00 GiB total capacity; 4.20 GiB already allocated; 18.10 GiB free; 4.40 GiB reserved in total by PyTorch)';
  it.each([
    [
      'a diffusion size',
      `python scripts/txt2img.py --prompt "a castle" --H 2048 --W 2048\n${ABSURD}`,
      /one input far larger than the model can take at once \(--H 2048 --W 2048\)/,
    ],
    ['a video clip', `sampling 600 frames at once\n${ABSURD}`, /one input far larger than the model can take at once \(600 frames\)/],
    [
      'a long context',
      `model.generate(**inputs, max_new_tokens=65536)\n${ABSURD}`,
      /one input far larger than the model can take at once \(max_new_tokens=65536\)/,
    ],
  ])('%s: the input first', async (_name, paste, want) => {
    const d = await diagnosePaste(paste);
    expect(d?.rule).toBe('cuda-oom-absurd-request');
    expect(first(d)).toMatch(want);
    expect(first(d)).toMatch(/Lower the resolution, frames or length first/);
  });
  it('no input stated: a shape that blew up comes first, as before', async () => {
    expect(first(await diagnosePaste(ABSURD))).toMatch(/not a batch that is a little too big: a tensor shape blew up/);
  });
});

describe('a serving tool started with a long context names the context first (synthetic variants)', () => {
  const OOM =
    'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 7.83 GiB. GPU 0 has a total capacity of 79.10 GiB of which 3.11 GiB is free. Including non-PyTorch memory, this process has 75.98 GiB memory in use.';
  it('vLLM at --max-model-len 131072: the context length, then its other knobs', async () => {
    const got = first(await diagnosePaste(`vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072\n${OOM}`));
    expect(got).toMatch(/^vLLM serves with a long context \(--max-model-len 131072\)[\s\S]*Lower the context length first \(e\.g\. 65536/);
  });
  it('vLLM at --max-model-len 4096: its knobs as before', async () => {
    expect(first(await diagnosePaste(`vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 4096\n${OOM}`))).not.toMatch(/serves with a long context/);
  });
});

describe('an OOM inside the VAE decode is one output decoded at once (real 3219, synthetic variants)', () => {
  it('3219 (Wan2.2 --size 1280*704, vae2_2.py decode): decode in tiles or at a lower resolution', async () => {
    expect(first(await firstOfCase('input8', '3219'))).toMatch(/^The card ran out while the VAE decoded[\s\S]*Lower the resolution or decode in tiles first/);
  });
  it.each([
    ['diffusers', '  File "/opt/venv/lib/python3.10/site-packages/diffusers/models/autoencoders/autoencoder_kl.py", line 321, in decode'],
    ['CompVis', '  File "/sd/ldm/models/diffusion/ddpm.py", line 763, in decode_first_stage'],
    ['ComfyUI', '  File "/ComfyUI/comfy/sd.py", line 612, in decode'],
    ['a decoder forward', '  File "/x/models/vae_decoder.py", line 88, in forward'],
  ])('%s frame', (_name, frame) => {
    expect(readVaeDecode(`Traceback (most recent call last):\n${frame}\n    return self.up(x)`).vaeDecodeFrame).toBeTruthy();
  });
  it('an encoder forward or a decode of text is no VAE decode', () => {
    expect(readVaeDecode('  File "/x/models/vae_encoder.py", line 88, in forward').vaeDecodeFrame).toBeUndefined();
    expect(readVaeDecode('  File "/x/tokenization_utils_base.py", line 3750, in decode').vaeDecodeFrame).toBeUndefined();
  });
  it('preconditions: no batch above 2, nothing that grows', () => {
    const f = incidentOf({ input: { vaeDecodeFrame: 'autoencoder_kl.py, in decode' } });
    expect(vaeDecodeFirst(f)).toBe(true);
    expect(vaeDecodeFirst(incidentOf(f, { run: { batch: 8 } }))).toBe(false);
    expect(vaeDecodeFirst(incidentOf(f, { series: { memoryShape: 'growth' } }))).toBe(false);
  });
  it('a whole paste: a diffusers pipeline failing in the decode', async () => {
    const paste = [
      'Traceback (most recent call last):',
      '  File "/app/run.py", line 12, in <module>',
      '    image = pipe(prompt).images[0]',
      '  File "/opt/venv/lib/python3.10/site-packages/diffusers/pipelines/stable_diffusion_xl/pipeline_stable_diffusion_xl.py", line 1270, in __call__',
      '    image = self.vae.decode(latents, return_dict=False)[0]',
      '  File "/opt/venv/lib/python3.10/site-packages/diffusers/models/autoencoders/autoencoder_kl.py", line 321, in decode',
      '    decoded = self._decode(z).sample',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity of 11.72 GiB of which 1.90 GiB is free.',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/^The card ran out while the VAE decoded/);
  });
});

describe('at a stated batch of 1 a sequence of 4096 tokens already decides (synthetic)', () => {
  const f = incidentOf({ run: { training: true, batch: 1 }, sequence: { seqLen: 4096 } });
  it('batch 1 at 4096: the length', () => expect(sequenceFirst(f)).toBe(true));
  it('batch 2 at 4096: not yet', () => expect(sequenceFirst(incidentOf(f, { run: { batch: 2 } }))).toBe(false));
  it("a tool's default batch of 1 is not a stated one", () => expect(sequenceFirst(incidentOf(f, { run: { batchDefaultOf: 'x' } }))).toBe(false));
  it('batch 1 at 2048: the experiment decides', () => expect(sequenceFirst(incidentOf(f, { sequence: { seqLen: 2048 } }))).toBe(false));
});

describe("transformers' own warning states the prompt's length (synthetic)", () => {
  it('the first number of "Token indices sequence length ... (N > M)" is the request', async () => {
    const paste = [
      'Token indices sequence length is longer than the specified maximum sequence length for this model (150000 > 131072). Running this sequence through the model will result in indexing errors',
      'Traceback (most recent call last):',
      '  File "/opt/venv/lib/python3.11/site-packages/transformers/generation/utils.py", line 2215, in generate',
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 34.33 GiB. GPU 0 has a total capacity of 79.15 GiB of which 20.10 GiB is free.',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/150000 tokens in the prompt/);
  });
});

describe('a vision network at a stated batch of 1 leads with the image size (synthetic)', () => {
  const OOM =
    'RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 3.95 GiB total capacity; 3.10 GiB already allocated; 5.00 MiB free; 3.20 GiB reserved in total by PyTorch)';
  it('ultralytics at batch=1, imgsz=640: the image size, then the check', async () => {
    const got = first(await diagnosePaste(`yolo train data=coco.yaml model=yolov8x.pt imgsz=640 batch=1\n${OOM}`));
    expect(got).toMatch(/^The batch is already 1[\s\S]*Lower the image size first/);
  });
  it('a large card full at batch 1 and the usual 640 px: one image cannot explain it, so the experiment; at 1280 px the image size', async () => {
    const big =
      'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.10 GiB. GPU 0 has a total capacity of 47.54 GiB of which 1.20 GiB is free. Of the allocated memory 45.10 GiB is allocated by PyTorch, and 300.00 MiB is reserved by PyTorch but unallocated.';
    expect(first(await diagnosePaste(`yolo train data=coco.yaml model=yolov8x.pt imgsz=640 batch=1\n${big}`))).not.toMatch(/Lower the image size first/);
    expect(first(await diagnosePaste(`yolo train data=coco.yaml model=yolov8x.pt imgsz=1280 batch=1\n${big}`))).toMatch(
      /^One input is large \(imgsz=1280\)|^The batch is already 1[\s\S]*Lower the image size first/,
    );
  });
  it('a text model at batch 1: the experiment, as before', async () => {
    const got = first(await diagnosePaste(`python train.py --model_name_or_path bert-base-uncased --per_device_train_batch_size 1\nloss.backward()\n${OOM}`));
    expect(got).not.toMatch(/Lower the image size first/);
  });
});
