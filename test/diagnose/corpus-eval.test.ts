// The corpus of real logs with expert expectations (test/fixtures/untuned): the tuned splits (llm/, vision/,
// mixed/, fresh/, holdout/, sealed/ since stop 20, blind/ and unseen/ since late stop 20, novel/ since the end of stop 20) and the untuned splits (fresh2/, from the end of stop 20; blind2/, balanced by class for issue 23; blind3/, built blind after the engine rework for issue 23's closing figure; blind4/, built blind for the end-of-session measurement; blind5/, built blind for issue 23's closing measurement; blind6/, built blind while the next session changed the engine; blind7/, built blind for issue 23's done-when while the session after changed the engine; blind8/, built blind for the same at stop 36; blind9/, built blind for the same at stop 37; blind10/, built blind for the same at stop 38; blind11/, built blind for the same at stop 39; blind12/, built blind at stop 39's end, after its engine work; blind13/, built blind at stop 40 while its first round of engine work ran; blind14/, built blind beside its second round; blind6/ and blind7/ were read case by case at stop 36, blind8/ at stop 37, blind9/ at stop 38 and blind10/ at stop 39, blind11/, blind12/ and blind13/ at stop 40, and are read splits since), scored with the CLI's own code in process (readLogFile, diagnose,
// toJsonContract: same JSON as `gpu-doctor diagnose --json`). Figures are printed; floors catch regressions.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expertLine, scoreExpertDir, type ExpertCase } from './eval-score.js';

const misses = (rows: string[]) => rows.filter((r) => !r.endsWith(': ok')).join('\n');
const groupDir = (group: string) => new URL(`../fixtures/untuned/${group}`, import.meta.url).pathname;
const GROUPS = [
  'llm',
  'vision',
  'mixed',
  'fresh',
  'holdout',
  'sealed',
  'blind',
  'unseen',
  'novel',
  'fresh2',
  'blind2',
  'blind3',
  'blind4',
  'blind5',
  'blind6',
  'blind7',
  'blind8',
  'blind9',
  'blind10',
  'blind11',
  'blind12',
  'blind13',
  'blind14',
  'budget4',
  'phase4',
];
// dist4/ (issue 23's distributed start-up, waiting-rank and host-RAM threads; tuned) takes the same corpus checks.
GROUPS.push('dist4');
// eval5/ (issue 23's evaluation-phase class: 20 real threads, tuned) takes the same corpus checks.
GROUPS.push('eval5');
// static5/ (issue 23's batch-already-1, ZeRO per-rank, DDP unused-parameter, host-RAM and container /dev/shm threads; tuned).
GROUPS.push('static5');
// recog6/ (issue 23's recognition class: reports in words, MPS/TensorRT messages, container kills; tuned).
GROUPS.push('recog6');
// eval6/ (issue 23's evaluation OOMs reported in words: 13 real threads, tuned) takes the same corpus checks.
GROUPS.push('eval6');
// host6/ (issue 23's host-side classes: /dev/shm, host-RAM kills in launcher formats, growth told over the run; tuned).
GROUPS.push('host6');
// static6/ (issue 23's input size, quantize and mixed-precision levers: 14 real threads; tuned).
GROUPS.push('static6');
// recog7/ (issue 23: stacks that report a failed allocation in their own words: Ollama, vLLM v1, ONNX Runtime, TF, ggml, JAX, MXNet, XPU; tuned).
GROUPS.push('recog7');
// host8/ (issue 23: host-RAM kills in each launcher's format, another process holding the card, 3 confusers; tuned).
GROUPS.push('host8');
// eval8/ (issue 23: OOMs in the evaluation phase, 20 real threads, 6 zh; tuned).
GROUPS.push('eval8');
// input8/ (issue 23: one input is the lever: high-resolution images, 3-D volumes, video frames, long audio and contexts; tuned).
GROUPS.push('input8');
// words8/ (issue 23: failures told in the reporter's words anywhere in the paste, EN and zh, 6 confusers; tuned).
GROUPS.push('words8');
// growth8/ (issue 23: memory that climbs over steps or epochs, GPU or host RAM, and its confusers; 29 real threads, tuned).
GROUPS.push('growth8');
// growth9/ (issue 23: where growth ends and an ordinary OOM begins; 23 real threads, 7 zh, 9 confusers; tuned).
GROUPS.push('growth9');
// stacks8/ (issue 23: other stacks' and distributed runs' own message formats: MXNet, Paddle, MindSpore, Caffe, TF, HIP,
// TensorRT, vLLM, Triton/Paddle shm, NCCL sockets, c10d stores; 4 confusers; 28 real threads, 8 zh; tuned).
GROUPS.push('stacks8');
// static8/ (issue 23: static memory that does not fit and which lever the budget names first: full fine-tunes, ZeRO
// stage choices, inference weights over the card, 7 controls; 22 real threads, 5 zh; tuned).
GROUPS.push('static8');
// holder9/ (issue 23: pastes that got no diagnosis: busy/unavailable devices, CUDA's OOM while the model is built, host
// kills in Jupyter's, Ollama's and Windows' words, 2 confusers; 30 real threads, 5 zh; tuned).
GROUPS.push('holder9');
// nonpt9/ (issue 23: non-PyTorch stacks' first lever in their own settings: TF/Keras, JAX, vLLM, TGI, ONNX Runtime,
// TensorRT, Ollama, Paddle, the SD web UI; 4 confusers; 23 real threads, 8 zh; tuned).
GROUPS.push('nonpt9');
// nonpt10/ (issue 23: a cap the stack was given, not the card: vLLM's share, TF fractions, TF beside torch; 4 real threads,
// found after levers/memory-cap.ts and labelled before running; tuned).
GROUPS.push('nonpt10');
// order9/ (issue 23: the lever order when the evidence points past the batch: input size, sequence length, full fine-tunes
// that shard / offload first, checkpointing, mixed precision; 5 batch controls; 27 real threads, 9 zh; tuned).
GROUPS.push('order9');
// eval9/ (issue 23: evaluation, validation and inference-phase OOMs, 22 real threads, 5 zh, 4 confusers; tuned).
GROUPS.push('eval9');
// shm9/ (issue 23: /dev/shm and NCCL forms that got no diagnosis or another lever: torchrun's SIGBUS, Ray's object store,
// NCCL's system error in a container, NCCL's shm attach, 6 confusers; 36 real threads, 8 zh; tuned).
GROUPS.push('shm9');
// told9/ (issue 23: failures told only in words: bare OOM, misspellings, Chinese slips, tool words; 10 confusers of the
// guards: forecast, denial, PR / feature titles, capacity questions; 40 real threads, 14 zh; tuned).
GROUPS.push('told9');
// hostgrow9/ (issue 23: host RAM that climbs until the kill, evaluation that fills host RAM; 21 real threads, 5 zh; tuned).
GROUPS.push('hostgrow9');
// confuse10/ (issue 23: NCCL result strings beside any caller, Paddle's shm errno list, c10d store errors; 10 real threads; tuned).
GROUPS.push('confuse10');
// eval10/ (issue 23: evaluations that fail over the whole set: distance / similarity matrices, concatenated features, growth
// through a pass; 8 real threads, 3 zh, 1 ja, 1 confuser; tuned).
GROUPS.push('eval10');
// input10/ (issue 23: one input already too big at batch 1 or none: upscalers' tiles, TF per-sample tensors; new threads, tuned).
GROUPS.push('input10');
// static10/ (issue 23: loads and inference runs whose weights fill the card, GPU 0 crowded by ranks; new threads labelled first; 9 real, 3 zh; tuned).
GROUPS.push('static10');
// growth10/ (issue 23: climbs told in figure, epoch and time forms; gunicorn worker kills and a timeout-kill confuser; 19 real threads; tuned).
GROUPS.push('growth10');
// stacks11/ (issue 23: non-PyTorch and holder forms: cudaMallocAsync's allowed-memory form, Rust runners' loads, a process table; 9 real threads, new, tuned).
GROUPS.push('stacks11');
// stacks12/ (issue 23: non-PyTorch and confuser forms of blind9: cuDNN handle figures, numpy's array message, MLX malloc_or_wait, Sophon bmlib, TF initializer frames, BCE assertion / diverged loss; 18 real threads labelled first; tuned).
GROUPS.push('stacks12');
// series11/ (issue 23: input-size settings and growth forms on new threads: video frames, upscaler tiles, Ollama contexts, TF retracing; 15 real; tuned).
GROUPS.push('series11');
// eval11/ (issue 23: fixed forms of YOLO validation, Caffe's test net, vLLM's zero blocks, TF tensor shapes, Adam state; 12 real threads labelled first; tuned).
GROUPS.push('eval11');
// eval12/ (stop 38, e1: eval work after the forward named by its library: NMS frames, metric libraries, faiss-gpu's alloc messages, PyTorch 0.4's volatile; 10 real threads labelled first; tuned).
GROUPS.push('eval12');
// eval13/ (stop 39, e1: a climb told through an evaluation / test pass that ends in an OOM, and its near misses; 8 real threads labelled first; tuned).
GROUPS.push('eval13');
// evl14/ (stop 40, evl: evaluation levers told in words or code: Trainer's evaluation in prose, a climb through eval, a forward run without no_grad; 7 real threads labelled first; tuned).
GROUPS.push('evl14');
// recog11/ (issue 23: fixed forms blind8 missed, found anew: No CUDA GPUs, MLX max buffer, NCCL start-up hang, quoted Killed; tuned).
GROUPS.push('recog11');
// torchcat11/ (issue 23: PyTorch/CUDA fixed formats swept from the catalogue: the allocator's NVML assert as an OOM; tuned).
GROUPS.push('torchcat11');
// libcat11/ (issue 23: fixed messages of transformers' bnb quantizer and disk offload, accelerate's batch finder, Lightning's device checks; 20 real threads labelled first; tuned).
GROUPS.push('libcat11');
// stackcat11/ (issue 23: non-PyTorch message catalogues: TF "Dst tensor is not initialized", Ray 1.x RayOutOfMemoryError, Darknet's check_error OOM; tuned).
GROUPS.push('stackcat11');
// servecat11/ (stop 37, s3: serving stacks' fixed formats: vLLM start-up check and sampler warm-up, TensorRT allocator; tuned).
GROUPS.push('servecat11');
// growth12/ (stop 38, e3: NCCL's no-interface WARN, pandarallel's memory file system, TorchMetrics list states, Keras predict in a loop; 8 real threads; tuned).
GROUPS.push('growth12');
// growth13/ (stop 39, g1: a server's memory told to climb request after request before an OOM; 5 real threads labelled first; tuned).
GROUPS.push('growth13');
// grow14/ (stop 40, grow: a TF/Keras model rebuilt or loaded per iteration in one process; 6 real threads labelled first; tuned).
GROUPS.push('grow14');
// input12/ (issue 23, stop 38 e2: served / model-parallel weights that fit no card, Xinference requests, fp32 default; 9 real, 5 zh, labelled first; tuned).
GROUPS.push('input12');
// shm12/ (stop 38, h2: the shared-memory class swept across tools' fixed formats: torch's fd sharing limit, Windows' 1455
// shared file mapping, vLLM's shm_broadcast wait; 12 real threads labelled first; tuned).
GROUPS.push('shm12');
// holder12/ (stop 38, h1: another holder or a refused context in tools' fixed formats: CUDA MPS 805, SGLang's TP balance check, vLLM's profiling assertion, TF 1.x free memory at start; 10 real threads labelled first; tuned).
GROUPS.push('holder12');
// words13/ (stop 39, p1: failures told outside a framework's message: exit 137, a bracketed Killed, ENOSPC beside shm or a DataLoader in a container, evaluation told above training; 7 real threads labelled first; tuned).
GROUPS.push('words13');
// words14/ (stop 40, words: a report in words read as a report: a kill told by its exit status, shm told short, an illegal memory access named short, OOMKilled:false; 8 real threads labelled first, 2 zh; tuned).
GROUPS.push('words14');
// dist14/ (stop 40, dist: a launcher's fixed message or the report's words name the distributed category: RendezvousClosedError, Gloo/NCCL connect failure told, c10d connect errors, exitcode -9 stays the host kill; 9 real threads labelled first, 1 zh; tuned).
GROUPS.push('dist14');
// input13/ (stop 39, i1: inference said with no batch, input or model size: the experiment is one input at half its size; 5 real threads labelled first, 2 zh; tuned).
GROUPS.push('input13');
// confuse13/ (stop 39, c1: non-memory framework errors with memory words: tensors on two devices, cuBLAS NOT_SUPPORTED / ARCH_MISMATCH, invalid ordinal, pinned host; 13 real threads labelled first; tuned).
GROUPS.push('confuse13');
// static13/ (stop 39, s1: the static part over the card: 16-bit weights of 12-235B models on 15-24 GB cards, full fine-tunes of 7-10B on one card or under ZeRO-2, fp8 checkpoints, a split undone by .cuda(); 2 LoRA near misses where the batch leads; 12 real threads labelled first; tuned).
GROUPS.push('static13');
// stack13/ (stop 39, n1: a device selection that did not apply, and renumbered-card near misses; 7 real threads labelled first; tuned).
GROUPS.push('stack13');
// version13/ (stop 39, v1: a regression the report tells between two versions, an update told with "the same settings", and a near miss; real threads labelled first; tuned).
GROUPS.push('version13');
// arch14/ (stop 40, arch: a card newer than the framework's CUDA build, CUDA that cannot start; 9 real threads labelled first; tuned).
GROUPS.push('arch14');
// hold14/ (stop 40: another holder told in words, a leftover of an earlier run, TF processes of one user sharing a card; tuned).
GROUPS.push('hold14');
// chain14/ (stop 40, chain: the first link of an exception chain, a memory failure named in a non-memory exception type; 6 real threads labelled first; tuned).
GROUPS.push('chain14');
// route14/ (stop 40, route: host RAM vs the device's memory told in words or a non-PyTorch message: Metal, MPS, Vulkan, 内存 of a card, RAM beside VRAM; 11 real threads labelled first, 5 zh; tuned).
GROUPS.push('route14');
// serve14/ (stop 40, serve: serving stacks, the KV cache's context and a release gone back to; real threads labelled first; tuned).
GROUPS.push('serve14');
// cat14/ (stop 40, cat: runtimes' own out-of-memory messages; real threads labelled first; tuned).
GROUPS.push('cat14');
// frag14/ (stop 40, frag: an idle cache that covers the request beside live tensors that fill the card, and near misses; 5 real threads labelled first; tuned).
GROUPS.push('frag14');
// The category vocabulary of /work/corpus-format.md (the same as test/fixtures/eval-dev/cases.json).
const LABELS = new Set([
  'cuda_oom',
  'fragmentation',
  'replica_oom',
  'host_oom_killed',
  'shm_exhausted',
  'growing_memory_leak',
  'cudnn_cublas_alloc',
  'nccl_or_distributed',
  'driver_or_smi',
  'device_assert_not_memory',
  'unrelated',
]);

