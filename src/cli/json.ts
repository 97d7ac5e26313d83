// JSON for a terminal: JSON.stringify escapes C0 controls but leaves DEL and C1 (U+007F-U+009F) raw, and a
// terminal reads U+009B as CSI. Escaping them keeps the same JSON value and nothing for the terminal to act on.
export function terminalSafeJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
