// The one reading of a memory size a person types (`/gpu fit 40G`, `/gpu notify 40GB`): a number with
// G, GB, GiB, M, MB or MiB, any case, with or without a blank before the unit. Binary units throughout,
// as nvidia-smi and PyTorch report memory: 1 G = 1 GB = 1 GiB = 1024 MiB (a person writing 40GB of a GPU
// means what nvidia-smi shows as 40 GiB). Anchored with bounded repetition: linear on any input.

const SIZE = /^(\d{1,7}(?:\.\d{1,3})?) ?([GM])(?:i?B)?$/i;
const UNIT = /^[GM](?:i?B)?$/i;

/** The size in MiB (rounded up), or undefined when the word is not a size. */
export function sizeMiB(word: string): number | undefined {
  const m = SIZE.exec(word);
  if (!m) return undefined;
  const n = Number(m[1]);
  return Math.ceil(m[2].toUpperCase() === 'G' ? n * 1024 : n);
}

/** Chat splits `40 G` into two words: a number followed by a bare unit is joined back into one size. */
export function joinSizeWords(words: readonly string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (i + 1 < words.length && /^\d{1,7}(?:\.\d{1,3})?$/.test(words[i]) && UNIT.test(words[i + 1])) {
      out.push(`${words[i]} ${words[i + 1]}`);
      i++;
    } else out.push(words[i]);
  }
  return out;
}