describe('corpus files: every log has one case and every case a real public source', () => {
  it.each(GROUPS)('%s/: logs and cases.json agree, labels in the vocabulary, one GitHub thread each', (group) => {
    const dir = groupDir(group);
    const cases = JSON.parse(readFileSync(join(dir, 'cases.json'), 'utf8')) as (ExpertCase & { language?: string })[];
    const logs = readdirSync(dir)
      .filter((f) => f.endsWith('.log'))
      .sort();
    expect(cases.map((c) => c.file).sort()).toEqual(logs);
    for (const c of cases) {
      const where = `${group}/${c.file}`;
      expect(c.labels.length, where).toBeGreaterThan(0);
      for (const l of [...c.labels, ...(c.category ?? [])]) expect(LABELS.has(l), `${where}: ${l}`).toBe(true);
      // NNN-<primary label>.log (NNNN- from blind/ on)
      expect(c.file, where).toMatch(/^\d{3,4}-/);
      expect(c.file, where).toBe(`${c.file.split('-')[0]}-${c.labels[0]}.log`);
      expect(c.source, where).toMatch(/^https:\/\/github\.com\/[^/\s]+\/[^/\s]+\/(issues|pull|discussions)\/\d+$/);
      // the paste's language as an ISO 639-1 code: en and zh above all; blind7 has one Korean thread
      expect(['en', 'zh', 'ko', 'ru', 'ja'], where).toContain(c.language);
      expect(typeof c.confuser, where).toBe('boolean');
      expect(c.expected_fix?.length ?? 0, where).toBeGreaterThan(20);
      expect(readFileSync(join(dir, c.file), 'utf8').trim().length, where).toBeGreaterThan(0);
    }
  });

  it('no thread is used twice across the groups', () => {
    const seen = new Map<string, string>();
    for (const group of GROUPS) {
      for (const c of JSON.parse(readFileSync(join(groupDir(group), 'cases.json'), 'utf8')) as ExpertCase[]) {
        const where = `${group}/${c.file}`;
        expect(seen.get(c.source!), `${where} repeats ${c.source}`).toBeUndefined();
        seen.set(c.source!, where);
      }
    }
  });
});

