// PyTorch 0.4 removed `Variable(..., volatile=True)`, the way code for PyTorch <= 0.3 ran a forward without a graph: since
// 0.4 the flag does nothing and torch.no_grad() replaces it (0.4.0 release notes; autograd warns "volatile was removed
// and now has no effect. Use `with torch.no_grad():` instead."). An out-of-memory error in code that ran on 0.3 and fails
// on 0.4 or later is that code's evaluation or inference keeping every forward's graph: no_grad is the lever, not the
// batch. Read from fixed forms only: PyTorch's own warning, or the paste naming a PyTorch version of 0.3 or older and one
// of 0.4 or later (the upgrade the report describes), or code that still passes volatile=True beside an out-of-memory
// message in a form only PyTorch 1.x and later print (the caching allocator's "reserved in total by PyTorch", 2.x's "GPU 0
// has a total capacity of", torch.cuda.OutOfMemoryError): the flag did nothing there. Bounded, per line.
import { boundedLines } from '../lines.js';

const WARNING = /\bvolatile was removed and now has no effect\b/;
const TORCH = String.raw`\b(?:py)?torch(?:\s{0,2}(?:version|==|=|v)\s{0,2}|[\s_-]{0,2})v?`;
const OLD = new RegExp(String.raw`${TORCH}0\.[0-3](?:\.\d{1,2})?(?!\.?\d)`, 'i');
const NEW = new RegExp(String.raw`${TORCH}(?:0\.(?:[4-9]|1\d)|[12]\.\d{1,2})(?:\.\d{1,2})?(?!\.?\d)`, 'i');
const QUOTE_CHARS = 120;
const VOLATILE_CODE = /\bvolatile\s{0,2}=\s{0,2}True\b/;
const MODERN_OOM = /\breserved in total by PyTorch\b|\bGPU \d{1,3} has a total capacity of\b|\btorch\.(?:cuda\.)?OutOfMemoryError\b/;

const quote = (line: string) => {
  const t = line.trim();
  return t.length <= QUOTE_CHARS ? `"${t}"` : `"${t.slice(0, QUOTE_CHARS)}…"`;
};

/** PyTorch's volatile warning, or the lines naming a PyTorch up to 0.3 and one from 0.4 on, quoted. */
export function readVolatileRemoved(text: string): string | undefined {
  let oldLine: string | undefined;
  let newLine: string | undefined;
  let volatileCode: string | undefined;
  let modernOom = false;
  for (const line of boundedLines(text, 20_000, 600)) {
    if (WARNING.test(line)) return quote(line);
    if (oldLine === undefined && OLD.test(line)) oldLine = line;
    if (newLine === undefined && NEW.test(line)) newLine = line;
    if (volatileCode === undefined && VOLATILE_CODE.test(line)) volatileCode = line;
    if (MODERN_OOM.test(line)) modernOom = true;
  }
  if (volatileCode !== undefined && modernOom && (oldLine === undefined || newLine === undefined)) return quote(volatileCode);
  if (oldLine === undefined || newLine === undefined) return undefined;
  return oldLine === newLine ? quote(oldLine) : `${quote(oldLine)} / ${quote(newLine)}`;
}
