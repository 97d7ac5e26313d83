// The exception a log ends with, and where its traceback starts. A run that ends in KeyError, a shape
// mismatch or a missing file is not a memory problem, even when memory words appear inside that last
// traceback (a DataLoader worker's frames, a config dump): the engine abstains instead of guessing.
import RE2 from 're2';
import type { LogText } from './normalize.js';

export interface FinalError {
  /** The exception's class name, without its module ("KeyError", "FileNotFoundError"). */
  type: string;
  message: string;
  line: number;
  /** First line of the traceback (chain) that ends in this exception. */
  tracebackStart: number;
  /**
   * First line of this exception's own traceback, after the chain's earlier links. Python prints a chain in two fixed
   * forms: "During handling of the above exception, another exception occurred:" (the later one arose while handling the
   * first, which is the run's failure) and "The above exception was the direct cause of the following exception:" (the
   * later one wraps the first, its innermost cause). Either way an exception in an earlier link is what failed.
   */
  ownStart?: number;
}

/** Exceptions that never mean "out of memory" (OSError and RuntimeError can: errno 12, CUDA OOM). */
export const NOT_MEMORY_EXCEPTIONS = new Set([
  'KeyError',
  'IndexError',
  'ValueError',
  'TypeError',
  'AttributeError',
  'NameError',
  'UnboundLocalError',
  'FileNotFoundError',
  'IsADirectoryError',
  'NotADirectoryError',
  'PermissionError',
  'FileExistsError',
  'ModuleNotFoundError',
  'ImportError',
  'SyntaxError',
  'IndentationError',
  'AssertionError',
  'NotImplementedError',
  'ZeroDivisionError',
  'UnicodeDecodeError',
  'UnicodeEncodeError',
  'JSONDecodeError',
  'RecursionError',
  'StopIteration',
  'HFValidationError',
  'EntryNotFoundError',
  'RepositoryNotFoundError',
]);

/**
 * A RuntimeError's fixed PyTorch messages that say what failed and that it was not memory: tensors on two
 * devices, an input and weight of different types, shapes that do not fit, an index out of range, a GPU index the
 * process does not have, a build with no kernels for the card, a cuBLAS status that is a dtype or architecture the
 * library does not support (its allocation failure, CUBLAS_STATUS_ALLOC_FAILED, is memory and stays out). The
 * exception decides the route.
 */
