// A serving runner's own context and prompt lengths (issue 23): Ollama and llama.cpp state how long one request is in
// their fixed formats, and a long one is the lever (its KV cache and attention beside the weights; no training batch
// exists): Ollama's runner line 'msg="loading cache slot" ... prompt=95938', llama.cpp's server "n_prompt_tokens =
// 95938" and context report "n_ctx = 32768" (never n_ctx_train, the model's own), --ctx-size, the Modelfile's
// "PARAMETER num_ctx 131072". Ollama is known by its slog lines, its commands and its settings (tools.yaml), and its
// knobs follow the context. Real threads (blind6 read split, input10 tuned group) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { readGenerationLength } from '../../src/diagnose/levers/generation-length.js';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';

describe('real threads', () => {
  it("blind6/3831: Ollama loads a 95938-token prompt and ggml runs out: lower the context, then Ollama's own knobs", async () => {
    const d = await firstOfCase('blind6', '3831');
    expect(first(d)).toMatch(/^Ollama serves with a long context \(95938 tokens in the prompt\)[\s\S]*num_ctx/);
    expect(first(d)).not.toMatch(/batch 1/);
  });
  it('input10/5412: a Modelfile with PARAMETER num_ctx 131072 is the context, and the KV cache quantization is named', async () => {
    expect(first(await firstOfCase('input10', '5412'))).toMatch(/PARAMETER num_ctx 131072[\s\S]*quantize the KV cache/);
  });
});

describe("the runners' forms (synthetic variants)", () => {
  it.each([
    [
      'Ollama runner',
      'time=2025-01-02T10:00:00.000Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=40960 used=0 remaining=40960',
      40960,
    ],
    ['llama.cpp server', 'slot launch_slot_: id  0 | task 0 | new prompt, n_ctx_slot = 65536, n_keep = 0, n_prompt_tokens = 51234', 51234],
    ['llama.cpp context report', 'llama_new_context_with_model: n_ctx      = 32768', 32768],
    ['llama.cpp flag', './llama-server -m model.gguf --ctx-size 65536 -ngl 99', 65536],
    ['a Modelfile', 'FROM qwen2.5:32b\nPARAMETER num_ctx 65536', 65536],
    ['request options', '{"model": "llama3", "options": {"num_ctx": 32768}}', 32768],
  ])('%s', (_name, text, n) => {
    expect(readGenerationLength(text).generateLen).toBe(n);
  });
  it("the model's trained context (n_ctx_train) is not the run's", () => {
    expect(readGenerationLength('print_info: n_ctx_train      = 131072').generateLen).toBeUndefined();
  });
  it('an Ollama OOM at a long prompt names the context first', async () => {
    const paste = [
      'time=2025-02-01T08:00:00.000Z level=INFO source=server.go:104 msg="system memory" total="62.5 GiB"',
      'time=2025-02-01T08:00:05.000Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=60000 used=0 remaining=60000',
      'CUDA error: out of memory',
      '  current device: 0, in function alloc at //ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:445',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(/^Ollama serves with a long context \(60000 tokens in the prompt\)/);
  });
  it('control: a short prompt leaves the long-context lever out', async () => {
    const paste = [
      'time=2025-02-01T08:00:05.000Z level=DEBUG source=cache.go:104 msg="loading cache slot" id=0 cache=0 prompt=900 used=0 remaining=900',
      'CUDA error: out of memory',
      '  current device: 0, in function alloc at //ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:445',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(/long context/);
  });
});
