// Turns a pasted log into clean lines: what chat apps, terminals and launchers add is removed so rule
// patterns see the words PyTorch printed. Every step is a single linear pass (no backtracking shapes).

const ANSI_CSI = /\x1b\[[0-9;?]*[ -/]*[@-~]/g;
const ANSI_OSC = /\x1b\][^\x07\x1b\n]*(?:\x07|\x1b\\)?/g;
const OTHER_CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;
const ENTITIES: Record<string, string> = { '&gt;': '>', '&lt;': '<', '&amp;': '&', '&quot;': '"', '&#39;': "'", '&#x27;': "'", '&nbsp;': ' ' };
const ENTITY = /&(?:gt|lt|amp|quot|nbsp|#39|#x27);/g;
// Launchers prefix each line with the rank or worker that printed it: torchrun `[rank1]:`,
// `[default0]:`, Ray `(RayTrainWorker pid=123, ip=10.0.0.1)`, markdown quoting `> `.
// Open MPI's --tag-output "[job,rank]<stderr>:", at line starts and, when ranks interleave, mid-line.
const MPI_TAG = /\[\d{1,6},\d{1,6}\]<std(?:out|err)>:/g;
// Docker's and Kubernetes' --timestamps (RFC 3339 in UTC to the nanosecond, "2023-06-15T23:39:48.836381821Z ") are
// stripped the same way: frames then read at a line start.
const LINE_PREFIX =
  /^(?:(?:> ?)+|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z |\[(?:rank|default)\d+\]:\s?|\((?:[A-Za-z_]+ )?pid=\d+(?:, ip=[0-9.]+)?\)\s?|\d{1,3}: (?=\[|Traceback| {2}File|\w+Error))+/gm;
// tqdm redraws with \r and leaves the next message glued to its closing bracket.
const TQDM_GLUE = /((?:it\/s|s\/it|B\/s)[^\]\n]{0,400}\])(?=[A-Za-z[])/g;

// A log flattened onto one line (Discord's text option drops newlines): the boundaries a traceback
// always has are put back. Each lookahead is bounded, so the pass stays linear.
const FLAT_BREAKS = [
  / (?=Traceback \(most recent call last\):)/g,
  / {1,8}(?=File "[^"\n]{1,400}", line \d{1,7}, in )/g,
  / (?=(?:[A-Za-z_][\w]{0,40}\.){0,4}[A-Z]\w{0,60}(?:Error|Exception): )/g,
  / (?=During handling of the above exception)/g,
];

/** True when a long text holds a traceback but (almost) no line breaks: it was flattened. */
export function isFlattened(raw: string): boolean {
  if (raw.length < 200) return false;
  let newlines = 0;
  for (let i = raw.indexOf('\n'); i !== -1 && newlines <= 2; i = raw.indexOf('\n', i + 1)) newlines++;
  return newlines <= 2 && (raw.includes('Traceback (most recent call last)') || raw.includes(' File "'));
}

function unflatten(text: string): string {
  let out = text;
  for (const re of FLAT_BREAKS) out = out.replace(re, (m) => (m.length > 1 ? '\n  ' : '\n'));
  return out;
}

export function normalizeLog(raw: string): string {
  if (isFlattened(raw)) raw = unflatten(raw);
  let text = raw.replace(/\r\n/g, '\n').replace(/\r/g, '\n');
  text = text.replace(ANSI_CSI, '').replace(ANSI_OSC, '').replace(OTHER_CONTROL, '');
  if (text.includes('&')) text = text.replace(ENTITY, (m) => ENTITIES[m] ?? m);
  text = text.replace(TQDM_GLUE, '$1\n');
  text = text.replace(LINE_PREFIX, '');
  if (text.includes(']<std')) text = text.replace(MPI_TAG, '');
  return text;
}

/**
 * A normalised log as UTF-8 bytes with line offsets. re2 works on bytes; handing it one Buffer (instead
 * of a JS string it would re-encode on every call) keeps matching linear on non-ASCII logs.
 */
export class LogText {
  readonly buf: Buffer;
  readonly starts: Uint32Array;

  constructor(readonly text: string) {
    this.buf = Buffer.from(text, 'utf8');
    this.starts = lineStarts(this.buf);
  }

  get lineCount(): number {
    return this.starts.length;
  }

  /** Line number of a byte offset. */
  lineAt(offset: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  line(i: number): string {
    const end = i + 1 < this.starts.length ? this.starts[i + 1] - 1 : this.buf.length;
    return this.buf.toString('utf8', this.starts[i], end);
  }
}

function lineStarts(buf: Buffer): Uint32Array {
  let count = 1;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) count++;
  const starts = new Uint32Array(count);
  let n = 1;
  for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) starts[n++] = i + 1;
  return starts;
}
