// The kept-log redaction (src/feedback/redact.ts, rules in src/feedback/secret-rules.ts): every secret shape of
// the corpus (test/feedback/secret-shapes.ts, all made up) goes; ordinary training-log text (every fixture
// log, and the lines below: numbers, hex addresses, paths, CUDA and tokenizer messages) stays as it was.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import RE2 from 're2';
import { describe, expect, it } from 'vitest';
import { compileRules, lastBytes, MAX_KEPT_BYTES, redactLog, redactSecrets, scrubBareSecrets } from '../../src/feedback/redact.js';
import { SECRET_RULES } from '../../src/feedback/secret-rules.js';
import { SECRET_SHAPES } from './secret-shapes.js';

/** Whether any part of the secret survived: all of it, or (for long ones) its first or last 12 characters. */
const survives = (out: string, secret: string) =>
  out.includes(secret) || (secret.length >= 16 && (out.includes(secret.slice(0, 12)) || out.includes(secret.slice(-12))));

/** Lines a training log is made of that no rule may touch (false positives ruin the log). */
const ORDINARY = [
  'Epoch 3/10: 100%|██████████| 1563/1563 [04:12<00:00, 6.19it/s, loss=0.3412, lr=2.5e-05]',
  'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Process 48213 has 78.12 GiB memory in use.',
  'RuntimeError: CUDA error: an illegal memory access was encountered at 0x7f3a2b1c4d5e (pc 0x00007fb4c2e1a9f0)',
  'Segmentation fault (core dumped) at address 0x0000000000000000',
  '  File "/usr/lib/python3.10/site-packages/torch/nn/modules/module.py", line 1518, in _wrapped_call_impl',
  'Using pad_token, but it is not set yet.',
  // A file named like a key is a path, not an assignment (docker's host:container mounts, Windows paths).
  'docker run --gpus all -v /etc/passwd:/etc/passwd:ro -v /etc/group:/etc/group:ro -v /home/me/.token:/root/.token img',
  'cp C:\\Users\\me\\secret: not found',
  'Setting `pad_token_id` to `eos_token_id`:2 for open-end generation.',
  "tokenizer: LlamaTokenizerFast(name_or_path='meta-llama/Llama-2-7b-hf', vocab_size=32000, pad_token='<pad>', eos_token='</s>', bos_token: '<s>', unk_token='<unk>')",
  "special_tokens_map: {'cls_token': '[CLS]', 'mask_token': '[MASK]', 'sep_token': '[SEP]'}",
  'generate(max_new_tokens=512, max_token=40, temperature=0.7, top_p=0.9)',
  'Token indices sequence length is longer than the specified maximum sequence length for this model (5120 > 4096).',
  'Resized token embeddings from 128256 to 129282.',
  'huggingface_hub.login(token=None) / use_auth_token=True / --use_auth_token --fp16',
  'password: ******** (hidden)',
  'api_key: ${OPENAI_API_KEY}   token=$HF_TOKEN   secret: {{ .Values.secret }}',
  'NCCL INFO Channel 00/02 :    0   1   2   3   4   5   6   7',
  'NCCL INFO comm 0x5581e3c0 rank 0 nranks 8 cudaDev 0 busId 1b000 - Init COMPLETE',
  'docker pull nvcr.io/nvidia/pytorch@sha256:6c1b1f8a9e3d2c4b5a6f7e8d9c0b1a2f3e4d5c6b7a8f9e0d1c2b3a4f5e6d7c8b',
  'commit 3f2a9c1b7e5d4a6f8b0c2e4d6a8f0b1c3e5d7f9a (HEAD -> main)',
  'MIG-GPU-5d7c3b2a-1f4e-4a6b-9c8d-0e1f2a3b4c5d/1/0 CUDA_VISIBLE_DEVICES=GPU-5d7c3b2a-1f4e-4a6b-9c8d-0e1f2a3b4c5d',
  'wandb: Syncing run glorious-sweep-12 https://wandb.ai/acme/llm/runs/1a2b3c4d',
  'Saving checkpoint to ./runs/exp1/checkpoint-1500/pytorch_model-00001-of-00002.bin',
  'sort_key=loss  text_key: text  dataset.image_key=image  bypass=1  PWD=/srv/runs  author=alice',
  'Authorization failed for basic building blocks; the secret sauce is 42 layers',
  'secret: true  token: null  api_key: none  password: ""',
  'num_tokens: 1234  tokens=5  max_tokens 2048 --max_tokens 2048',
  'kernel launch: grid(128,1,1) block(256,1,1) smem 49152 regs 64',
];

