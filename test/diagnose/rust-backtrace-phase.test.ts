// Rust stacks (candle, cudarc) print their CUDA out-of-memory as `DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")`
// with a std backtrace below it, innermost first ("   3: candle_core::safetensors::convert_slice"). A frame that reads
// weights (safetensors / GGUF, a VarBuilder, a model's `load`) says the model was loading: no batch exists yet, and the
// weights are the lever; a `forward` frame innermost says a step ran (holder-phase.ts). Real thread (blind8 read split)
// beside synthetic backtraces written from the format (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const ERR = 'Error: DriverError(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")';
const bt = (frames: string[]) => [ERR, ...frames.map((f, i) => `${String(i).padStart(4)}: ${f}`)].join('\n');

describe('real thread (blind8)', () => {
  it('5661: Falcon::load -> safetensors convert: the weights do not fit, quantize or a smaller model', async () => {
    const d = await firstOfCase('blind8', '5661');
    expect(d?.facts.oomPhase).toBe('load');
    expect(first(d)).toMatch(/^The weights are what fills the card[\s\S]*quantized/);
  });
});

describe('backtraces (synthetic)', () => {
  it.each([
    [
      'a GGUF load',
      [
        'candle_core::error::Error::bt',
        'candle_core::quantized::gguf_file::Content::tensor',
        'candle_transformers::models::quantized_llama::ModelWeights::from_gguf',
      ],
    ],
    [
      'a VarBuilder get',
      ['candle_core::error::Error::bt', '<candle_nn::var_builder::VarBuilderArgs<B>>::get_with_hints', 'candle_transformers::models::llama::Llama::load'],
    ],
    [
      'with "at" lines',
      ['candle_core::error::Error::bt', '      at /root/.cargo/registry/src/candle-core/src/error.rs:229:25', 'candle_core::safetensors::load'],
    ],
  ])('%s: load phase, weights first', async (_n, frames) => {
    const d = await diagnosePaste(bt(frames));
    expect(d?.facts.oomPhase).toBe('load');
  });
  it('a forward innermost: a step ran, not a load', async () => {
    const d = await diagnosePaste(
      bt([
        'candle_core::error::Error::bt',
        'candle_core::tensor::Tensor::matmul',
        'candle_transformers::models::llama::CausalSelfAttention::forward',
        'candle_transformers::models::llama::Llama::load',
      ]),
    );
    expect(d?.facts.oomPhase).toBe('forward');
  });
  it('a numbered list in prose is no backtrace', async () => {
    const d = await diagnosePaste([ERR, '  1: I tried a smaller prompt', '  2: I tried load_in_8bit'].join('\n'));
    expect(d?.facts.oomPhase).toBeUndefined();
  });
});

// Without a backtrace: candle's examples print "retrieved the files in {:?}" before the weights go to the device and
// "loaded the model in {:?}" after; mistral.rs panics in its pipeline/isq.rs while it quantizes weights as it loads them.
// Real threads (stacks11, tuned) beside synthetic variants (said so).
describe('Rust runners without a backtrace', () => {
  it('stacks11/5904 (candle, "retrieved the files in"): the weights load, split or quantize', async () => {
    const d = await firstOfCase('stacks11', '5904');
    expect(d?.facts.oomPhase).toBe('load');
    expect(first(d)).toMatch(/quantized[\s\S]*split it over several GPUs/);
  });
  it('stacks11/5905 (mistral.rs panic in pipeline/isq.rs): the load', async () => {
    expect((await firstOfCase('stacks11', '5905'))?.facts.oomPhase).toBe('load');
  });
  it('synthetic: the model loaded before the failure is no load', async () => {
    const d = await diagnosePaste(['retrieved the files in 1.2s', 'loaded the model in 8.1s', 'starting the inference loop', ERR].join('\n'));
    expect(d?.facts.oomPhase).toBeUndefined();
  });
  it('synthetic: a loaders panic of mistral.rs is the load', async () => {
    const d = await diagnosePaste(
      [
        "thread 'main' panicked at mistralrs-core/src/pipeline/loaders/normal_loaders.rs:120:9:",
        `called \`Result::unwrap()\` on an \`Err\` value: ${ERR.slice(7)}`,
      ].join('\n'),
    );
    expect(d?.facts.oomPhase).toBe('load');
  });
});
