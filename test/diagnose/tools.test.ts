// knowledge/tools.yaml: which tool wrote a log, and fixes in that tool's own terms (issue 12, item 2).
// Detection is checked on real logs of the dev and held-out sets, whose cases.json name the framework.
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, writeFileSync, cpSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadRuleBase, RuleLoadError } from '../../src/diagnose/rule-base.js';
import { detectTool } from '../../src/diagnose/tools.js';
import { LogText, normalizeLog } from '../../src/diagnose/normalize.js';
import { diagnoseOutput } from './corpus-case.js';

const testDir = resolve(import.meta.dirname, '..');
const base = await loadRuleBase();
const toolOf = (rel: string) => detectTool(new LogText(normalizeLog(readFileSync(join(testDir, rel), 'utf8'))), base.tools)?.id;

describe('tool detection on real logs', () => {
  it.each([
    ['fixtures/eval-dev/009-host_oom_killed.log', 'yolov5'], // ultralytics/yolov5 v4.0
    ['fixtures/eval-dev/064-host_oom_killed.log', 'ultralytics'], // Ultralytics YOLOv8.1.1
    ['fixtures/eval-dev/067-growing_memory_leak.log', 'mmcv'], // mmdetection 2.x
    ['fixtures/eval-dev/084-replica_oom.log', 'espnet'],
    ['fixtures/eval-dev/051-replica_oom.log', 'hf-trainer'],
    ['fixtures/eval-extra/005-cuda_oom.log', 'detectron2'],
    ['fixtures/eval-extra/008-cuda_oom.log', 'jax'], // multinerf
    ['fixtures/eval-extra/010-cuda_oom.log', 'keras'],
    ['fixtures/eval-extra/013-cuda_oom.log', 'fairseq'],
    ['fixtures/eval-extra/024-host_oom_killed.log', 'deepspeed'], // accelerate + deepspeed launcher
  ])('%s -> %s', (rel, id) => {
    expect(toolOf(rel)).toBe(id);
  });

  it('a log with no tool markers names none (OneTrainer is not in the list)', () => {
    expect(toolOf('fixtures/eval-extra/003-cuda_oom.log')).toBeUndefined();
  });

  // The one-pass RE2.Set must name the same tool as trying each detect pattern in file order, on every real log of
  // the corpus groups (the earliest tool in tools.yaml with any match wins either way).
  it('one pass with every detect pattern names the same tool as a pass per pattern, on every corpus log', () => {
    const untuned = join(testDir, 'fixtures/untuned');
    const logs = readdirSync(untuned, { withFileTypes: true })
      .filter((d) => d.isDirectory())
      .flatMap((d) =>
        readdirSync(join(untuned, d.name))
          .filter((f) => f.endsWith('.log'))
          .map((f) => join(untuned, d.name, f)),
      );
    expect(logs.length).toBeGreaterThan(1000);
    const perPattern = { ...base.tools!, detectSet: undefined };
    let named = 0;
    for (const file of logs) {
      const log = new LogText(normalizeLog(readFileSync(file, 'utf8')));
      const once = detectTool(log, base.tools)?.id;
      expect(once, file).toBe(detectTool(log, perPattern)?.id);
      if (once) named++;
    }
    expect(named).toBeGreaterThan(300);
  });
});

describe("fixes in the tool's own terms (CLI)", () => {
  const diagnoseJson = async (rel: string) => JSON.parse(await diagnoseOutput(['--json', join(testDir, rel)]));

  it('Ultralytics with no batch in the log: its default batch=16 -> 8, said to be the default; no AMP offer (on by default)', async () => {
    const [d] = (await diagnoseJson('fixtures/eval-extra/021-cuda_oom.log')).diagnoses;
    expect(d.facts).toMatchObject({ tool: 'ultralytics', batch: 16, batchDefaultOf: 'Ultralytics YOLO' });
    expect(d.fixes[0].changes.batch).toBe(8);
    expect(JSON.stringify(d.fixes)).not.toMatch(/mixed precision/i);
    const text = await diagnoseOutput([join(testDir, 'fixtures/eval-extra/021-cuda_oom.log')]);
    expect(text).toContain("batch: 16 (Ultralytics YOLO's default; the log does not state it)");
  });

  it('Keras: mixed precision the Keras way, the stated batch_size halved', async () => {
    const [d] = (await diagnoseJson('fixtures/eval-extra/010-cuda_oom.log')).diagnoses;
    expect(d.facts.tool).toBe('keras');
    expect(d.facts.batchDefaultOf).toBeUndefined();
    expect(JSON.stringify(d.fixes)).toContain("set_global_policy('mixed_float16')");
  });
});