describe('expert expectations on real logs', () => {
  it('tuned split (llm/): category >= 94%, no harmful first fix, first-fix lever >= 78%', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(groupDir('llm'));
    console.log(`tuned (llm): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(100);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.94);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.78);
  });

  it('vision/ (tuned since stop 18: its misses were read): no harmful first fix; floors under the measured level', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(groupDir('vision'));
    console.log(`tuned (vision): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(100);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    // measured 98/103 category, 82/103 lever (80/82 when it was last untuned: 82/103, 67/103)
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.93);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.77);
  });

  it('mixed/ (tuned since stop 19: its misses were read): no harmful first fix; floors under the measured level', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(groupDir('mixed'));
    console.log(`tuned (mixed): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(50);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    // measured 50/50 category, 42/49 lever at stop 19 (45/50, 35/49 when it was last untuned)
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.96);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.8);
  });

  it('fresh/ (76 logs; tuned since stop 19: its misses were read): no harmful first fix; floors under the measured level', { timeout: 120_000 }, async () => {
    const s = await scoreExpertDir(groupDir('fresh'));
    console.log(`tuned (fresh): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(76);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    // measured 73/76 category, 60/76 lever at stop 19 (59/76, 45/76 when added; 60/76, 47/76 when last untuned)
    expect(s.category / s.n).toBeGreaterThanOrEqual(0.93);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.76);
  });

  it(
    'holdout/ (85 logs; tuned since late stop 19: its misses were read): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('holdout'));
      console.log(`tuned (holdout): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(85);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      // measured 84/85 category, 71/85 lever after its misses were read (74/85, 65/85 when it was untuned)
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.95);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.8);
    },
  );

  it(
    'sealed/ (72 logs, 900-971; tuned since stop 20: its misses were read): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('sealed'));
      console.log(`tuned (sealed): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(72);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      // measured 71/72 category, 64/72 lever after its misses were read (63/72, 47/72 when it was untuned)
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.95);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.84);
    },
  );

  it(
    'blind/ (76 logs, 1000-1075; tuned since late stop 20: its misses were read): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('blind'));
      console.log(`tuned (blind): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(70);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      // measured 66/76 category, 59/76 lever, 65/76 all checks when the group was added (stop 20, untuned); its misses
      // were read by the lead late in stop 20
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.84);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.74);
    },
  );

  it(
    'unseen/ (74 logs, 1100-1173; tuned since late stop 20: its misses were read): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('unseen'));
      console.log(`tuned (unseen): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(70);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      // measured 55/74 category, 47/74 lever, 52/74 all checks when the group was added (late stop 20, untuned); its
      // misses were read by the lead late in stop 20
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.72);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.61);
    },
  );

  it(
    'novel/ (72 logs, 1200-1271; tuned since the end of stop 20: its misses were read): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('novel'));
      console.log(`tuned (novel): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(70);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      // measured 57/72 category, 51/72 lever, 54/72 all checks when the group was added (end of stop 20, engine at
      // 02ed44d, untuned); its misses were read by the lead at the end of stop 20
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.76);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.68);
    },
  );

  it(
    'untuned split (fresh2/: 57 logs, 1300-1356, end of stop 20; 17 zh, 12 confusers): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('fresh2'));
      // Misses are not printed per case: nobody tunes on this split.
      console.log(`untuned (fresh2): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(57);
      expect(s.failed).toBe(0);
      expect(s.harmful).toBe(0);
      // measured 53/57 category, 47/57 lever, 50/57 all checks when the group was added (end of stop 20, engine at 4488dab)
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.88);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.78);
    },
  );

  it(
    'untuned split (blind2/: 86 logs, 1400-1485, issue 23, balanced by class; 25 zh, 13 confusers): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('blind2'));
      // Misses are not printed per case: nobody tunes on this split.
      console.log(`untuned (blind2): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(86);
      expect(s.failed).toBe(0);
      expect(s.harmful).toBe(0);
      // measured 65/86 category, 49/67 lever (19 expected levers had no LEVERS key), 56/86 all checks, harmful 0 when the
      // group was added (engine at 3acecbb, clean export plus this group); with the eval, host-RAM, leak-finding, version
      // and XLA lever keys added: 51/86 lever, strict harm 3 (same engine)
      expect(s.category / s.n).toBeGreaterThanOrEqual(0.72);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(0.55);
    },
  );

  it(
    'budget4/ (18 logs, 1800-1817, issue 23: static memory, /dev/shm in containers, non-PyTorch stacks, batch already 1; tuned): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('budget4'));
      console.log(`tuned (budget4): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(18);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      expect(s.harmfulStrict, misses(s.rows)).toBe(0);
      // measured 15/18 category, 13/18 lever when the group was added (engine at 2b5975d, before the budget, shm and Ray
      // modules); 18/18, 18/18 after them (its misses were read: tuned from the start)
      expect(s.category / s.n, misses(s.rows)).toBeGreaterThanOrEqual(0.94);
      expect(s.lever / s.leverOf, misses(s.rows)).toBeGreaterThanOrEqual(0.94);
    },
  );

  it(
    'dist4/ (19 logs, 1900-1918, issue 23: NCCL Duplicate GPU, store-barrier and rendezvous timeouts, watchdog timeouts, host OOM kills; tuned): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('dist4'));
      console.log(`tuned (dist4): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(19);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      expect(s.harmfulStrict, misses(s.rows)).toBe(0);
      // measured 11/19 category, 11/19 lever before the rendezvous and lost-rank modules (the store-barrier and
      // rendezvous timeouts had no diagnosis); 19/19, 19/19 after them (its misses were read: tuned from the start)
      expect(s.category / s.n, misses(s.rows)).toBeGreaterThanOrEqual(0.94);
      expect(s.lever / s.leverOf, misses(s.rows)).toBeGreaterThanOrEqual(0.94);
    },
  );

  // Tuned on purpose (issue 23): 20 real threads of the evaluation-phase and growth classes, read case by case while
  // the reported phase, the one-large-input evaluation lever and the growth experiment were built. Floors a little under
  // the measurement at that commit (phase4/README.md).
  const PHASE4_FLOORS = { category: 0.75, lever: 0.6 };
  it(
    'phase4/ (20 logs, 1700-1719, tuned: evaluation-phase and growth threads): no harmful first fix; floors under the measured level',
    { timeout: 120_000 },
    async () => {
      const s = await scoreExpertDir(groupDir('phase4'));
      console.log(`tuned (phase4): ${expertLine(s)}`);
      expect(s.n).toBeGreaterThanOrEqual(20);
      expect(s.failed, misses(s.rows)).toBe(0);
      expect(s.harmful, misses(s.rows)).toBe(0);
      expect(s.harmfulStrict, misses(s.rows)).toBe(0);
      expect(s.category / s.n).toBeGreaterThanOrEqual(PHASE4_FLOORS.category);
      expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(PHASE4_FLOORS.lever);
    },
  );

  // Issue 23's tuned groups: real threads of one class each, read case by case while that class's reasoning was built
  // (each group's README.md has its figures before and after). Floors sit a little under the measurement; `strict` is
  // the most strict-harm cases allowed, `named` a floor on the stricter "named first" lever figure.
  interface TunedFloors {
    group: string;
    what: string;
    n: number;
    category: number;
    lever: number;
    strict?: number;
    named?: number;
  }
  const TUNED: TunedFloors[] = [
    // 20 evaluation-phase threads (own test/validate loops without no_grad, HF Trainer gathering predictions, an
    // evaluation batch or input larger than training's, PyTorch / Keras / Paddle): 18/20, 10/20 before; 18/20, 17/20 after.
    { group: 'eval5', what: '20 logs, 2000-2019: evaluation-phase threads', n: 20, category: 0.85, lever: 0.8, strict: 1 },
    // 13 evaluation OOMs reported in words and three confusers: 10/13, 3/10, strict 1 before; 10/13, 5/10, strict 0 after.
    { group: 'eval6', what: '13 logs, 2300-2312: evaluation OOMs reported in words', n: 13, category: 0.75, lever: 0.45, strict: 0 },
    // batch already 1, ZeRO per-rank budgets, DDP unused parameters, host-RAM kills, container /dev/shm.
    {
      group: 'static5',
      what: '20 logs, 2100-2119: batch 1, ZeRO per rank, DDP unused parameters, host RAM, container shm',
      n: 20,
      category: 0.9,
      lever: 0.88,
      strict: 0,
    },
    // failures stated in words, MPS/TensorRT forms, exit 137: 12/20, 3/12 before the recognition rules; 16/20, 5/12 after.
    { group: 'recog6', what: '20 logs, 2200-2219: reports in words, MPS and TensorRT messages, container kills', n: 20, category: 0.75, lever: 0.4 },
    // SIGBUS in a container, cut torch shm messages, launcher kill lines, growth told over the run: 9/20, 9/20 before; 20/20 after.
    {
      group: 'host6',
      what: '20 logs, 2500-2519: /dev/shm, host-RAM kills in launcher formats, growth vs one OOM after N epochs',
      n: 20,
      category: 0.9,
      lever: 0.9,
    },
    // one input is the lever (20) and batch controls (5): named first 11 -> 17 of 25 with the size forms, clip / recording
    // length and the report's own smaller-worked experiment.
    {
      group: 'input8',
      what: '25 logs, 3200-3224: one image, volume, clip, recording or context is the lever; 5 batch controls',
      n: 25,
      category: 0.7,
      lever: 0.65,
      strict: 0,
    },
    // a failure told in words in any sentence (src/diagnose/told-failure.ts): 21 reports and 5 confusers.
    {
      group: 'words8',
      what: '26 logs, 3100-3135: GPU OOM, host kill, growth and evaluation told in words, 11 zh; 5 confusers',
      n: 26,
      category: 0.7,
      lever: 0.75,
      strict: 0,
    },
    // spawned children, a kill told with its cause, memory held after exit: 24/30, 15/29 before; 30/30, 28/29 after.
    {
      group: 'host8',
      what: '30 logs, 3500-3529: host-RAM kills per launcher, WinError 1455, another holder, lone-process confusers',
      n: 30,
      category: 0.93,
      lever: 0.9,
      strict: 1,
    },
    // contrast / inference / named-function readings, stated-input and no-grad-framework levers: 18/20, 8/19 (named
    // first 6), strict 1 before; 19/20, 13/19 (12), strict 0 after.
    {
      group: 'eval8',
      what: '20 logs, 3400-3419: evaluation, test and inference OOMs, no_grad / framework / input levers',
      n: 20,
      category: 0.85,
      lever: 0.6,
      strict: 1,
    },
    // levers/quantize.ts, levers/amp.ts and the input readers: 14/14, 10/14 (named first 7) before; 14/14, 11/14 (9) after.
    { group: 'static6', what: '14 logs, 2400-2413: one large input, 16-bit weights that fill the card, fp32 training', n: 14, category: 0.92, lever: 0.75 },
    // non-PyTorch stacks' own allocation messages: 11/20, 2/9 before the stack rules; 19/20, 7/9 after.
    {
      group: 'recog7',
      what: '20 logs, 2600-2619: Ollama, vLLM v1, ONNX Runtime, TensorFlow, llama.cpp, JAX, MXNet, XPU in their own words',
      n: 20,
      category: 0.9,
      lever: 0.7,
    },
    // series trend, settled series and levers by evidence: 17/29, 9/29 when added; 27/29, 27/29 after.
    {
      group: 'growth8',
      what: '29 logs, 3600-3628: GPU and host series, growth told in words, a kept loss shown, warm-up / sawtooth / step confusers',
      n: 29,
      category: 0.85,
      lever: 0.85,
    },
    // climbs told in more forms (session 36 h1): first run 1/7 growth threads on the told-climb forms of 65016ec; 6/10 after
    // two readings of the run; gunicorn's worker kills: first run 2/4 new threads (5010-5013); told climbs again: first
    // run 3/5 new threads (5014-5018); 15/19, 15/19 after.
    // non-PyTorch and holder forms (stop 37, g3): first run on 9 new threads category 9/9, lever 4/4 (named first 2), checks 6/9; 8/9 after.
    // non-PyTorch and confuser forms of blind9 (stop 38, e4): first run on 12 new threads category 12/12, lever 6/10 (named first 6), checks 12/12, strict 0;
    // divergence confusers (6 more, first run): BCE assertion 4/4, loss series 0 fired; group 17/18, 12/16, checks 16/18.
    {
      group: 'stacks12',
      what: '18 logs, 6450-6467: cuDNN handle with the card free (JAX), numpy array MemoryError, MLX malloc_or_wait, Sophon bm_alloc_gmem, TF variables initializer, BCE assertion / diverged loss',
      n: 18,
      category: 0.9,
      lever: 0.6,
      strict: 0,
    },
    {
      group: 'stacks11',
      what: '9 logs, 5900-5908: cudaMallocAsync allowed-memory form, Rust runners (candle, mistral.rs) loading, Caffe / MXNet OOMs beside nvidia-smi, TF held card, Keras in a loop',
      n: 9,
      category: 0.85,
      lever: 0.6,
      strict: 0,
    },
    // stop 38, e3: first run on 8 new threads category 6/8, lever 3/6, all checks 3/8 (NCCL 3/3; pandarallel 0/1, TorchMetrics 0/2, Keras 0/2).
    // stop 39, g1: first run on 5 new serving threads category 3/5, lever 2/3 (the climb over requests decided none); after
    // "during the request process" joined the request measure: category 4/5, strict 0.
    // stop 40, grow: first run on 6 new threads category 1/6 before, 3/6 with levers/model-rebuilt.ts as first written; 5/6
    // after "more than once", re-build and two qualifying words joined its vocabulary (tuned on these threads).
    {
      group: 'grow14',
      what: '6 logs, 7570-7575: Keras/TF models built, compiled or loaded again per loop iteration, and one single-model near miss',
      n: 6,
      category: 0.75,
      lever: 0.6,
      strict: 0,
    },
    {
      group: 'growth13',
      what: '5 logs, 6800-6804: serving stacks (SGLang, vLLM, TorchServe) whose memory climbs request after request',
      n: 5,
      category: 0.75,
      lever: 0.6,
      strict: 0,
    },
    {
      group: 'growth12',
      what: '8 logs, 6400-6407: NCCL bootstrap without an interface, pandarallel memory file system, TorchMetrics states, Keras predict in a loop',
      n: 8,
      category: 0.7,
      lever: 0.5,
      strict: 0,
    },
    {
      group: 'growth10',
      what: '19 logs, 5000-5018: climbs told with two readings, epochs, time; host climbs to a kill; gunicorn worker kills, a timeout-kill confuser',
      n: 19,
      category: 0.7,
      lever: 0.7,
      strict: 0,
    },
    // the growth / OOM boundary (told climbs, runs told before the failure, a running peak that levels off): 22/23, 13/21
    // (named first 11), strict 2 when added; 23/23, 19/21 (19), strict 0 after.
    {
      group: 'growth9',
      what: '23 logs, 4000-4022: growth told in words (GPU, host), batch trials, running peaks, one-input and eval confusers',
      n: 23,
      category: 0.9,
      lever: 0.8,
      strict: 0,
    },
    // each stack's own format and settings: 20/28, 13/23 (named first 9), strict 1 when added; 25/28, 18/23 (16) after.
    {
      group: 'stacks8',
      what: '28 logs, 3700-3727: MXNet, Paddle, MindSpore, Caffe, TF, HIP, TensorRT, vLLM, Triton / Paddle shm, NCCL sockets, c10d stores, 4 confusers',
      n: 28,
      category: 0.85,
      lever: 0.7,
      strict: 1,
    },
    // cuda-devices-busy, the model build and a failed context as a load, a pasted nvidia-smi snapshot, Windows' CPU-allocator
    // wording: 19/30, 19/30 (holder first in 2 of 14 holder cases) when added; 30/30, 30/30 (13 of 14) after.
    {
      group: 'holder9',
      what: '30 logs, 4100-4129: busy or unavailable devices, OOM before any batch or at context creation, host kills in notebook / Ollama / Windows words',
      n: 30,
      category: 0.9,
      lever: 0.9,
      strict: 0,
    },
    // levers/eval-said.ts, eval-batch.ts and the phase readings: 19/22, 17/22 (named first 6), strict 0 when added; 22/22, 21/22 (16) after.
    {
      group: 'eval9',
      what: '22 logs, 4200-4221: evaluation batch, no_grad, input size and eval_accumulation levers, 4 confusers',
      n: 22,
      category: 0.9,
      lever: 0.85,
      strict: 0,
      named: 0.6,
    },
    // SIGBUS of a rank, Docker's host name, Ray's object store, NCCL's shm attach and system error in a container:
    // 25/35, 22/35 when added; 35/35, 35/35 after (4535, an OOM-first confuser added later: 35/36, 35/35).
    {
      group: 'shm9',
      what: '36 logs, 4500-4535: /dev/shm (DataLoader, SIGBUS of ranks, Ray, C++ IPC), NCCL system errors, shm attach, timeouts, rendezvous',
      n: 36,
      category: 0.9,
      lever: 0.9,
      strict: 0,
    },
    // NCCL's result strings beside any caller, Paddle's shm errno list, DistStoreError / rendezvous frames: labelled before
    // running, 9/10, 9/10 on first run (2/10 before the rules); 10/10 after reading the store's "N/M clients joined" alone;
    // 5510 (PyTorch's "more than 1EB" request) added after that rule, labelled before running: right on first run;
    // 5511-5517 (NCCL's remote-error / unhandled-cuda strings under other wrappers) likewise: 7/7 on first run (4/7 before);
    // 5518 (torch.multiprocessing.spawn's "terminated with signal SIGBUS") right on first run; 5519-5523 (CUDA's unsupported
    // PTX toolchain) labelled before its rule was written: lever 0/5 before the rule, 5/5 on the rule's first run; 5524-5528
    // (uncorrectable ECC) the same way: 0/5 before, 5/5 on the rule's first run.
    {
      group: 'confuse10',
      what: '29 logs, 5500-5528: NCCL result strings under any wrapper, c10d store failures, 1EB, SIGBUS, PTX, ECC',
      n: 29,
      category: 0.85,
      lever: 0.85,
      strict: 0,
    },
    // levers/static-order.ts: 19/22, 17/22 (named first 11), strict 1 when added; 19/22, 19/22 (18), strict 0 after.
    {
      group: 'static8',
      what: '22 logs, 3300-3321: full fine-tunes 7B-70B over the card, ZeRO stages, inference weights over the card, 7 controls',
      n: 22,
      category: 0.8,
      lever: 0.8,
      strict: 0,
      named: 0.68,
    },
    // levers/stack-levers.ts: 17/21, 8/15 (named first 6), strict 1 when added; 21/21, 14/15 (14), strict 0 after;
    // 4321-4322 added after the rules, labelled before running: 22/23, 15/16 as first run, 23/23 after the workspace lever.
    {
      group: 'nonpt9',
      what: '23 logs, 4300-4322: TF/Keras, JAX, vLLM, TGI, ONNX Runtime, TensorRT, Ollama, Paddle, SD web UI, 4 confusers',
      n: 23,
      category: 0.85,
      lever: 0.8,
      strict: 0,
      named: 0.8,
    },
    // levers/memory-cap.ts: first run (threads found after the principle, labelled before running) 4/4, 1/4 (named 1), strict 0;
    // 4/4, 2/4 (2) after TF 1.x's up-front reservation was read.
    {
      group: 'nonpt10',
      what: '4 logs, 5300-5303: vLLM gpu_memory_utilization, TF per-process fractions, TF beside torch',
      n: 4,
      category: 0.75,
      lever: 0.45,
      strict: 0,
      named: 0.45,
    },
    // levers/experiment-order.ts, single-tensor.ts, setting-experiment.ts and the larger-length experiment: 15/22, 13/22
    // (named first 5), strict 0 when added (22 cases); 20/27, 18/27 (13), strict 0 after (27 cases).
    {
      group: 'order9',
      what: '27 logs, 4400-4426: input size, sequence length, full fine-tunes, checkpointing, amp; 5 batch controls',
      n: 27,
      category: 0.7,
      lever: 0.62,
      strict: 0,
      named: 0.44,
    },
    // told-vocabulary.ts (the vocabulary of a failure told in words, and its guards): 24/29, 12/18 (named first 7),
    // strict 1 before; 29/29, 17/18 (12) after; 11 more labelled before running: 38/40 as first run, 40/40, 25/26 (18).
    {
      group: 'told9',
      what: '40 logs, 4600-4639: GPU OOM told only in words (EN, 14 zh); 10 confusers: forecast, denial, change titles, capacity',
      n: 40,
      category: 0.9,
      lever: 0.8,
      strict: 1,
      named: 0.55,
    },
    // host climbs told to end in the system's kill, eval/predict outputs gathered in host RAM: 9/12, 5/12 before (12
    // labelled first); 21 labelled before the eval-kill reading: 18/21, 17/21 as first run, 20/21, 19/21 (19) after.
    {
      group: 'hostgrow9',
      what: '21 logs, 4700-4720: host RAM climbing to the kill, eval/predict outputs filling RAM (5 zh); 5 flat-load confusers',
      n: 21,
      category: 0.85,
      lever: 0.8,
      strict: 0,
      named: 0.75,
    },
    // levers/eval-over-set.ts: first run on threads it had never seen 4/5, 0/5, strict 1 (5100-5104) and 2/3, 0/2 (5105-5107,
    // growth through a pass); 7/8, 3/7 (3), strict 1 after.
    {
      group: 'eval10',
      what: '8 logs, 5100-5107: matrices and outputs kept over the whole evaluation set, growth through a pass, 1 confuser',
      n: 8,
      category: 0.85,
      lever: 0.4,
      strict: 1,
    },
    // one input already too big at batch 1 or none (tiles, TF per-sample tensors): first-run figures on new threads in its README.
    {
      group: 'input10',
      what: '27 logs, 5400-5426: one input too big at batch 1 or none (tiles, allowed-memory form, TF per-sample tensor, long contexts and attention, sizes in words, a host request of the whole data, video lengths); 3 batch controls',
      n: 27,
      category: 0.85,
      lever: 0.85,
      strict: 0,
      named: 0.5,
    },
    // labelled before running: first run category 8/11, lever 7/11 (named first 5), checks 5/11 (5850-5860), then 2/4 checks
    // on 5861-5864; after 12/15, 8/12, checks 10/15, strict 0 (README).
    {
      group: 'series11',
      what: '15 logs, 5850-5864: video frames and resolution, upscaler tiles, memory not released per inference, an Ollama context, TF retracing',
      n: 15,
      category: 0.75,
      lever: 0.6,
      strict: 0,
    },
    // levers/reported-load.ts, load-lever.ts: labelled before running, first run 6/6, 4/6 (named first 2), strict 0; 6/6, 6/6 (5)
    // after; 5206-5208 labelled before running: first run 9/9, 7/7 (named first 6), checks 7/9; 9/9, checks 9/9 after.
    // stop 38 (e2): labelled before running, first run 6350-6352 3/3, 2/3 (named first 2), checks 3/3; 6353-6355 2/3, 1/2 (0), checks
    // 2/3; 6356 1/1, 1/1 (1), checks 1/1; 6357-6358 2/2, 2/2 (1), checks 1/2; strict 0. After: 8/9, 6/8 (5), checks 7/9.
    {
      group: 'input12',
      what: '9 logs, 6350-6358: served or model-parallel weights that fit no card, Xinference requests, a float32-default load',
      n: 9,
      category: 0.8,
      lever: 0.6,
      strict: 0,
    },
    {
      group: 'static10',
      what: '9 logs, 5200-5208: weights that fill the card at the load or in inference, GPU 0 crowded by ranks, 1 confuser',
      n: 9,
      category: 0.8,
      lever: 0.8,
      strict: 0,
      named: 0.66,
    },
    // stop 37 (g1): labelled before running, first run 10/11, 5/6 (named first 4), checks 5/11, strict 0; 11/11, 6/6 (5), 7/11 after;
    // 5811 (optimizer state) right on first run: 12/12, 6/6 (5), checks 8/12.
    {
      group: 'eval11',
      what: '12 logs, 5800-5811: YOLO validation, Caffe test nets, vLLM zero KV blocks, TF vocabulary-wide tensors, Adam state',
      n: 12,
      category: 0.9,
      lever: 0.8,
      strict: 0,
      named: 0.66,
    },
    // stop 38 (e1): labelled before running, first run category 9/10, lever 4/5, checks 5/10; 7/10 after faiss's MemorySpace.cpp form;
    // 6310 (flair embeddings growing on the CPU, no OOM) first run category right, lever missed; 8/11 after the growth rule names it;
    // 9/11 (category 11/11) once the fragmentation rule yields to NMS among the innermost frames (6300).
    {
      group: 'eval12',
      what: '11 logs, 6300-6310: NMS over candidate boxes, torchmetrics states, faiss-gpu k-NN buffers (three message versions), volatile removed, flair fine_tune',
      n: 11,
      category: 0.8,
      lever: 0.8,
      strict: 0,
      named: 0.8,
    },
    // stop 39 (e1): labelled before running, first run category 3/8, lever 1/2; 7/8, lever 2/2 after the pass named in the title
    // and wider growth words (continue to increase, while testing, test script); 7057 (a sudden rise in validation) left.
    // 7058-7063 (evaluation told to need more than training, mostly near misses) labelled first: first run category 2/6.
    // stop 40 (evl): labelled before running; first run category 6/7, lever 0/5 before and after the first commit's principles
    // (none fired); after the tuned forms (Running Evaluation in prose, eval的时候, "works when wrapped in no_grad", volatile=True
    // beside a modern OOM) category 7/7, lever 4/5; 7452 (NeRF eval rays) and 7456 (a decoder call without no_grad) left.
    // 7457 (an OpenMMLab validation told in words, a near miss) labelled before running after both commits: checks pass, unchanged.
    {
      group: 'evl14',
      what: '8 logs, 7450-7457: Trainer evaluation told in words, a climb through eval, feature extraction without no_grad; near misses',
      n: 8,
      category: 0.85,
      lever: 0.6,
      strict: 0,
      named: 0.6,
    },
    {
      group: 'eval13',
      what: '14 logs, 7050-7063: GPU memory climbing through a test pass until OOM; evaluation told to need more than training; near misses',
      n: 14,
      category: 0.6,
      lever: 0.5,
      strict: 0,
      named: 0.5,
    },
    // labelled before running: first run 6/9 checks (No CUDA GPUs 2/2, MLX max buffer 4/4, NCCL start-up hang 0/2, quoted Killed 0/1); 9/9
    // after; 5959-5964 (container without GPUs) first run 6/6; 5965 (Metal out of unified memory) category right, lever missed;
    // 5966 (kubelet eviction for memory) first run right; 5967-5968 (SGLang's KV pool check) 1/2 (5968's paste lacks the message).
    {
      group: 'recog11',
      what: '19 logs, 5950-5968: No CUDA GPUs (devices hidden), MLX max buffer size, NCCL start-up hang told, quoted Killed, container without GPUs, Metal OOM, kubelet eviction, SGLang KV pool',
      n: 19,
      category: 0.85,
      lever: 0.8,
      strict: 0,
      named: 0.8,
    },
    // labelled before running: NVML assert in CUDACachingAllocator 6/6 category first run (0/6 before: no diagnosis), 6010-6011 2/2;
    // CUDA launch timeout (display watchdog) 6006-6009 4/4 first run (2/4 before, by abstaining).
    { group: 'torchcat11', what: '12 logs, 6000-6011: the allocator NVML assert (an OOM), CUDA launch timeout', n: 12, category: 0.95, lever: 0.8, strict: 0 },
    // labelled before running, after the rules were written from the libraries' sources: first run 13/13 category, lever 8/8
    // (named first 7); 6063-6069 (weights offloaded to disk) first run 5/7 (a cut paste and a title-only message), 7/7 after.
    {
      group: 'libcat11',
      what: '20 logs, 6050-6069: bnb quantized model dispatched to CPU/disk, accelerate no executable batch size, Lightning GPUs unavailable / ids absent, weights offloaded to disk',
      n: 20,
      category: 0.9,
      lever: 0.85,
      strict: 0,
      named: 0.75,
    },
    // labelled before running: first run 16/18 checks (TF eager input copy 6/6, bare Dst tensor 6/6 category, lever 1/3; Ray 1.x 1/3,
    // 3/3 once the class name alone is read; Darknet 3/3); 18/18 after. 6168-6176: JAX CPU fall-back 6/6 (its confuser 0/1), TPU held 2/2;
    // 6177-6179: XLA's "DNN library initialization failed" 3/3; 6180-6183: Paddle's missing CUDA library 4/4;
    // 6184: Ray's ObjectStoreFullError 1/1.
    {
      group: 'stackcat11',
      what: '35 logs, 6150-6184: TensorFlow "Dst tensor is not initialized" (eager input copy and bare), Ray 1.x RayOutOfMemoryError, Darknet check_error OOM, JAX CPU fall-back, TPU held, XLA DNN init, Paddle missing CUDA library, Ray object store full',
      n: 35,
      category: 0.9,
      lever: 0.8,
      strict: 0,
      named: 0.8,
    },
    // labelled before running: first run 6/7 checks (sampler warm-up 3/4: 6100 wrapped, 6102 cut; start-up check 2/2; TensorRT 1/1); 7/7 after;
    // 6107-6111 (LMDeploy TurboMind OOMs, its knobs in tools.yaml) first run 4/5 (6108: split over the cards named, not the cache share).
    {
      group: 'servecat11',
      what: '12 logs, 6100-6111: vLLM sampler warm-up OOM, vLLM start-up free-memory check, TensorRT allocator OOM, LMDeploy TurboMind OOM',
      n: 12,
      category: 0.85,
      lever: 0.85,
      strict: 0,
      named: 0.8,
    },
    // torch's fd sharing limit, Windows' 1455 shared file mapping, vLLM's shm_broadcast wait: labelled before running,
    // 0/12 before the rules, 10/12 on their first run, 12/12 after (torch < 1.5's EMFILE in resource_sharer, Windows frames).
    {
      group: 'shm12',
      what: "12 logs, 6550-6561: torch.multiprocessing's open-file limit (3 forms), Windows 1455 shared file mapping, vLLM shm_broadcast wait",
      n: 12,
      category: 0.9,
      lever: 0.8,
      strict: 0,
      named: 0.8,
    },
    // labelled before running: first run category 6/10, lever 5/10 (MPS 805 3/3; SGLang balance 1/2, 6503 a title without the
    // period; vLLM profiling 0/1, wrapped; TF 1.x start-up free memory 0/1, no error line in the excerpt; 2 TF confusers 1/2 category,
    // 0/2 lever); 8/10 category, 8/10 lever after (TF 1.x's up-front ask measured against the free memory it found: 6508).
    {
      group: 'holder12',
      what: '10 logs, 6500-6509: CUDA MPS error 805, SGLang TP balance check, vLLM profiling assertion, TF 1.x free memory at start, desktop-share confusers',
      n: 10,
      category: 0.75,
      lever: 0.75,
      strict: 0,
      named: 0.75,
    },
    // labelled before running: first run category 5/7, lever 3/7 (main before: 4/7, 3/7); 7/7 category, 5/7 lever after the Chinese
    // 比 comparative and a DataLoader in a container (6750, 6754); 6752 (eval at full resolution) and 6753 (grows with the set) keep no_grad.
    // labelled before running: first run category 1/8 (main before) -> 2/8 (this stop's first change); 7/8 after OOMKilled unquoted,
    // a tool "Detect*" in a title, "illegal memory access" bare, "没有释放掉", "keep increasing the batch"; 7427 left (README).
    // labelled before running: first run category 5/8 (engine before) -> 7/8 (this change); 8/8 after "Gloo ... 无法 ... 通信" (7540);
    // 7548 (c10d "[E socket.cpp] failed to connect to any network address of") a first-run miss, right after its pattern.
    {
      group: 'dist14',
      what: '9 logs, 7540-7548: RendezvousClosedError, Gloo connectFullMesh and connect failures told, c10d connect, a rank killed by signal 9',
      n: 9,
      category: 0.75,
      lever: 0.75,
      strict: 0,
      named: 0.75,
    },
    {
      group: 'words14',
      what: '8 logs, 7420-7427: exit -9 and 137 told, shm told low, illegal memory access named short, growth told, two near misses',
      n: 8,
      category: 0.6,
      lever: 0.5,
      strict: 0,
      named: 0.5,
    },
    {
      group: 'words13',
      what: '7 logs, 6750-6756: ENOSPC beside a DataLoader in Docker, exit 137, evaluation told above training (3), kills told in words',
      n: 7,
      category: 0.85,
      lever: 0.6,
      strict: 0,
      named: 0.6,
    },
    // labelled before running: first run category 5/5, lever 4/5, named first 2/5 (README).
    {
      group: 'input13',
      what: '5 logs, 6850-6854: inference on one input said in words or by a script, an OCR long image, a visualisation script without no_grad',
      n: 5,
      category: 0.8,
      lever: 0.6,
      strict: 0,
      named: 0.2,
    },
    // labelled before running: 13/13 category and lever at the start engine too, 7 of them by abstaining; after the two rules
    // (knowledge/tensors-on-two-devices, knowledge/cublas-unsupported-operation) the same 13/13, every one with a diagnosis.
    // 7013-7014 (an absurd host request and its near miss), labelled before running: 1/2 lever at the start engine, 2/2 after.
    {
      group: 'confuse13',
      what: '15 logs, 7000-7014: device mismatch (3 logged without type), cuBLAS NOT_SUPPORTED / ARCH_MISMATCH (7), invalid ordinal, pinned host, free >= request, host requests of 115 TiB and 926 GiB',
      n: 15,
      category: 0.9,
      lever: 0.9,
      strict: 0,
      named: 0.9,
    },
    // stop 39 (s1): labelled before running, first run category 8/8, lever 7/8 (named first 7), strict 0 (6905: FLUX named without a size);
    // 6908-6911 taken to try a9158e4 on threads nobody had seen: 12/12, 10/12 (named first 8; 7 at the stop's start engine: 6909's A10).
    {
      group: 'static13',
      what: '12 logs, 6900-6911: 16-bit weights over the card, full fine-tunes over the card or under ZeRO-2, a split undone, fp8 checkpoints, 2 LoRA batch near misses',
      n: 12,
      category: 0.85,
      lever: 0.75,
      strict: 0,
      named: 0.6,
    },
    // labelled before running: first run category 6/7, lever 3/6 (named first 3); the selection lever fired on none of the 4 threads it
    // applies to (space-separated ids, ordinal cards, device=cuda:N unread) and on neither renumbered-card near miss; after (those
    // forms, "my GPU 1" asked for): category 6/7 (6950 has no error line), lever 5/6, the near misses still held. 6957-6959, small
    // cards labelled first: a lower 'held outside' floor for cards under 4 GiB called 6958's 1 GB card another job's (strict harm),
    // so it was not kept; 9/10 category, 7/8 lever without it. 6960 (XLA:TPU, labelled first): the batch fallback before XLA's
    // own device name was read, the TPU reply after (sequence length named after the per-core batch): 10/11, lever 8/9, named 7/9.
    {
      group: 'stack13',
      what: '11 logs, 6950-6960: a GPU selection that did not reach the process, a card asked for, renumbered-card and small-card near misses, XLA:TPU',
      n: 11,
      category: 0.85,
      lever: 0.8,
      strict: 0,
      named: 0.7,
    },
    // version13 (stop 39, v1): four batches, each labelled before the engine of its time ran. First runs: 1/8 (6700-6707),
    // 1/8 (6708-6715), 2/6 (6716-6721), 2/4 (6722-6725): the version lever took the first fix on 7 unseen threads, 6 rightly
    // (wrongly on the near miss 6713). 21/26 category, 20/26 lever after reading.
    {
      group: 'version13',
      what: '26 logs, 6700-6725: a regression told between two versions (diffusers, transformers, vLLM, verl, Ollama, PyTorch, DeepSpeed, accelerate, F5-TTS, DeepFaceLab), an update told with the same settings, near misses whose settings changed',
      n: 26,
      category: 0.75,
      lever: 0.7,
      strict: 0,
      named: 0.65,
    },
    // stop 40 (arch): labelled before running: first run category 7/9, lever 3/8 (5/9, 1/8 at the stop's start engine); then card
    // names written as a bare number with Ti ("3080ti"): 8/9, 4/8. 7361/7362 (no version named; a CUDA 8 image beside TF 1.13) miss.
    {
      group: 'arch14',
      what: '9 logs, 7360-7368: a card newer than the CUDA build (TF 1.x / CUDA 10 on Ampere), CUDA error 30 at init, near misses with no card named',
      n: 9,
      category: 0.85,
      lever: 0.45,
      strict: 0,
      named: 0.45,
    },
    // hold14 (stop 40): three batches labelled before the engine ran. First runs: 6/8 category, 3/7 lever (7390-7397), 2/4, 2/4
    // (7398-7401), 2/3, 1/2 (7402-7404): the same before and after the change on all three (its forms reached none), so the
    // change decides only where the paste has no error message and the TF rule sits below the message rules; 14/15, 10/13 after.
    // chain14 (stop 40, chain): labelled before running. First run 7510-7515: category 5/6, lever 2/3 before the change, 6/6,
    // 3/3 after (the AssertionError's cache budget message was read); 7516, taken after the change: none before, right after.
    {
      group: 'chain14',
      what: '7 logs, 7510-7516: DirectML and serving-cache memory failures under RuntimeError/AssertionError, a chain, two AttributeError near misses',
      n: 7,
      category: 0.8,
      lever: 0.6,
      strict: 0,
      named: 0.6,
    },
    {
      group: 'hold14',
      what: '15 logs, 7390-7404: leftover processes of a killed or interrupted run told in words (EN, zh), TF instances sharing a card, same-process near misses',
      n: 15,
      category: 0.85,
      lever: 0.7,
      strict: 0,
      named: 0.6,
    },
    // route14 (stop 40, route): labelled before running. First run 7330-7336: category 6/7, lever 4/4 (named first 2), the same
    // before and after the device-words routing (memory-named.ts; none took its paths); 7337-7340: 2/4 before and after it (内存 of
    // "1张卡" and beside MPS were not read); 10/11, lever 5/5 (named 2) once a card counted by a digit and MPS / Metal were read.
    {
      group: 'route14',
      what: "11 logs, 7330-7340: device OOMs told by Metal, MPS, Vulkan, a tool's VRAM message, 内存/显存 of a card; host-RAM near misses beside VRAM words",
      n: 11,
      category: 0.85,
      lever: 0.8,
      strict: 0,
      named: 0.3,
    },
    // serve14 (stop 40, serve): 8 threads labelled before the engine ran. First run, engine before the stop's change 3/7 on
    // the lever, with the KV-budget reader and the revert reading as first written 3/7 (they took no first fix); read
    // then (a revert told "OK", parallel slots, the card family's bound): 5/7, and LM Studio's load report (7484 named first):
    // 5/7 (named first 5). 6/8 category (7481, 7485 have no error line).
    {
      group: 'serve14',
      what: '8 logs, 7480-7487: Ollama, LM Studio and vLLM; a release gone back to, the KV cache of a large or parallel context, a near miss',
      n: 8,
      category: 0.7,
      lever: 0.65,
      strict: 0,
    },
    // cat14 (stop 40, cat): 5 threads labelled before the engine ran. First run: engine before the change category 2/5,
    // lever 0/3; with the runtime-format catalogue as first written 5/5, 0/3; read then (OpenVINO's fix names resolution,
    // Realm's -ll:fsize reservation catalogued): 5/5, 2/3, strict 0.
    {
      group: 'cat14',
      what: "5 logs, 7250-7254: runtimes' own out-of-memory formats (OpenVINO GPU cap, SGLang KV pool, Realm), near misses",
      n: 5,
      category: 0.8,
      lever: 0.6,
      strict: 0,
    },
    // frag14 (stop 40, frag): labelled before running; first run category 3/5, lever 2/3, strict 1 at the stop's start engine,
    // 4/5, 2/3, strict 1 with levers/cache-capacity.ts (7304 now capacity; 7300's strict harm is the holder read, not the cache).
    {
      group: 'frag14',
      what: '5 logs, 7300-7304: live tensors + request at 86-92% of the card beside an idle cache that covers the request, 2 near misses at 77-80%',
      n: 5,
      category: 0.75,
      lever: 0.6,
      strict: 1,
      named: 0.6,
    },
  ];
  it.each(TUNED)('$group/ ($what; tuned): no harmful first fix; floors under the measured level', { timeout: 120_000 }, async (t) => {
    const s = await scoreExpertDir(groupDir(t.group));
    console.log(`tuned (${t.group}): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(t.n);
    expect(s.failed, misses(s.rows)).toBe(0);
    expect(s.harmful, misses(s.rows)).toBe(0);
    if (t.strict !== undefined) expect(s.harmfulStrict, misses(s.rows)).toBeLessThanOrEqual(t.strict);
    expect(s.category / s.n, misses(s.rows)).toBeGreaterThanOrEqual(t.category);
    expect(s.lever / s.leverOf, misses(s.rows)).toBeGreaterThanOrEqual(t.lever);
    if (t.named !== undefined) expect(s.leverFirst / s.leverOf, misses(s.rows)).toBeGreaterThanOrEqual(t.named);
  });

  // The blind splits: built blind (gpu-doctor never run on their logs while each was built). An untuned one prints only
  // its aggregate line (nobody tunes on it); a read one was opened case by case once it had served. Floors under the
  // latest measured level; each entry's comment says where its figures come from.
  const BLIND_SPLITS: { group: string; kind: 'untuned' | 'read'; what: string; n: number; category: number; lever: number }[] = [
    // Built blind (gpu-doctor never run on these logs while the group was built). Measured once when added, on the engine
    // of the end of stop 28 (issue 23's levers and stack routes in): category 65/87, lever 44/86, all checks 54/87,
    // harmful 0 (strict 4); at the end of stop 30 (phase, budget, distributed reasoning) 67/87, 50/86, 58/87, strict 4.
    // Floors a little under the latest.
    {
      group: 'blind3',
      kind: 'untuned',
      what: 'untuned split (blind3/: 87 logs, 1500-1586, issue 23, built blind after the engine rework, balanced by class; 25 zh, 12 confusers): floors under the measured level',
      n: 87,
      category: 0.75,
      lever: 0.55,
    },
    // Built blind (gpu-doctor never run on these logs while the group was built). Floors set under the first measuring
    // run at the end of stop 30 (category 56/75, lever 44/72, strict harm 3); nobody reads its misses.
    {
      group: 'blind4',
      kind: 'untuned',
      what: 'untuned split (blind4/: 75 logs, 1600-1674, issue 23, built blind, balanced by class; 17 zh, 10 confusers): floors under the measured level',
      n: 75,
      category: 0.72,
      lever: 0.58,
    },
    // Built blind for issue 23's closing measurement (gpu-doctor never run on these logs while the group was built),
    // after this session's engine work (issue 23's done-when split). First measuring run, 2026-11-29:
    // category 64/93, lever 47/76 (named first 37), harmful 0 (strict 1); after the next session's engine work (1090db3):
    // category 71/93, lever 56/76 (named first 44), harmful 0 (strict 1). Floors under it; nobody reads its misses.
    {
      group: 'blind5',
      kind: 'untuned',
      what: 'untuned split (blind5/: 93 logs, 3000-3092, issue 23, built blind, balanced by class; 30 zh, 10 confusers): floors under the measured level',
      n: 93,
      category: 0.72,
      lever: 0.68,
    },
    // Built blind in the session that changed the engine after blind5 (gpu-doctor never run on these logs while the group
    // was built). At that session's starting engine (4e1da32): category 71/93, lever 37/62 (named first 29), harmful 0
    // (strict 4); at its end (1090db3): category 76/93, lever 43/62 (named first 36), harmful 0 (strict 4). Floors under
    // the end. Read case by case at stop 36 (a read split since: see blind6/README.md): category 90/93, lever 59/62 (named
    // first 57), strict 2 after that stop's work. Floors under it.
    {
      group: 'blind6',
      kind: 'read',
      what: 'read split (blind6/: 93 logs, 3800-3897, issue 23, built blind, read at stop 36; 28 zh, 10 confusers): floors under the measured level',
      n: 93,
      category: 0.94,
      lever: 0.92,
    },
    // blind7: at the session's starting engine (01a1c09) category 71/88, lever 46/65 (named first 38), strict 5; at its end
    // (see blind7/README.md) category 72/88, lever 47/65 (named first 41), strict 5. Read case by case at stop 36 (a read
    // split since: see blind7/README.md): category 81/88, lever 61/65 (named first 61), strict 0 after that stop's work.
    {
      group: 'blind7',
      kind: 'read',
      what: 'read split (blind7/: 88 logs, 3900-3994, issue 23, built blind, read at stop 36; 24 zh, 10 confusers): floors under the measured level',
      n: 88,
      category: 0.9,
      lever: 0.9,
    },
    // blind8: built blind at stop 36's start for issue 23's done-when while that stop changed the engine from blind6's and
    // blind7's misses. At the start engine (df0ad55) category 77/90, lever 53/71 (named first 42), strict 5; at the end
    // (see blind8/README.md) category 77/90, lever 51/71 (named first 43), strict 6. Read case by case at stop 37 (a read
    // split since): category 83/90, lever 60/71 (named first 57), strict 4 after that stop's work. Floors under it.
    {
      group: 'blind8',
      kind: 'read',
      what: 'read split (blind8/: 90 logs, 5600-5694, issue 23, built blind, read at stop 37; 27 zh, 12 confusers): floors under the measured level',
      n: 90,
      category: 0.9,
      lever: 0.82,
    },
    // blind9: built blind at stop 37's start for issue 23's done-when while that stop fixed the forms blind8's misses showed
    // and swept four families' message catalogues. At the start engine (2da4285) category 76/95, lever 47/76 (named first
    // 41), strict 1; at the end (see blind9/README.md) category 79/95, lever 49/76 (named first 43), strict 1. Floors under the end.
    // Read case by case at stop 38 (its misses fixed by form): category 88/95, lever 60/76 (named first 58), strict 0 after.
    {
      group: 'blind9',
      kind: 'read',
      what: 'read split (blind9/: 95 logs, 5700-5797, issue 23, built blind, read at stop 38; 29 zh, 14 growth): floors under the measured level',
      n: 95,
      category: 0.9,
      lever: 0.76,
    },
    // blind10: built blind at stop 38's start for issue 23's done-when while that stop fixed the forms blind9's misses
    // showed. At the start engine (a74817b) category 80/94, lever 45/71 (named first 38), strict 1 (see blind10/README.md).
    // Read case by case at stop 39 (its misses surveyed by lever, not by form).
    {
      group: 'blind10',
      kind: 'read',
      what: 'read split (blind10/: 94 logs, 6200-6297, issue 23, built blind, read at stop 39; 26 zh, 13 growth): floors under the measured level',
      n: 94,
      category: 0.82,
      lever: 0.6,
    },
    // blind11: built blind at stop 39's start for issue 23's done-when, before that stop changed the engine (by lever, from
    // the read splits). At the start engine (b1c15b3) category 74/89, lever 40/62 (named first 36), strict 5; at the end
    // category 73/89, lever 43/62 (named first 35), strict 4 (see blind11/README.md). Read case by case at stop 40.
    {
      group: 'blind11',
      kind: 'read',
      what: 'read split (blind11/: 89 logs, 6600-6698, issue 23 done-when, built blind, balanced by class; 23 zh, 13 growth): floors under the measured level',
      n: 89,
      category: 0.8,
      lever: 0.6,
    },
    // blind12: built blind at stop 39's END, after its engine work (issue 23's done-when). At that engine (18f2ad3) category
    // 72/87, lever 45/60 (named first 30), strict 1; at the stop's start engine 72/87, 44/60 (29), strict 1 (blind12/README.md).
    // Read case by case at stop 40 (the same engine at its start: unchanged figures).
    {
      group: 'blind12',
      kind: 'read',
      what: 'read split (blind12/: 87 logs, 7100-7197, issue 23 done-when, built blind after the engine work; 19 zh, 31 reports in words)',
      n: 87,
      category: 0.8,
      lever: 0.7,
    },
    // blind13: built blind at stop 40 by four builders while that stop's helpers changed the engine from the read splits'
    // gap rows (neither side saw the other's work). At the end engine (63bcbf5) category 72/93, lever 35/49 (named first
    // 27), strict 0; at the start engine (63909e1) 73/93, 35/49 (27), strict 0 (blind13/README.md). Read case by case in
    // stop 40's second round (its gap rows by principle): 80/93, 39/49 after.
    {
      group: 'blind13',
      kind: 'read',
      what: 'read split (blind13/: 93 logs, 7600-7697, issue 23 done-when, built blind beside the engine work; 26 zh, 14 growth)',
      n: 93,
      category: 0.74,
      lever: 0.65,
    },
    // blind14: built blind at stop 40 beside its second round of engine work. At the start engine (63909e1) category 76/95,
    // lever 27/54 (named first 24), strict 1; after the first round (3b7c460) and at the end 75/95, 27/54 (24), strict 1.
    {
      group: 'blind14',
      kind: 'untuned',
      what: 'untuned split (blind14/: 95 logs, 7700-7797, issue 23 done-when, built blind beside the engine work; 23 zh, 14 growth)',
      n: 95,
      category: 0.76,
      lever: 0.45,
    },
  ];
  it.each(BLIND_SPLITS)('$what', { timeout: 120_000 }, async (t) => {
    const s = await scoreExpertDir(groupDir(t.group));
    // Misses are not printed per case for an untuned split: only its aggregate line.
    console.log(`${t.kind} (${t.group}): ${expertLine(s)}`);
    expect(s.n).toBeGreaterThanOrEqual(t.n);
    expect(s.failed).toBe(0);
    expect(s.harmful).toBe(0);
    expect(s.category / s.n).toBeGreaterThanOrEqual(t.category);
    expect(s.lever / s.leverOf).toBeGreaterThanOrEqual(t.lever);
  });
});
