// PyTorch's allowed-memory OOM (the cudaMallocAsync backend's form, CUDAMallocAsyncAllocator.cpp), written from its
// format string for synthetic variants: one figure a line, names padded to one column as copied raw, or collapsed
// ("Requested : 1.00 GiB") as a rendered page shows them. Shared by the tests of its request/limit and its
// "Currently allocated" readings.
export interface AllowedMemoryFigures {
  allocated: string;
  requested: string;
  limit: string;
  free: string;
  pad?: boolean;
  prefix?: string;
}

export function allowedMemoryMessage({ allocated, requested, limit, free, pad = true, prefix = 'torch.OutOfMemoryError: ' }: AllowedMemoryFigures): string {
  const name = (n: string) => (pad ? n.padEnd(24) : n + ' ');
  return [
    `${prefix}Allocation on device 0 would exceed allowed memory. (out of memory)`,
    `${name('Currently allocated')}: ${allocated}`,
    `${name('Requested')}: ${requested}`,
    `${name('Device limit')}: ${limit}`,
    `Free (according to CUDA): ${free}`,
    'PyTorch limit (set by user-supplied memory fraction)',
    `${pad ? ' '.repeat(24) : ''}: 17179869184.00 GiB`,
  ].join('\n');
}
