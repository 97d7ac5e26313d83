// Principle (issue 23, no_grad outside an evaluation loop): a script that runs a model on an input only for its output and
// detaches the result on the same line (`out = model(x).sample.detach().cpu()`) shows that it wants no gradient and that
// autograd recorded a graph (detach() cuts one). Until the call returns every layer's activations are kept for a backward
// that never comes, so no_grad / inference_mode is the first lever; tiling or a smaller batch slice a cost that should not
// be there. Preconditions: no backward, optimizer step or loss anywhere in the paste (training detaches for logging), no
// no_grad / inference_mode shown, a phase where a forward ran, weights that fit. The real log is from the read split
// blind11; the rest are synthetic variants written from the principle (each says so), with near misses.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';
import { readDetachedForward } from '../../src/diagnose/levers/forward-graph.js';

const GRAPH = /detaches the result[\s\S]{0,600}Run the call under `with torch\.inference_mode/;
const first = async (t: string) => (await diagnosePaste(t))?.fixes[0]?.summary ?? '';
const OOM =
  'torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.10 GiB is free. Of the allocated memory 20.80 GiB is allocated by PyTorch, and 600.00 MiB is reserved by PyTorch but unallocated.';
const trace = (code: string) =>
  [
    'Traceback (most recent call last):',
    '  File "/home/u/run_infer.py", line 21, in <module>',
    `    ${code}`,
    '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl',
    '    return self._call_impl(*args, **kwargs)',
    OOM,
  ].join('\n');

describe('a forward run for its output and detached, with autograd on', () => {
  it('blind11/6602 (real): diffusers AutoencoderKL with tiling, output = vae(tensor_o).sample.detach().cpu().numpy()', async () => {
    const d = await firstOfCase('blind11', '6602');
    expect(d?.category).toBe('cuda_oom');
    expect(d?.fixes[0]?.summary).toMatch(GRAPH);
    expect(d?.fixes[0]?.changes.batch).toBeUndefined();
  });
  it('synthetic: an encoder embedding a corpus, emb = encoder(**batch).last_hidden_state.detach().cpu()', async () => {
    expect(await first(trace('emb = encoder(**batch).last_hidden_state.detach().cpu()'))).toMatch(GRAPH);
  });
  it('synthetic: an indexed output, feats = self.backbone(img)[0].detach()', async () => {
    expect(await first(trace('feats = self.backbone(img)[0].detach()'))).toMatch(GRAPH);
  });
  it('synthetic: the reader quotes the line', () => {
    expect(readDetachedForward('x = 1\npred = net(inp).detach().numpy()\n')).toBe('"pred = net(inp).detach().numpy()"');
  });

  // Near misses: where the principle must not fire.
  it('near miss (synthetic): a training step in the paste (backward, optimizer) detaches for logging', () => {
    expect(readDetachedForward('out = model(x).detach()\nloss.backward()\noptimizer.step()')).toBeUndefined();
    expect(readDetachedForward('logits = model(x).detach()\nloss = criterion(logits, y)')).toBeUndefined();
  });
  it('near miss (synthetic): the call shown under torch.no_grad()', async () => {
    const s = await first(['with torch.no_grad():', trace('out = model(x).detach().cpu()')].join('\n'));
    expect(s).not.toMatch(GRAPH);
  });
  it('near miss (synthetic): a result moved to the CPU without detach() says nothing of a graph', async () => {
    expect(readDetachedForward('pred = model(x).cpu().numpy()')).toBeUndefined();
    expect(await first(trace('pred = model(x).cpu().numpy()'))).not.toMatch(GRAPH);
  });
});

// The same lever read from two more fixed forms, tuned on evl14 (first run labelled before the engine ran): the report's
// own experiment ("works when the forward is wrapped in torch.no_grad()"), and code that still passes volatile=True (PyTorch
// <= 0.3's no-grad, a no-op since 0.4) beside an out-of-memory message only PyTorch 1.x and later print.
describe('the forward kept its graph, told by the report or by a flag that no longer works', () => {
  it('evl14/7454 (tuned, real): HuBERT feature extraction "works when forward propagation is wrapped around with torch.no_grad()"', async () => {
    expect((await firstOfCase('evl14', '7454'))?.fixes[0]?.summary).toMatch(/inference_mode|no_grad/);
  });
  it('evl14/7453 (tuned, real): I3D feature loop with Variable(..., volatile=True) and a "reserved in total by PyTorch" OOM', async () => {
    expect((await firstOfCase('evl14', '7453'))?.fixes[0]?.summary).toMatch(/volatile=True[\s\S]{0,400}torch\.no_grad/);
  });
  it('synthetic: volatile=True beside the 2.x message form', async () => {
    const paste = [
      'x = Variable(img.cuda(), volatile=True)',
      'out = net(x)',
      OOM.replace('Tried to allocate 2.00 GiB.', 'Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB.'),
    ].join('\n');
    expect(await first(paste)).toMatch(/torch\.no_grad/);
  });
  it('synthetic: insufficient GPU memory told, the no_grad run said to work', async () => {
    expect(await first('Running the embedding script fails with insufficient GPU memory, but it runs fine when wrapped in torch.no_grad().')).toMatch(
      /no_grad|inference_mode/,
    );
  });
  it('near miss (synthetic): volatile=True with no error of a newer PyTorch says nothing of the version', async () => {
    const { readVolatileRemoved } = await import('../../src/diagnose/levers/volatile.js');
    expect(readVolatileRemoved('x = Variable(img.cuda(), volatile=True)\nRuntimeError: cuda runtime error (2) : out of memory')).toBeUndefined();
  });
});