describe('serving tools: their own offload flags, escalated past what the log already turned (CLI)', () => {
  const diagnoseJson = async (rel: string) => JSON.parse(await diagnoseOutput(['--json', join(testDir, rel)]));

  it('A1111 sysinfo already on --medvram (tuned llm/397): the web UI is recognised and --lowvram comes first, no batch', async () => {
    const [d] = (await diagnoseJson('fixtures/untuned/llm/397-cuda_oom.log')).diagnoses;
    expect(d.facts.tool).toBe('sd-webui');
    const first = d.fixes.find((f: { summary: string }) => /serving/.test(f.summary));
    expect(first.summary).toMatch(/Turn its own memory knobs: --lowvram \(it already runs with --medvram/);
    expect(d.fixes.some((f: { changes: { batch?: number } }) => typeof f.changes.batch === 'number')).toBe(false);
  });

  it('"when I try to use txt2img" on a 2 GB card (tuned llm/315): the web UI, --medvram/--lowvram first', async () => {
    const [d] = (await diagnoseJson('fixtures/untuned/llm/315-cuda_oom.log')).diagnoses;
    expect(d.facts.tool).toBe('sd-webui');
    expect(d.fixes[0].summary).toMatch(/--medvram .*--lowvram, which offload/);
  });

  it('ComfyUI installed inside the A1111 folder (tuned llm/406 path) is ComfyUI, not the A1111 web UI', () => {
    expect(toolOf('fixtures/untuned/llm/406-cuda_oom.log')).toBe('comfyui');
  });

  it('"the 13B model" in prose gives the parameter count, and 13B of fp16 weights on a 14.75 GiB T4 is the weights (tuned llm/325)', async () => {
    const [d] = (await diagnoseJson('fixtures/untuned/llm/325-cuda_oom.log')).diagnoses;
    expect(d.facts.paramsB).toBe(13);
    expect(d.facts.holder).toBe('weights');
    expect(d.fixes[0].summary).toMatch(/quantized/);
    expect(typeof d.fixes[0].changes.batch).toBe('undefined');
  });

  it('a log that names no web UI and no --medvram keeps the plain fixes (no tool)', () => {
    expect(toolOf('fixtures/eval-extra/003-cuda_oom.log')).toBeUndefined();
  });
});

describe('what a GPU OOM cites (issue 12: not the same YOLOv5 issue for every OOM)', () => {
  const sourceOf = async (rel: string) =>
    (JSON.parse(await diagnoseOutput(['--json', join(testDir, rel)])) as { diagnoses: { source: Record<string, string> }[] }).diagnoses[0].source;

  it("an Ultralytics OOM cites the Ultralytics train settings; a toolless one PyTorch's memory notes; a shm error keeps its rule's source", async () => {
    expect(await sourceOf('fixtures/eval-extra/021-cuda_oom.log')).toEqual({
      docs: 'https://docs.ultralytics.com/modes/train/#train-settings',
      note: 'Ultralytics YOLO: its own memory settings',
    });
    expect((await sourceOf('fixtures/eval-extra/003-cuda_oom.log')).docs).toBe('https://pytorch.org/docs/stable/notes/cuda.html#memory-management');
    expect((await sourceOf('fixtures/eval-dev/012-shm_exhausted.log')).docs).toBeUndefined();
  });
});

describe('tools.yaml is checked when it loads', () => {
  const brokenTools = (yaml: string) => {
    const root = mkdtempSync(join(tmpdir(), 'kb-tools-'));
    mkdirSync(join(root, 'cuda-oom'));
    cpSync(resolve(import.meta.dirname, '../../knowledge/cuda-oom/rule.yaml'), join(root, 'cuda-oom', 'rule.yaml'));
    // the rule's shared advice (kind: advice, shared: <id>) comes with it
    cpSync(resolve(import.meta.dirname, '../../knowledge/advice.yaml'), join(root, 'advice.yaml'));
    writeFileSync(join(root, 'tools.yaml'), yaml);
    return root;
  };
  it('a tool without a source fails, naming the file and the field', async () => {
    const root = brokenTools('- id: x-tool\n  name: X Tool\n  detect: [xtool]\n');
    await expect(loadRuleBase(root)).rejects.toThrow(RuleLoadError);
    await expect(loadRuleBase(root)).rejects.toThrow(/tools\.yaml: 0\.source/);
  });
  it('a detect pattern re2 cannot compile is rejected', async () => {
    const root = brokenTools('- id: x-tool\n  name: X Tool\n  detect: ["(a+)\\\\1"]\n  source: https://example.org/x\n');
    await expect(loadRuleBase(root)).rejects.toThrow(/tools\.yaml: x-tool: detect\.0: not a valid re2 pattern/);
  });
  it('an escalate pattern re2 cannot compile is rejected, naming the tool and the entry', async () => {
    const root = brokenTools(
      '- id: x-tool\n  name: X Tool\n  detect: [xtool]\n  knobs: [--low]\n  escalate:\n    - present: "(a+)\\\\1"\n      knobs: [--lower]\n  source: https://example.org/x\n',
    );
    await expect(loadRuleBase(root)).rejects.toThrow(/tools\.yaml: x-tool: escalate\.0\.present: not a valid re2 pattern/);
  });
  it('every tool names its source and how to shrink memory', () => {
    for (const t of base.tools!.tools) {
      expect(t.source, t.id).toMatch(/^https:\/\//);
      // A launcher or script no log names describes its command line only.
      if (t.detect.length === 0) {
        expect(t.cli, t.id).toBeDefined();
        continue;
      }
      expect(t.batch_flag ?? t.knobs?.[0], t.id).toBeTruthy();
    }
  });
});
