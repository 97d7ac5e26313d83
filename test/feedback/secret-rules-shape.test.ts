// Every rule of the kept-log redaction's rule set (src/feedback/secret-rules.ts) is a whole rule: an id, a
// source, a pattern and a replacement, all non-empty text. Only the rule set is imported here: a malformed rule
// makes redact.ts throw while it loads, which fails the other redaction test files before any test runs (and
// Stryker counts a file that fails to load as no test failing); here it fails this test.
import { expect, it } from 'vitest';
import { SECRET_RULES } from '../../src/feedback/secret-rules.js';

it('every rule has a non-empty id, source, pattern and replacement', () => {
  expect(SECRET_RULES.length).toBeGreaterThan(0);
  for (const [i, r] of SECRET_RULES.entries())
    for (const field of ['id', 'source', 'pattern', 'to'] as const) {
      expect(typeof r[field], `rule #${i} ${field}`).toBe('string');
      expect(r[field].length, `rule #${i} ${field}`).toBeGreaterThan(0);
    }
});
