// The torch version a log states (pip list, collect_env, a banner): one module that the allocator settings
// (alloc-conf.ts) and the environment (environment.ts) both read, so neither imports the other.

/** Both ends of a long log: a version is printed near the start (pip list, collect_env) or in a banner before the error. */
const WINDOW = 256 * 1024;

// "torch==2.11.0", "torch 2.10.0+cu128" (pip list), "PyTorch version: 2.11.0+cu128" (collect_env,
// ComfyUI), "pytorch version: 2.9.0+cu130". Bounded and anchored on the word, so linear.
const TORCH_VERSION =
  /\b(?:torch(?:==|\s{1,30})|pytorch version:\s{0,3}|torch version:\s{0,3}|torch\.__version__\s{0,3}[=:]\s{0,3}['"]?)v?(\d{1,2})\.(\d{1,2})\b/gi;

/** The torch version the log states (the last one printed wins), as [major, minor]. */
export function torchVersion(text: string): [number, number] | undefined {
  const window = text.length > 2 * WINDOW ? text.slice(0, WINDOW) + '\n' + text.slice(-WINDOW) : text;
  let found: [number, number] | undefined;
  TORCH_VERSION.lastIndex = 0;
  for (let m = TORCH_VERSION.exec(window); m; m = TORCH_VERSION.exec(window)) {
    const v: [number, number] = [Number(m[1]), Number(m[2])];
    // 0.x-3.x are torch releases; anything else is a different number that followed the word.
    if (v[0] <= 3) found = v;
  }
  return found;
}
