// Caffe's test net in training (issue 23: each phase has its own levers): Caffe tests by forward passes only, over
// test_iter batches of its TEST-phase data layer, so no_grad (PyTorch's) is no lever; the test net's batch_size is.
// Caffe is read by its fixed forms: glog's CUDA_CHECK failure ("Check failed: error == cudaSuccess (2 vs. 0)  out of
// memory"), the solver's "Iteration N, Testing net (#0)", its .prototxt net files. Real thread (blind8 read split)
// beside synthetic variants written from Caffe's source strings (said so).
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase, type CaseDiagnosis } from './corpus-case.js';

const first = (d: CaseDiagnosis | undefined) => d?.fixes[0]?.summary ?? '';
const CAFFE = /^The card ran out in Caffe's validation/;
const TEST_NET = /^Caffe failed in its test net/;

describe('real thread', () => {
  it('blind8/5607: the test phase of a 512 SSD-style net: test.prototxt batch_size and test_iter, not no_grad', async () => {
    const d = first(await firstOfCase('blind8', '5607'));
    expect(d).toMatch(CAFFE);
    expect(d).toMatch(/test\.prototxt/);
    expect(d).toMatch(/test_iter/);
    expect(d).not.toMatch(/no_grad\(\)|inference_mode/);
  });
});

describe('tuned thread (eval11, read while the test-net reader was written)', () => {
  it('eval11/5801: old CUDA_CHECK form after the solver\'s "Testing net": the test net\'s batch_size and test_iter', async () => {
    const d = first(await firstOfCase('eval11', '5801'));
    expect(d).toMatch(TEST_NET);
    expect(d).toMatch(/test_iter/);
  });
});

describe("synthetic variants (from Caffe's log strings)", () => {
  const check = 'F0412 10:21:34.502 12345 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory';
  it('the solver\'s "Iteration N, Testing net (#0)" as the last solver line before the check', async () => {
    const paste = ['I0412 10:21:33.118 12345 solver.cpp:330] Iteration 2000, Testing net (#0)', check, '*** Check failure stack trace: ***'].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(TEST_NET);
  });
  it('the glog stack through caffe::Solver<>::Test()', async () => {
    const paste = [
      check,
      '*** Check failure stack trace: ***',
      '    @     0x7f35  caffe::Net<>::ForwardFromTo()',
      '    @     0x7f36  caffe::Solver<>::Test()',
      '    @     0x7f37  caffe::Solver<>::Step()',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).toMatch(TEST_NET);
  });
  it('control: training iterations after the test line place the failure in training', async () => {
    const paste = [
      'I0412 10:21:33.118 12345 solver.cpp:330] Iteration 2000, Testing net (#0)',
      'I0412 10:21:40.120 12345 solver.cpp:228] Iteration 2020, loss = 0.49',
      check,
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(TEST_NET);
  });

  it("the solver's test line before glog's CUDA_CHECK failure", async () => {
    const paste = [
      'I0412 10:21:33.118 12345 solver.cpp:330] Iteration 2000, Testing net (#0)',
      'F0412 10:21:34.502 12345 syncedmem.cpp:56] Check failed: error == cudaSuccess (2 vs. 0)  out of memory',
      '*** Check failure stack trace: ***',
      'The OOM happens in the test phase; training runs fine.',
    ].join('\n');
    const d = first(await diagnosePaste(paste));
    expect(d).toMatch(CAFFE);
    expect(d).not.toMatch(/no_grad\(\)|inference_mode/);
  });
  it("control: a PyTorch script's own evaluation keeps the no_grad advice", async () => {
    const paste = [
      'Training is fine but I get OOM during validation',
      'Traceback (most recent call last):',
      '  File "main.py", line 80, in validate',
      '    output = model(images)',
      'RuntimeError: CUDA out of memory. Tried to allocate 512.00 MiB (GPU 0; 10.76 GiB total capacity; 9.60 GiB already allocated; 100.00 MiB free; 9.80 GiB reserved in total by PyTorch)',
    ].join('\n');
    expect(first(await diagnosePaste(paste))).not.toMatch(CAFFE);
  });
});
