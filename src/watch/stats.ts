// Small robust statistics for the watch detector: median by quickselect (no sort, O(n)) and
// Theil–Sen slope (median of pairwise slopes), which ignores a minority of outliers and
// isolated steps that a least-squares fit would chase.

/** Reused scratch buffer so Theil–Sen allocates nothing per call. */
let scratch = new Float64Array(4096);

/** k-th smallest (0-based) of buf[0..n), reordering buf in place. */
function select(buf: Float64Array, n: number, k: number): number {
  let lo = 0;
  let hi = n - 1;
  while (hi > lo) {
    const pivot = buf[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (buf[i] < pivot) i++;
      while (buf[j] > pivot) j--;
      if (i <= j) {
        const t = buf[i];
        buf[i] = buf[j]!;
        buf[j] = t;
        i++;
        j--;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return buf[k];
  }
  return buf[k];
}

function medianOf(buf: Float64Array, n: number): number {
  if (n === 0) return NaN;
  const upper = select(buf, n, n >> 1);
  if (n % 2 === 1) return upper;
  let lower = -Infinity; // after select, everything below n/2 is <= upper: take its max
  for (let i = 0; i < n >> 1; i++) if (buf[i] > lower) lower = buf[i]!;
  return (lower + upper) / 2;
}

export function median(values: ArrayLike<number>): number {
  const n = values.length;
  if (scratch.length < n) scratch = new Float64Array(n * 2);
  for (let i = 0; i < n; i++) scratch[i] = values[i]!;
  return medianOf(scratch, n);
}

/**
 * Theil–Sen slope of y over x (units of y per unit of x). Points with equal x are skipped.
 * When there are more than maxPoints, an evenly strided subset is used to bound the O(n²) cost.
 */
export function theilSen(x: ArrayLike<number>, y: ArrayLike<number>, maxPoints = 72): number {
  const n = x.length;
  const stride = n > maxPoints ? n / maxPoints : 1;
  const m = Math.min(n, maxPoints);
  const pairs = (m * (m - 1)) / 2;
  if (scratch.length < pairs) scratch = new Float64Array(pairs * 2);
  let k = 0;
  for (let a = 0; a < m; a++) {
    const ia = Math.floor(a * stride);
    for (let b = a + 1; b < m; b++) {
      const ib = Math.floor(b * stride);
      const dx = x[ib] - x[ia];
      if (dx !== 0) scratch[k++] = (y[ib] - y[ia]) / dx;
    }
  }
  return k === 0 ? 0 : medianOf(scratch, k);
}

/** Evenly downsample to at most n points, keeping the max of each bucket (peaks show in a sparkline). */
export function downsampleMax(values: ArrayLike<number>, n = 48): number[] {
  if (values.length <= n) return Array.from(values);
  const out: number[] = [];
  for (let b = 0; b < n; b++) {
    const from = Math.floor((b * values.length) / n);
    const to = Math.floor(((b + 1) * values.length) / n);
    let mx = -Infinity;
    for (let i = from; i < to; i++) if (values[i] > mx) mx = values[i]!;
    out.push(mx);
  }
  return out;
}
