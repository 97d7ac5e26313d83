// The largest and smallest of a list of any length. Math.max(...values) passes every value as an
// argument and throws `Maximum call stack size exceeded` past about 100,000 of them (a week of samples,
// a history backfill): these loop instead, with Math.max's own answers (NaN if any is NaN, -Infinity
// or Infinity for none).

/** The largest of `values` and `more`. */
export function maxOf(values: Iterable<number>, ...more: number[]): number {
  let m = -Infinity;
  for (const v of values) m = Math.max(m, v);
  for (const v of more) m = Math.max(m, v);
  return m;
}

/** The smallest of `values` and `more`. */
export function minOf(values: Iterable<number>, ...more: number[]): number {
  let m = Infinity;
  for (const v of values) m = Math.min(m, v);
  for (const v of more) m = Math.min(m, v);
  return m;
}
