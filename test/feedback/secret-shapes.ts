// Secret shapes the kept-log redaction must replace: each a log line as a user might paste it, and the part
// of it that must not survive. EVERY VALUE HERE IS MADE UP: built from a fixed pseudo-random alphabet
// walk (`fake`) or written by hand in the vendor's format; none is or was a real credential.
// The shapes: the 45 of the issue 22 audit (the 20 it found missed first), then more from gitleaks'
// default rule ids and detect-secrets' plugins (src/feedback/secret-rules.ts names each rule's source).

const ALNUM = 'AbCdEfGhIjKlMnOpQrStUvWxYz0123456789aBcDeFgHiJkLmNoPqRsTuVwXyZ';
/** A made-up token body of `n` characters from `alphabet` (deterministic: the same every run). */
export function fake(n: number, seed = 7, alphabet = ALNUM): string {
  let s = '';
  let x = seed;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += alphabet[x % alphabet.length];
  }
  return s;
}
const HEX = '0123456789abcdef';
const hex = (n: number, seed = 3) => fake(n, seed, HEX);
const B64 = ALNUM + '+/';
const upper = (n: number, seed = 5) => fake(n, seed, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567');

export interface SecretShape {
  /** What it is. */
  name: string;
  /** The line as pasted. */
  line: string;
  /** The secret: no part of the redacted line may contain it (nor its first 12 characters, for long ones). */
  secret: string;
}

const PEM_BODY = [fake(64, 11, B64), fake(64, 12, B64), fake(64, 13, B64), fake(20, 14, B64) + '=='];
const AWS_SECRET = fake(40, 21, ALNUM + '/+');

export const SECRET_SHAPES: SecretShape[] = [
  // The 20 the audit found missed.
  { name: 'slack refresh token xoxe-', line: `SLACK_REFRESH=xoxe-1-${fake(146, 1)}`, secret: `xoxe-1-${fake(146, 1)}` },
  { name: 'slack config token xoxe.xoxp-', line: `token: xoxe.xoxp-1-${fake(163, 2)}`, secret: fake(163, 2) },
  {
    name: 'slack webhook url',
    line: `posting to https://hooks.slack.com/services/T0${upper(8)}/B0${upper(8, 6)}/${fake(24, 3)} failed`,
    secret: `${fake(24, 3)}`,
  },
  { name: 'gitlab pat', line: `git remote add origin https://gitlab.example.com/ml/x.git # glpat-${fake(20, 4)}`, secret: `glpat-${fake(20, 4)}` },
  { name: 'stripe live key', line: `stripe.api_key set from env sk_live_${fake(24, 5)} (billing hook)`, secret: `sk_live_${fake(24, 5)}` },
  { name: 'google api key', line: `GenerativeModel(api=AIza${fake(35, 6)})`, secret: `AIza${fake(35, 6)}` },
  { name: 'bare aws secret after its key id', line: `AKIA${upper(16, 7)} ${AWS_SECRET}`, secret: AWS_SECRET },
  { name: 'aws credentials csv row', line: `train-bot,AKIA${upper(16, 8)},${fake(40, 22, ALNUM + '/+')}`, secret: fake(40, 22, ALNUM + '/+') },
  { name: 'aws_secret_access_key in ini', line: `aws_secret_access_key = ${fake(40, 23, ALNUM + '/+')}`, secret: fake(40, 23, ALNUM + '/+') },
  {
    name: 'azure storage AccountKey=',
    line: `DefaultEndpointsProtocol=https;AccountName=mlblobs;AccountKey=${fake(86, 9, B64)}==;EndpointSuffix=core.windows.net`,
    secret: fake(86, 9, B64),
  },
  { name: 'redis url with password only', line: `Connecting to redis://:${fake(16, 10)}@cache.internal:6379/0`, secret: fake(16, 10) },
  { name: '--password X', line: `python3 upload.py --user ml --password Sup3r-${fake(8, 11)} --retries 3`, secret: `Sup3r-${fake(8, 11)}` },
  { name: 'mysql -pX', line: `mysql -u root -p${fake(12, 12)} -h db.internal metrics < dump.sql`, secret: fake(12, 12) },
  { name: 'DB_PASS=', line: `DB_HOST=db.internal DB_PASS=${fake(14, 13)} python3 eval.py`, secret: fake(14, 13) },
  { name: 'passphrase:', line: `ssh_key_passphrase: ${fake(18, 14)}`, secret: fake(18, 14) },
  {
    name: 'quoted password with spaces',
    line: `db_config = {"host": "db", "password": "correct horse ${fake(6, 15)} staple"}`,
    secret: `correct horse ${fake(6, 15)} staple`,
  },
  { name: 'SECRET_KEY_BASE=', line: `SECRET_KEY_BASE=${hex(128, 16)} bundle exec rails s`, secret: hex(128, 16) },
  { name: 'wandb login KEY', line: `$ wandb login ${hex(40, 17)}`, secret: hex(40, 17) },
  {
    name: 'discord bot token',
    line: `discord.errors.LoginFailure: Improper token has been passed: M${fake(25, 18)}.${fake(6, 19)}.${fake(38, 20)}`,
    secret: `${fake(38, 20)}`,
  },
  {
    name: 'PEM block without its END line',
    line: ['Loading key:', '-----BEGIN RSA PRIVATE KEY-----', ...PEM_BODY].join('\n'),
    secret: PEM_BODY[0],
  },
  {
    name: 'PGP private key block',
    line: ['-----BEGIN PGP PRIVATE KEY BLOCK-----', 'Version: GnuPG v2', '', ...PEM_BODY, '=' + fake(4, 30, B64), '-----END PGP PRIVATE KEY BLOCK-----'].join(
      '\n',
    ),
    secret: PEM_BODY[1],
  },
  {
    name: 'PuTTY private key',
    line: [
      'PuTTY-User-Key-File-3: ssh-ed25519',
      'Encryption: none',
      'Comment: ed25519-key-20261128',
      'Public-Lines: 2',
      fake(64, 31, B64),
      fake(4, 32, B64),
      'Private-Lines: 1',
      fake(44, 33, B64),
      `Private-MAC: ${hex(64, 34)}`,
    ].join('\n'),
    secret: fake(44, 33, B64),
  },
  // The 25 the audit found redacted (they must stay so).
  { name: 'slack bot token', line: `export SLACK_BOT_TOKEN=xoxb-1234567890-0987654321-${fake(24, 40)}`, secret: fake(24, 40) },
  { name: 'slack user token', line: `xoxp-1234567890-1234567890-1234567890-${hex(32, 41)}`, secret: hex(32, 41) },
  { name: 'slack app token', line: `SLACK_APP_TOKEN=xapp-1-A0${upper(9, 42)}-1234567890123-${hex(64, 43)}`, secret: hex(64, 43) },
  { name: 'github pat', line: `git clone https://ghp_${fake(36, 44)}@github.com/acme/train.git`, secret: fake(36, 44) },
  { name: 'github fine-grained pat', line: `GH_TOKEN: github_pat_11A${fake(22, 45)}_${fake(59, 46)}`, secret: fake(59, 46) },
  { name: 'github oauth token', line: `gho_${fake(36, 47)}`, secret: fake(36, 47) },
  { name: 'hugging face token', line: `huggingface-cli login --token hf_${fake(34, 48)}`, secret: fake(34, 48) },
  { name: 'openai key', line: `openai.AuthenticationError: Incorrect API key provided: sk-proj-${fake(74, 49)}`, secret: fake(74, 49) },
  { name: 'anthropic key', line: `ANTHROPIC_API_KEY=sk-ant-api03-${fake(93, 50)}AA`, secret: fake(93, 50) },
  { name: 'aws access key id', line: `aws s3 cp s3://bucket/x . # AKIA${upper(16, 51)}`, secret: `AKIA${upper(16, 51)}` },
  {
    name: 'jwt bearer',
    line: `curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.${fake(43, 52)}" https://api.example.com`,
    secret: fake(43, 52),
  },
  { name: 'basic auth header', line: `Authorization: Basic ${fake(28, 53, B64)}=`, secret: fake(28, 53, B64) },
  { name: 'password= in a call', line: `db = connect(password=hunter2-${fake(10, 54)})`, secret: `hunter2-${fake(10, 54)}` },
  { name: 'WANDB_API_KEY=', line: `WANDB_API_KEY=${hex(40, 55)} python3 train.py`, secret: hex(40, 55) },
  { name: 'url user:password', line: `postgresql://trainer:${fake(16, 56)}@db.internal:5432/runs`, secret: fake(16, 56) },
  {
    name: 'PEM block with END',
    line: ['-----BEGIN OPENSSH PRIVATE KEY-----', ...PEM_BODY, '-----END OPENSSH PRIVATE KEY-----'].join('\n'),
    secret: PEM_BODY[2],
  },
  { name: 'json "api_key"', line: `{"api_key": "${fake(32, 57)}", "model": "gpt"}`, secret: fake(32, 57) },
  { name: 'yaml token:', line: `  token: ${fake(40, 58)}`, secret: fake(40, 58) },
  { name: 'HF_TOKEN in env', line: `HF_TOKEN=hf_${fake(34, 59)}`, secret: fake(34, 59) },
  { name: 'client_secret', line: `client_secret=${fake(40, 60)}&grant_type=client_credentials`, secret: fake(40, 60) },
  { name: 'private_key_id json', line: `"private_key_id": "${hex(40, 61)}",`, secret: hex(40, 61) },
  { name: 'mongodb+srv url', line: `pymongo.errors: mongodb+srv://ml:${fake(20, 62)}@cluster0.example.net/`, secret: fake(20, 62) },
  { name: 'access_token query', line: `GET /api/v1/runs?access_token=${fake(40, 63)}&page=2 401`, secret: fake(40, 63) },
  {
    name: 'escaped PEM in json',
    line: `"private_key": "-----BEGIN PRIVATE KEY-----\\n${fake(64, 64, B64)}\\n${fake(64, 65, B64)}\\n-----END PRIVATE KEY-----\\n"`,
    secret: fake(64, 64, B64),
  },
  { name: 'Token header', line: `Authorization: Token ${hex(40, 66)}`, secret: hex(40, 66) },
  { name: 'PGPASSWORD=', line: `PGPASSWORD=${fake(16, 67)} psql -h db -U ml`, secret: fake(16, 67) },
  // More shapes from the rule sets.
  { name: 'gitlab runner token', line: `gitlab-runner register --token glrt-${fake(20, 70)}`, secret: fake(20, 70) },
  { name: 'gitlab deploy token', line: `gldt-${fake(20, 71)}`, secret: fake(20, 71) },
  { name: 'stripe restricted key', line: `rk_live_${fake(32, 72)}`, secret: fake(32, 72) },
  { name: 'npm token', line: `//registry.npmjs.org/:_authToken=npm_${fake(36, 73)}`, secret: fake(36, 73) },
  { name: 'pypi upload token', line: `password = pypi-AgEIcHlwaS5vcmc${fake(60, 74)}`, secret: fake(60, 74) },
  { name: 'sendgrid key', line: `SG.${fake(22, 75)}.${fake(43, 76)}`, secret: fake(43, 76) },
  { name: 'twilio api key', line: `twilio sid SK${hex(32, 77)}`, secret: hex(32, 77) },
  { name: 'telegram bot token', line: `https://api.telegram.org/bot123456789:AA${fake(33, 78)}/sendMessage`, secret: fake(33, 78) },
  { name: 'mailchimp key', line: `mailchimp ${hex(32, 79)}-us21`, secret: hex(32, 79) },
  { name: 'digitalocean pat', line: `DIGITALOCEAN_ACCESS=dop_v1_${hex(64, 80)}`, secret: hex(64, 80) },
  { name: 'databricks token', line: `databricks configure: dapi${hex(32, 81)}`, secret: hex(32, 81) },
  { name: 'vault token', line: `VAULT_ADDR=https://vault X-Vault-Token hvs.${fake(90, 82)}`, secret: fake(90, 82) },
  { name: 'azure ad client secret', line: `AZURE_CLIENT_SECRET ${fake(3, 83)}8Q~${fake(34, 84)}`, secret: fake(34, 84) },
  { name: 'azure sas signature', line: `https://ml.blob.core.windows.net/c/x.pt?sv=2022-11-02&sr=b&sig=${fake(43, 85, B64)}%3D`, secret: fake(43, 85, B64) },
  { name: 'google oauth client secret', line: `client_config GOCSPX-${fake(28, 86)}`, secret: fake(28, 86) },
  { name: 'google access token', line: `ya29.${fake(120, 87)}`, secret: fake(120, 87) },
  { name: 'discord webhook', line: `POST https://discord.com/api/webhooks/123456789012345678/${fake(68, 88)} 404`, secret: fake(68, 88) },
  {
    name: 'teams webhook',
    line: `https://acme.webhook.office.com/webhookb2/${hex(8, 89)}-1111-2222-3333-${hex(12, 90)}@${hex(8, 91)}/IncomingWebhook/${hex(32, 92)}`,
    secret: hex(32, 92),
  },
  {
    name: 'age secret key',
    line: `AGE-SECRET-KEY-1${fake(58, 93, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L')}`,
    secret: fake(58, 93, 'QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L'),
  },
  { name: 'curl -u user:pass', line: `curl -sS -u admin:${fake(14, 94)} https://grafana.internal/api/health`, secret: fake(14, 94) },
  { name: 'sshpass -p', line: `sshpass -p ${fake(12, 95)} ssh gpu1 nvidia-smi`, secret: fake(12, 95) },
  { name: 'redis-cli -a', line: `redis-cli -h cache -a ${fake(20, 96)} ping`, secret: fake(20, 96) },
  { name: '--api-key=X', line: `python3 eval.py --api-key=${fake(32, 97)} --model x`, secret: fake(32, 97) },
  { name: 'netrc', line: `machine api.wandb.ai login user password ${hex(40, 98)}`, secret: hex(40, 98) },
  { name: 'grafana service account token', line: `glsa_${fake(32, 99)}_${hex(8, 100)}`, secret: fake(32, 99) },
  { name: 'openai key in yaml quotes', line: `openai_api_key: 'sk-${fake(48, 101)}'`, secret: fake(48, 101) },
  { name: 'OPENAI_KEY= env', line: `OPENAI_KEY=${fake(30, 102)}`, secret: fake(30, 102) },
  { name: 'shopify token', line: `shpat_${hex(32, 103)}`, secret: hex(32, 103) },
  { name: 'notion token', line: `NOTION=ntn_${fake(46, 104)}`, secret: fake(46, 104) },
  { name: 'perplexity key', line: `pplx-${fake(48, 105)}`, secret: fake(48, 105) },
  { name: 'password: in yaml', line: `  password: ${fake(12, 106)}`, secret: fake(12, 106) },
  { name: 'pwd= after a separator', line: `db.pwd=${fake(12, 107)}`, secret: fake(12, 107) },
  { name: 'amqp url', line: `amqp://guest:${fake(12, 108)}@rabbit:5672//`, secret: fake(12, 108) },
];