describe('kept-log redaction', () => {
  it(`redacts every shape of the corpus (${SECRET_SHAPES.length} shapes)`, () => {
    expect(SECRET_SHAPES.length).toBeGreaterThanOrEqual(60);
    const missed = SECRET_SHAPES.filter((s) => survives(redactLog(s.line), s.secret)).map((s) => s.name);
    expect(missed).toEqual([]);
    // Each shape's line changes, and the secret does not come back inside a longer line either.
    for (const s of SECRET_SHAPES) expect(survives(redactLog(`before ${s.line} after`), s.secret), s.name).toBe(false);
  });

  it('leaves ordinary training-log lines as they are', () => {
    for (const line of ORDINARY) expect(redactSecrets(line)).toBe(line);
  });

  it('changes no line of any fixture log (real logs from public issues)', () => {
    const root = fileURLToPath(new URL('../fixtures', import.meta.url));
    const files: string[] = [];
    const walk = (d: string) => {
      for (const f of readdirSync(d)) {
        const p = join(d, f);
        if (statSync(p).isDirectory()) walk(p);
        else if (f.endsWith('.log')) files.push(p);
      }
    };
    walk(root);
    expect(files.length).toBeGreaterThan(500);
    const changed = files.filter((f) => {
      const text = readFileSync(f, 'utf8');
      return redactSecrets(text) !== text;
    });
    expect(changed).toEqual([]);
  });

  it('every rule names its source, has a unique id and compiles in RE2', () => {
    const ids = SECRET_RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const r of SECRET_RULES) {
      expect(r.source, r.id).toMatch(/gitleaks:|detect-secrets:|format/);
      expect(() => new RE2(r.pattern, `g${r.flags ?? ''}`), r.id).not.toThrow();
    }
  });

  it('runs of fixed-text rules share one pass, in the rules’ order; each match gets its own rule’s placeholder', () => {
    const passes = compileRules(SECRET_RULES);
    expect(passes.flatMap((p) => p.id.split('+'))).toEqual(SECRET_RULES.map((r) => r.id));
    expect(passes.length).toBeLessThan(SECRET_RULES.length / 2);
    expect(passes.map((p) => p.id)).toContain(
      'age-secret-key+slack-webhook+discord-webhook+teams-webhook+slack-config-token+slack-token+slack-app-token+github-token+github-fine-grained-pat+gitlab-token+gitlab-runner-registration',
    );
    const [xy, context, z] = compileRules([
      { id: 'x', source: 'test', pattern: 'x+', to: '<x>' },
      { id: 'y', source: 'test', pattern: 'y+', to: '<y>' },
      { id: 'ctx', source: 'test', pattern: '(k=)v+', to: '$1<v>' },
      { id: 'z', source: 'test', pattern: 'z+', to: '<z>' },
    ]);
    expect([xy.id, context.id, z.id]).toEqual(['x+y', 'ctx', 'z']);
    expect('xx yy xx k=vv zz'.replace(xy.re, xy.to as string)).toBe('<x> <y> <x> k=vv zz');
    expect(redactLog(`a ghp_${'A1'.repeat(18)} b hf_${'B2'.repeat(17)} c AIza${'C3'.repeat(17)}D d`)).toBe(
      'a <github token> b <hf token> c <google api key> d',
    );
  });

  it('keeps the context around a secret: the key, the separator, the scheme, the host, the lines around a key block', () => {
    expect(redactLog('HF_TOKEN=hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345 python3 x.py')).toBe('HF_TOKEN=<hf token> python3 x.py');
    expect(redactLog('password = "a b c" next')).toBe('password = "<redacted>" next');
    expect(redactLog('"api_key": \'k1k2k3k4k5\'')).toBe('"api_key": \'<redacted>\'');
    expect(redactLog('--password=hunter22 --token abcdef123')).toBe('--password=<redacted> --token <redacted>');
    expect(redactLog('redis://:pw12345@cache:6379/0')).toBe('redis://<credentials>@cache:6379/0');
    expect(redactLog('Authorization: Bearer abcdefgh12345')).toBe('Authorization: Bearer <token>');
    expect(redactLog('-H "Authorization: Token abcdefgh12345"')).toBe('-H "Authorization: Token <token>"');
    expect(redactLog('mysql -u r -pS3cretpw db')).toBe('mysql -u r -p<redacted> db');
    expect(redactLog('AKIAABCDEFGHIJKLMNOP,abcdefghijABCDEFGHIJ0123456789/+abcdefgh;x')).toBe('<aws key id>,<aws secret>;x');
    expect(redactLog('bot123456789:AAbcdefghijklmnopqrstuvwxyz01234567/send')).toBe('bot<telegram token>/send');
    expect(redactLog('x AbC8Q~abcdefghijklmnopqrstuvwxyz0123456 y')).toBe('x <azure secret> y');
    const pem = ['Loading key', '-----BEGIN EC PRIVATE KEY-----', 'Proc-Type: 4,ENCRYPTED', 'MHcCAQEEIAbCdEf', 'Zm9v==', 'ValueError: bad key'].join('\n');
    expect(redactLog(pem)).toBe('Loading key\n<private key>\nValueError: bad key');
    expect(redactLog('a\n-----BEGIN PRIVATE KEY-----\nMIIEv\n-----END PRIVATE KEY-----\nb')).toBe('a\n<private key>\nb');
    expect(redactLog('-----BEGIN PRIVATE KEY----- MIIEvAbc Def==')).toBe('<private key>');
    expect(redactLog('k = "-----BEGIN PRIVATE KEY-----\\nMIIEvAbc\\nDef=="')).toBe('k = "<private key>"');
  });

  it('values of a secret-named key that are no secret stay; a number stays unless the key names a password', () => {
    for (const line of [
      'token=None',
      'secret: false',
      'api_key: ${KEY}',
      'token: {{ t }}',
      'password: ****',
      "pad_token='<pad>'",
      'eos_token: </s>',
      'cls_token: [CLS]',
      'max_token=4096',
    ])
      expect(redactLog(line), line).toBe(line);
    expect(redactLog('password=123456')).toBe('password=<redacted>');
    expect(redactLog('DB_PASS=1234')).toBe('DB_PASS=<redacted>');
    expect(redactLog('auth=4242')).toBe('auth=<redacted>');
    expect(redactLog('api_key=1234567')).toBe('api_key=<redacted>');
    expect(redactLog('pad_token_x=abcdefgh')).toBe('pad_token_x=abcdefgh');
    expect(redactLog('Pad_Token=eot PAD_TOKEN=eot')).toBe('Pad_Token=eot PAD_TOKEN=eot');
    expect(redactLog(`token="abc def" secret='ghi jkl' pass=mno`)).toBe(`token="<redacted>" secret='<redacted>' pass=<redacted>`);
    expect(redactLog('my_pad_token=abcdefgh')).toBe('my_pad_token=abcdefgh');
    expect(redactLog('notpad_token=abcdefgh')).toBe('notpad_token=<redacted>');
    expect(redactLog('access_token="$TOKEN"')).toBe('access_token="$TOKEN"');
    expect(redactLog('token: xxxx')).toBe('token: xxxx');
    // A lower-case name of words with a secret's own word is the variable or placeholder that holds it (a real
    // blind6 thread passes `token=hf_token` to from_pretrained; the others are synthetic variants).
    for (const line of [
      'model = AutoModel.from_pretrained(path, token=hf_token)',
      'client = Client(api_key=args.api_key)',
      "hf_token = 'your_huggingface_access_token'",
      'login(token=cfg.hub.token)',
      'password: db_password',
    ])
      expect(redactLog(line), line).toBe(line);
    // ... but a generated value is redacted: capitals, digits, or no secret word among its parts.
    expect(redactLog('token=hf_AbCdEfGhIjKlMnOpQrStUv')).not.toContain('AbCdEfGhIjKlMnOpQrStUv');
    expect(redactLog("hf_token = 'hf_abcdefghijklmnopqrstuvwxyz0123'")).not.toContain('abcdefghijklmnopqrstuvwxyz0123');
    expect(redactLog('password=correct_horse_battery_staple')).toBe('password=<redacted>');
    expect(redactLog('api_key=sk_live_4eC39HqLyjWDarjtT1zdp7dc')).not.toContain('4eC39HqLyjWDarjtT1zdp7dc');
  });

  it('home directories, e-mail and IP addresses become placeholders', () => {
    expect(redactLog('Saving to /home/alice/runs/x.pt and /Users/bob and C:\\Users\\carol\\x and d:\\\\Users\\\\dave\\\\y')).toBe(
      'Saving to /home/<user>/runs/x.pt and /Users/<user> and C:\\Users\\<user>\\x and d:\\Users\\<user>\\\\y',
    );
    expect(redactLog('wandb: logged in as alice.smith+ml@mail.example.co.uk.')).toBe('wandb: logged in as <email>.');
    expect(redactLog('connect 10.1.2.3:29500 / 255.255.255.0 / 192.168.100.249 / 256.1.1.1 / 1.2.3')).toBe(
      'connect <ip>:29500 / <ip> / <ip> / 256.1.1.1 / 1.2.3',
    );
    expect(redactLog('fe80::42:acff:fe11:2%eth1 2001:0db8:85a3:0000:0000:8a2e:0370:7334 ::1')).toBe('<ip>%eth1 <ip> ::1');
    expect(redactLog('step 12:30:45 epoch 1:2')).toBe('step 12:30:45 epoch 1:2');
  });

  it('keeps the last bytes from a line start and says so', () => {
    const text = `${'a'.repeat(50)}\n${'b'.repeat(50)}\nlast`;
    expect(lastBytes(text, 200)).toEqual({ text, cut: false });
    expect(lastBytes(text, 60)).toEqual({ text: `${'b'.repeat(50)}\nlast`, cut: true });
    expect(lastBytes('x'.repeat(100), 10)).toEqual({ text: 'x'.repeat(9), cut: true });
    expect(lastBytes('é'.repeat(10), 5)).toEqual({ text: 'éé', cut: true });
    expect(redactLog(text, 2048)).toBe(text);
    expect(redactLog(text, 60)).toBe(`[... earlier lines not kept; the last 0 KiB follow]\n${'b'.repeat(50)}\nlast`);
    expect(redactLog(`${'c'.repeat(3000)}\nend`, 2048)).toBe('[... earlier lines not kept; the last 2 KiB follow]\nend');
    expect(MAX_KEPT_BYTES).toBe(256 * 1024);
    expect(lastBytes('z'.repeat(MAX_KEPT_BYTES)).cut).toBe(false);
    expect(lastBytes('z'.repeat(MAX_KEPT_BYTES + 1)).cut).toBe(true);
  });

  it('a quote taken out of a kept log loses runs that look like a key body', () => {
    expect(scrubBareSecrets('key MIIEvQIBADANBgkqhkiG9w0BAQEFAASC end')).toBe('key <redacted> end');
    expect(scrubBareSecrets(`hash ${'a'.repeat(40)} and ${'1'.repeat(40)} stay`)).toBe(`hash ${'a'.repeat(40)} and ${'1'.repeat(40)} stay`);
    expect(scrubBareSecrets('short Ab1Cd2Ef3 stays; /usr/lib/python3.10/site-packages stays')).toBe(
      'short Ab1Cd2Ef3 stays; /usr/lib/python3.10/site-packages stays',
    );
    expect(scrubBareSecrets('x abcdefghij0123456789abcdefghij01 y')).toBe('x <redacted> y');
    expect(scrubBareSecrets('a MIIEvQIBADANBgkqhkiG9w0BAQEFAASC b MIIEvQIBADANBgkqhkiG9w0BAQEFAASD c')).toBe('a <redacted> b <redacted> c');
    expect(scrubBareSecrets('x abcdefghij0123456789abcdefghij0 y')).toBe('x abcdefghij0123456789abcdefghij0 y');
  });
});
