// Issue 23, routes by stack: llama.cpp's --fit (llama_params_fit, later common_fit_params) measures what the model
// needs per device before it loads and moves layers to system RAM until it fits, unless the user fixed the placement:
// "failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort" (likewise
// "model_params::tensor_buft_overrides already set by user, abort"). The lever is the hand-set placement (-ngl, -ot,
// --n-cpu-moe, --tensor-split), not the context nor a batch. Real log: blind9/5785 (a read split); the rest synthetic,
// written from the abort reasons in llama.cpp's source. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

const LOAD = 'llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4070) (0000:01:00.0) - 11210 MiB free';

describe("llama.cpp's --fit gave up because the placement was set by hand", () => {
  it('real blind9/5785: -ngl 99 with 8720 MiB free on CUDA0', async () => {
    const d = await firstOfCase('blind9', '5785');
    expect(d?.rule).toBe('llama-params-fit-user-placement');
    expect(d?.fixes[0].summary).toMatch(/Drop -ngl/);
    expect(d?.fixes[0].summary).not.toMatch(/\bbatch\b/i);
  });

  // synthetic: the old and the new function names, the other abort reasons, a timestamped server log
  it.each([
    ['llama_params_fit, -ngl 999', `${LOAD}\nllama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user to 999, abort`],
    [
      'common_fit_params, timestamped',
      `${LOAD}\n0.00.366.780 W common_fit_params: failed to fit params to free device memory: n_gpu_layers already set by user to 65, abort`,
    ],
    [
      'tensor overrides',
      `${LOAD}\nllama_params_fit: failed to fit params to free device memory: model_params::tensor_buft_overrides already set by user, abort`,
    ],
  ])('synthetic: %s', async (_n, text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('llama-params-fit-user-placement');
    expect(d?.category).toBe('cuda_oom');
  });

  it('synthetic: a fit that succeeded, or the abort without any memory sign, is not this rule', async () => {
    expect((await diagnosePaste(`${LOAD}\nllama_params_fit: successfully fit params to free device memory`))?.rule).not.toBe('llama-params-fit-user-placement');
    expect((await diagnosePaste('llama_params_fit: failed to fit params to free device memory: n_gpu_layers already set by user to 99, abort'))?.rule).not.toBe(
      'llama-params-fit-user-placement',
    );
  });
});
