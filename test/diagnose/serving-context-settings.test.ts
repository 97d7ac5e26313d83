// The context a local runner serves with, as the clients in front of it and the runner itself print it (issue 23, F):
// Continue's model settings and LM Studio's load config write "contextLength" in camelCase, Ollama's server config
// "OLLAMA_CONTEXT_LENGTH"; Ollama is named by its vendored llama.cpp's source paths in a ggml assertion (llm/llama.cpp/
// to 0.3, ml/backend/ggml/ggml/ from 0.5). A long context on a small card: the context is the first knob, not the
// resident models (keep_alive) of a multi-model Ollama. Real thread (blind8 read split) beside synthetic variants (said so).
import { describe, expect, it } from 'vitest';
import { readGenerationLength } from '../../src/diagnose/levers/generation-length.js';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe('serving context settings', () => {
  it('blind8/5621: Ollama behind Continue with contextLength 24000 on a 4 GB card: lower the context first', async () => {
    expect((await firstOfCase('blind8', '5621'))?.fixes[0]?.summary).toMatch(/^Ollama serves with a long context \(contextLength: 24000\)/);
  });
  it.each([
    ['contextLength: 32768', 32768],
    ['"contextLength": 16384,', 16384],
    ['{"contextLength": 24000}', 24000],
    ['OLLAMA_CONTEXT_LENGTH:65536 OLLAMA_DEBUG:INFO', 65536],
    ['OLLAMA_CONTEXT_LENGTH=131072 ollama serve', 131072],
  ])('synthetic: "%s"', (text, n) => {
    expect(readGenerationLength(text).generateLen).toBe(n);
  });
  it('synthetic control: a camelCase key of another meaning is no context', () => {
    expect(readGenerationLength('maxContextLengthWarning: true, contextLengthy: 9000').generateLen).toBeUndefined();
  });
  it.each([
    String.raw`GGML_ASSERT: C:\a\ollama\ollama\llm\llama.cpp\ggml-cuda.cu:375: !"CUDA error"`,
    'current device: 0, in function alloc at /go/src/github.com/ollama/ollama/ml/backend/ggml/ggml/src/ggml-cuda/ggml-cuda.cu:438',
  ])('synthetic: Ollama named by its vendored llama.cpp path, a long context set: the context leads (%#)', async (path) => {
    const paste = ['contextLength: 32768', 'CUDA error: out of memory', path, 'llama_new_context_with_model: n_ctx = 32768'].join('\n');
    expect((await diagnosePaste(paste))?.fixes[0]?.summary).toMatch(/^Ollama serves with a long context/);
  });
});