const NOT_MEMORY_MESSAGE = String.raw`(?:Expected all tensors to be on the same device|Expected object of (?:device type|backend) \w{1,20} but got|Input type \(.{1,80}\) and weight type \(.{1,80}\) should be the same|mat1 and mat2 shapes cannot be multiplied|The size of tensor a \(\d{1,12}\) must match the size of tensor b|Given groups=\d{1,9}, weight of size|Error\(s\) in loading state_dict for|(?:CUDA error: )?(?:CUBLAS_STATUS_NOT_SUPPORTED|CUBLAS_STATUS_ARCH_MISMATCH|CUBLAS_STATUS_INVALID_VALUE|invalid device ordinal|no kernel image is available for execution on the device)|index out of range in self|expected scalar type \w{1,20} but found \w{1,20})`;
const NOT_MEMORY_RUNTIME_MESSAGES = new RE2('^' + NOT_MEMORY_MESSAGE);
/** The same fixed messages inside a logger's line ("ERROR ... generation failed: Expected all tensors to be on ..."). */
const NOT_MEMORY_IN_LINE = new RE2(NOT_MEMORY_MESSAGE);
/** An open parenthesis after words of a sentence, not closed before the message: an aside. */
const ASIDE = /[A-Za-z]{2,20}[^()\n]{0,40}\([^()\n]{0,40}$/;
/** A memory failure's own words in a logged line (PyTorch's, the CUDA runtime's and most wrappers' messages). */
const MEMORY_IN_LINE = new RE2(String.raw`(?i)out of memory|OutOfMemoryError|Tried to allocate \d`);
/** Exception types PyTorch raises these messages under (torch.AcceleratorError from 2.10 for CUDA errors). */
const RUNTIME_TYPES = new Set(['RuntimeError', 'AcceleratorError']);

/** The run ended in an exception that is not about memory: by its type, or a RuntimeError by its fixed message. */
export function endsNotMemory(last: FinalError): boolean {
  return NOT_MEMORY_EXCEPTIONS.has(last.type) || (RUNTIME_TYPES.has(last.type) && NOT_MEMORY_RUNTIME_MESSAGES.test(last.message));
}

/**
 * The final error, or where the paste shows no exception line, the last line that carries one of the fixed non-memory
 * messages inside a logger's line: a server or a UI logs the exception's text without its type, and that text is still
 * the error (issue 23, item 5: prose beside it never turns it into a memory diagnosis).
 */
export function finalOrLoggedError(log: LogText): FinalError | undefined {
  const last = finalError(log);
  if (last) return last;
  const stop = Math.max(0, log.lineCount - TAIL_LINES);
  for (let l = log.lineCount - 1; l >= stop; l--) {
    const text = log.line(l).slice(0, MAX_LINE);
    // A memory failure logged after it is the later error: the non-memory one does not end the run.
    if (MEMORY_IN_LINE.test(text)) return undefined;
    const m = NOT_MEMORY_IN_LINE.exec(text);
    // Named inside a sentence's parenthesis ("crashed elsewhere with a different signature (cublasSgemm CUBLAS_...)"), it is
    // the reporter's aside about another run, not what this paste's run ended in.
    if (m && ASIDE.test(text.slice(Math.max(0, m.index - 80), m.index))) continue;
    if (m) return { type: 'RuntimeError', message: text.slice(m.index).trim(), line: l, tracebackStart: l };
  }
  return undefined;
}

/** A line that is an exception (`torch.OutOfMemoryError: ...`), not a sentence about one. */
export function isExceptionLine(line: string): boolean {
  return EXCEPTION_LINE.test(line.slice(0, MAX_LINE));
}

// Bounded and run in re2: applied to untrusted lines. The message may fill the whole line (MAX_LINE): PyTorch's
// OOM message alone runs past 400 characters.
const EXCEPTION_LINE = new RE2(String.raw`^\s{0,8}(?:[A-Za-z_][\w.]{0,100}\.)?([A-Z][A-Za-z0-9_]{0,60}(?:Error|Exception))(?::\s?(.{0,600}))?\s*$`);
const TRACEBACK = 'Traceback (most recent call last)';
const CHAINED = /^(?:During handling of the above exception|The above exception was the direct cause)/;
/** Only the end of a log can hold its final exception; bounded so a huge paste stays cheap. */
const TAIL_LINES = 400;
const MAX_LINE = 600;

export function finalError(log: LogText): FinalError | undefined {
  const stop = Math.max(0, log.lineCount - TAIL_LINES);
  let found: { type: string; message: string; line: number } | undefined;
  for (let l = log.lineCount - 1; l >= stop; l--) {
    const m = EXCEPTION_LINE.exec(log.line(l).slice(0, MAX_LINE));
    if (m) {
      found = { type: m[1], message: (m[2] ?? '').trim(), line: l };
      break;
    }
  }
  if (!found) return undefined;
  // The traceback of that exception: the nearest "Traceback" above it, extended over chained ones.
  let start = found.line;
  let own: number | undefined;
  for (let l = found.line - 1; l >= Math.max(0, found.line - 2000); l--) {
    const text = log.line(l);
    if (text.startsWith(TRACEBACK)) {
      start = l;
      own ??= l;
      const above = l > 1 ? log.line(l - 2) : '';
      if (!CHAINED.test(above) && !(l > 0 && CHAINED.test(log.line(l - 1)))) break;
    }
  }
  return { ...found, tracebackStart: start, ...(own !== undefined && own > start ? { ownStart: own } : {}) };
}
