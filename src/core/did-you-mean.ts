// "Did you mean status?" for a mistyped command: the candidate within a small edit distance
// (optimal string alignment: insertions, deletions, substitutions, adjacent swaps such as "statsu").
// Inputs are cut to 64 characters, so the quadratic table stays tiny whatever a user sends.

const MAX_LENGTH = 64;

export function editDistance(a: string, b: string): number {
  a = a.slice(0, MAX_LENGTH).toLowerCase();
  b = b.slice(0, MAX_LENGTH).toLowerCase();
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}

/** The closest candidate, if it is close enough to be what was meant (≤ 2 edits, ≤ a third of the word). */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  let best: { name: string; distance: number } | undefined;
  for (const name of candidates) {
    const distance = editDistance(input, name);
    if (!best || distance < best.distance) best = { name, distance };
  }
  if (!best) return undefined;
  const limit = Math.min(2, Math.max(1, Math.floor(Math.max(input.length, best.name.length) / 3)));
  return best.distance <= limit ? best.name : undefined;
}
