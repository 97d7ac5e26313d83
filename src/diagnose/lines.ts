// A paste read line by line with its bounds applied while reading (the text is untrusted): at most `maxLines` lines, and
// a line longer than `maxChars` (a flattened paste is one line) is skipped rather than scanned by a reader's patterns.
export function* boundedLines(text: string, maxLines: number, maxChars: number): Generator<string> {
  let start = 0;
  for (let n = 0; n < maxLines && start < text.length; n++) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end - start <= maxChars) yield text.slice(start, end);
    start = end + 1;
  }
}
