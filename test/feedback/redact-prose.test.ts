// Keyword = value redaction and prose (found on a real Chinese report, test/fixtures/untuned/blind2/1485-cuda_oom.log,
// whose "图片的token = image_resolution/4/14/14，即使…" lost the rest of its line): arithmetic on an identifier is
// no credential, and CJK punctuation ends a value as a space does. Real secrets next to CJK text stay redacted.
import { describe, expect, it } from 'vitest';
import { redactSecrets } from '../../src/feedback/redact.js';

describe('redaction leaves prose alone and still fails closed', () => {
  it.each([
    '图片的token = image_resolution/4/14/14，即使我加入15张图片',
    'each image costs token = image_size/14/14 tokens',
    'max tokens: token=seq_len*2',
    'key = hidden_dim/8/8 per head',
  ])('keeps a formula: %s', (line) => {
    expect(redactSecrets(line)).toBe(line);
  });

  it.each([
    ['我的password=hunter2xyz，然后就报错了', '我的password=<redacted>，然后就报错了'],
    ['配置如下：api_key=Zx81qPz0mN4。', '配置如下：api_key=<redacted>。'],
    ['token: q8w7e6r5t4y3、下一步', 'token: <redacted>、下一步'],
  ])('a secret ends at CJK punctuation and is redacted: %s', (line, want) => {
    expect(redactSecrets(line)).toBe(want);
  });

  it.each(['password=image/4/14x', 'secret = abc/123/def', 'token=a1/b2'])('a value that is not plain arithmetic stays redacted: %s', (line) => {
    expect(redactSecrets(line)).toContain('<redacted>');
  });
});
