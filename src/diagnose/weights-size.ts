// The size of a model's weights from its parameter count and precision: the one figure the holder verdict and the
// lever modules' budgets all start from. A module of its own so levers can read it without importing holder.ts,
// which imports levers.

/** Bytes per parameter for the dtypes a log can state. */
export const BYTES_PER_PARAM: Record<string, number> = { fp32: 4, fp16: 2, bf16: 2, int8: 1, int4: 0.5 };

/** MiB of weights for a model of `paramsB` billion parameters in `dtype` (fp16 when the log does not say). */
export function weightsMiB(paramsB: number, dtype: string | undefined): number {
  return (paramsB * 1e9 * (BYTES_PER_PARAM[dtype ?? 'fp16'] ?? 2)) / 2 ** 20;
}
