// Conditions of the levers that shrink one input (issue 23): one tensor of half the card (single-tensor.ts), a
// restoration tool's tiles (tiled-restoration.ts), one host request as large as the RAM (host-request.ts). Each holds only where this process's own tensors, or nothing
// stated, fill the card: another holder or a card that is not full answers first (conditions.ts).
import { sampleTensorInput, singleTensorInput } from './single-tensor.js';
import { tiledRestorationFirst } from './tiled-restoration.js';
import { hostRequestAbsurd, hostRequestOverRam } from './host-request.js';
import { longAttentionFirst } from './long-attention.js';
import { inputSkippedFirst } from './input-skipped.js';
import { inferenceInputExperiment } from './input-size.js';
import type { Incident } from '../incident/index.js';

type Check = ({ incident }: { incident: Incident }) => boolean;

/** The input levers' conditions, given the holder verdict conditions.ts computes. */
export function inputLeverConditions(holder: (f: Incident) => string | undefined) {
  const own = (f: Incident) => {
    const h = holder(f);
    return h === undefined || h === 'activations';
  };
  return {
    // One failed request of half the card or more at a small or unstated batch (single-tensor.ts): the input's size.
    single_tensor_input: ({ incident }) => singleTensorInput(incident) && own(incident),
    // One sample's slice of TensorFlow's failed activation alone rules every batch out (single-tensor.ts): the input's size.
    sample_tensor_input: ({ incident }) => sampleTensorInput(incident) && own(incident),
    // One host allocation as large as the RAM (host-request.ts): the data or one input materialised whole, not the page file.
    host_request_over_ram: ({ incident }) => hostRequestOverRam(incident),
    // One host request of a tebibyte or more (host-request.ts): a garbage size, not capacity.
    host_request_absurd: ({ incident }) => hostRequestAbsurd(incident),
    // A long sequence in an inference or evaluation (long-attention.ts): fused attention, then the length.
    long_attention_first: ({ incident }) => longAttentionFirst(incident) && own(incident),
    // An upscaler or restoration tool run on one image, or a tile setting stated (tiled-restoration.ts): tiles first.
    tile_restoration_first: ({ incident }) => tiledRestorationFirst(incident) && own(incident),
    // A per-input skip line over its OOM (input-skipped.ts): one input at a time, and this one is too large.
    input_skipped_first: ({ incident }) => inputSkippedFirst(incident) && own(incident),
    // Inference said, no batch, input or model size stated (input-size.ts): the experiment is one input at half its size,
    // where the figures say this process's own tensors fill the card (unstated, the experiment that finds the holder leads).
    inference_input_experiment: ({ incident }) => inferenceInputExperiment(incident) && holder(incident) === 'activations',
  } satisfies Record<string, Check>;
}
