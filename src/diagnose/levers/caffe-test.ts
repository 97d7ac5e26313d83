// Caffe's test net failed, not its training net (issue 23: each phase has its own levers). The solver tests every
// test_interval iterations by forward passes of the TEST net, test_iter batches of its own data layer's batch_size
// (solver.cpp: "Iteration N, Testing net (#0)"; older builds "Testing net"; the glog stack names caffe::Solver<>::Test()).
// A CUDA_CHECK failure whose last solver line is that test line, or whose stack runs through Solver::Test, ran in the
// test net: its batch_size (with test_iter covering the set) is the lever, not the training batch. Bounded, per line.
import type { Incident } from '../incident/index.js';
import { boundedLines } from '../lines.js';

const TESTING = /\bTesting net\b/;
const TEST_FRAME = /\bcaffe::Solver<\w{0,12}>::Test(?:All)?\(\)/;
const TRAINING = /\bIteration \d{1,9}, (?:loss|lr) = |\bTrain net output #\d/;
// glog's CHECK on a CUDA call: "Check failed: error == cudaSuccess (2 vs. 0)  out of memory", or older builds'
// "Check failed: (cudaMalloc(&gpu_ptr_, size_)) == cudaSuccess (2 vs. 0)" (2: cudaErrorMemoryAllocation).
const CUDA_CHECK = /Check failed: [^\n]{0,80}== cudaSuccess \(2 vs\. 0\)/;
const QUOTE_CHARS = 100;

/** The test line in force when Caffe's CUDA check failed (or the stack's Solver::Test frame), quoted. */
export function readCaffeTestNet(text: string): string | undefined {
  let testing: string | undefined;
  let found: string | undefined;
  for (const line of boundedLines(text, 20_000, 600)) {
    if (TESTING.test(line)) testing = line;
    else if (TRAINING.test(line)) testing = undefined;
    else if (CUDA_CHECK.test(line) && testing !== undefined) found ??= testing;
    else if (TEST_FRAME.test(line)) found ??= line;
  }
  if (found === undefined) return undefined;
  const t = found.trim();
  return t.length <= QUOTE_CHARS ? `"${t}"` : `"${t.slice(0, QUOTE_CHARS)}…"`;
}

export const CAFFE_TEST_CONDITIONS = {
  caffe_test_net: ({ incident }: { incident: Incident }) => incident.eval.caffeTestNet !== undefined,
};
