// MLX's own throw when a Metal command buffer fails, "[METAL] Command buffer execution failed: Insufficient Memory",
// is the GPU's share of unified memory running out, printed by some builds and servers without Metal's status code
// (kIOGPUCommandBufferCallbackErrorOutOfMemory): a GPU memory failure (knowledge/mlx-metal-out-of-memory), never host
// RAM because the report names the Mac's RAM. Real thread: blind11 6673 (read split; URL in its cases.json); the other
// texts are synthetic variants written from the message's fixed form. In process, a few seconds.
import { describe, expect, it } from 'vitest';
import { diagnosePaste, firstOfCase } from './corpus-case.js';

describe("MLX's failed command buffer", () => {
  it('blind11/6673: vMLX on a 64 GB M1 Max: the Metal rule, not host RAM', async () => {
    const d = await firstOfCase('blind11', '6673');
    expect(d?.rule).toBe('mlx-metal-out-of-memory');
    expect(d?.fixes[0]?.summary).toMatch(/context/);
  });
  it.each([
    'libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Insufficient Memory',
    '[METAL] Command buffer execution failed: Insufficient Memory\nzsh: abort      mlx_lm.generate --model mlx-community/Qwen2.5-32B-4bit --max-tokens 4096',
  ])('synthetic: %s', async (text) => {
    const d = await diagnosePaste(text);
    expect(d?.rule).toBe('mlx-metal-out-of-memory');
    expect(d?.category).toBe('cuda_oom');
  });
  it('near miss: another command buffer error (a GPU timeout) is not memory', async () => {
    const d = await diagnosePaste('[METAL] Command buffer execution failed: Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)');
    expect(d?.rule).not.toBe('mlx-metal-out-of-memory');
  });
});
