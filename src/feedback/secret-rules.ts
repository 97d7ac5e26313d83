// The secret shapes the kept-log redaction replaces (src/feedback/redact.ts), as data: each rule's id, the
// maintained rule set that describes the shape (`source`: gitleaks' default config, github.com/gitleaks/gitleaks
// config/gitleaks.toml at b58d3f1, by rule id; Yelp detect-secrets' plugins, detect_secrets/plugins/*.py, by
// class), the pattern (RE2 syntax, compiled by redact.ts with the `re2` package: linear time on any text) and
// what the match becomes. The patterns are written for redaction, not detection: they replace the token, need
// no entropy check and are anchored on prefixes and context, so ordinary training-log text stays as it was
// (test/feedback/redact.test.ts runs them over every fixture log). Order matters: blocks first, then URLs and
// prefixed tokens, then context rules (flags, keyword = value); the first rule to replace text wins.

export interface SecretRule {
  /** Our id (the rule's kind in the placeholder where it has one). */
  id: string;
  /** Where the shape comes from: `gitleaks:<rule id>`, `detect-secrets:<plugin>`, or the vendor's format. */
  source: string;
  /** RE2 syntax; compiled with the `g` flag plus `flags`. */
  pattern: string;
  flags?: string;
  /** The replacement ($1… are the rule's groups of context kept around the secret). */
  to: string;
  /**
   * For keyword rules: group 1 the key, group 2 the separator, group 3 the value; a value that is no secret
   * (true, none, a placeholder, a tokenizer's special token) is left as it is.
   */
  keyword?: true;
}

/** The headers of PEM (RFC 1421), OpenPGP armor (RFC 4880) and PuTTY key files. */
const KEY_HEADER = String.raw`(?:Proc-Type|DEK-Info|Version|Comment|Hash|Charset|Encryption|Public-Lines|Private-Lines|Private-MAC|Private-Hash|Key-Derivation|Argon2-[A-Za-z]{1,20}): ?`;
/** The body of a key block after its BEGIN line: base64 lines and header lines, ending at the first other line (or the end of the log). */
const KEY_BODY = String.raw`(?:[ \t]+[A-Za-z0-9+/=]{1,200})*(?:\r?\n[ \t]*(?:[A-Za-z0-9+/=]{1,200}|${KEY_HEADER}[^\r\n]{0,200})?[ \t]*\r?$|\\n(?:[A-Za-z0-9+/=]{1,200}|${KEY_HEADER}[^\\\r\n]{0,200})?)*`;
const BEGIN_KEY = String.raw`-{4,5} ?BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)? ?-{4,5}`;

/** Key names whose value is a secret; the key must end with one (`max_new_tokens`, `pad_token_id`, `tokenizer` do not). */
const SECRET_KEY_NAMES = [
  String.raw`password`,
  String.raw`passwd`,
  String.raw`passphrase`,
  String.raw`secret(?:[_-]?key)?(?:[_-]?base)?`,
  String.raw`client[_-]?secret`,
  String.raw`token`,
  String.raw`api[_-]?key`,
  String.raw`apikey`,
  String.raw`access[_-]?key(?:[_-]?id)?`,
  String.raw`private[_-]?key(?:[_-]?id)?`,
  String.raw`account[_-]?key`,
  String.raw`shared[_-]?access[_-]?(?:key|signature)`,
  String.raw`(?:signing|encryption|master|license|service)[_-]?key`,
  String.raw`credentials?`,
].join('|');
/** Short names that are a secret only as a whole key or after a separator (`DB_PASS`, `auth`, not `bypass`); `pwd` only after one (`PWD` is the shell's folder). */
const SHORT_KEY = String.raw`(?:[A-Za-z0-9_.-]{0,40}[_.-])?(?:pass|auth)|[A-Za-z0-9_.-]{0,40}[_.-]pwd`;
/** A key: `[prefix]name`, or an upper-case environment variable ending in _KEY (`OPENAI_KEY`, not `sort_key`). */
const SECRET_KEY = String.raw`(?:[A-Za-z0-9_.-]{0,40}(?:${SECRET_KEY_NAMES})|${SHORT_KEY}|(?-i:[A-Z0-9_]{0,40}_KEY))`;
/** A value: quoted (spaces allowed), or up to the next space or delimiter (CJK punctuation is prose, never part of a token). */
const SECRET_VALUE = String.raw`"[^"\r\n]{1,300}"|'[^'\r\n]{1,300}'|\$\{[A-Za-z_][A-Za-z0-9_]{0,100}\}|[^\s"',;&<>()[\]{}\x{3000}-\x{303F}\x{FF01}-\x{FF0F}\x{FF1A}-\x{FF20}]{1,500}`;

/** A token's end: not followed by more of its characters (RE2 has no lookahead, so the next character is kept in a group). */
const END = String.raw`(\W|$)`;

export const SECRET_RULES: SecretRule[] = [
  // Key blocks: to their END line, or through the key's lines when the END line is missing (a cut paste).
  {
    id: 'private-key',
    source: 'gitleaks:private-key; detect-secrets:PrivateKeyDetector',
    pattern: String.raw`${BEGIN_KEY}[\s\S]*?-{4,5} ?END[ A-Z0-9_-]{0,100}?-{4,5}`,
    to: '<private key>',
  },
  {
    id: 'private-key-unterminated',
    source: 'gitleaks:private-key; detect-secrets:PrivateKeyDetector',
    pattern: BEGIN_KEY + KEY_BODY,
    flags: 'm',
    to: '<private key>',
  },
  {
    id: 'putty-private-key',
    source: 'detect-secrets:PrivateKeyDetector (PuTTY-User-Key-File-2)',
    pattern: String.raw`PuTTY-User-Key-File-\d{1,2}: ?[^\r\n]{0,200}` + KEY_BODY,
    flags: 'm',
    to: '<private key>',
  },
  { id: 'age-secret-key', source: 'gitleaks:age-secret-key', pattern: String.raw`AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}`, to: '<private key>' },

  // Webhook URLs: the URL is the credential.
  {
    id: 'slack-webhook',
    source: 'gitleaks:slack-webhook-url; detect-secrets:SlackDetector',
    pattern: String.raw`(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_-]{10,200}`,
    to: '<slack webhook>',
  },
  {
    id: 'discord-webhook',
    source: 'Discord webhook URL format (discord.com/api/webhooks/ID/TOKEN)',
    pattern: String.raw`(?:https?://)?(?:ptb\.|canary\.)?discord(?:app)?\.com/api/(?:v\d{1,2}/)?webhooks/\d{5,30}/[A-Za-z0-9_-]{20,200}`,
    to: '<discord webhook>',
  },
  {
    id: 'teams-webhook',
    source: 'gitleaks:microsoft-teams-webhook',
    pattern: String.raw`https://[A-Za-z0-9-]{1,60}\.webhook\.office\.com/webhookb2/[^\s"'<>]{10,400}`,
    to: '<teams webhook>',
  },

  // Prefixed tokens.
  { id: 'slack-config-token', source: 'gitleaks:slack-config-access-token', pattern: String.raw`\bxoxe\.xox[bp]-[A-Za-z0-9-]{8,}`, to: '<slack token>' },
  {
    id: 'slack-token',
    source: 'gitleaks:slack-bot-token, slack-user-token, slack-legacy-*, slack-config-refresh-token; detect-secrets:SlackDetector',
    pattern: String.raw`\bxox[abposrec]-[A-Za-z0-9-]{8,}`,
    to: '<slack token>',
  },
  { id: 'slack-app-token', source: 'gitleaks:slack-app-token', pattern: String.raw`\bxapp-[A-Za-z0-9-]{8,}`, to: '<slack token>' },
  {
    id: 'github-token',
    source: 'gitleaks:github-pat, github-oauth, github-app-token, github-refresh-token; detect-secrets:GitHubTokenDetector',
    pattern: String.raw`\bgh[pousr]_[A-Za-z0-9]{20,}`,
    to: '<github token>',
  },
  { id: 'github-fine-grained-pat', source: 'gitleaks:github-fine-grained-pat', pattern: String.raw`\bgithub_pat_\w{20,}`, to: '<github token>' },
  {
    id: 'gitlab-token',
    source:
      'gitleaks:gitlab-pat, gitlab-pat-routable, gitlab-deploy-token, gitlab-runner-*, gitlab-ptt, gitlab-scim-token, gitlab-feed-token, gitlab-*; detect-secrets:GitLabTokenDetector',
    pattern: String.raw`\bgl(?:pat|dt|rt|ptt|soat|ft|imt|agent|oas|cbt|ffct)-[\w.-]{20,}`,
    to: '<gitlab token>',
  },
  { id: 'gitlab-runner-registration', source: 'gitleaks:gitlab-rrt', pattern: String.raw`\bGR1348941[\w-]{20,}`, to: '<gitlab token>' },
  { id: 'gitlab-session', source: 'gitleaks:gitlab-session-cookie', pattern: String.raw`(_gitlab_session=)[0-9a-z]{32}`, to: '$1<redacted>' },
  { id: 'huggingface-token', source: 'gitleaks:huggingface-access-token', pattern: String.raw`\bhf_[A-Za-z0-9]{20,}`, to: '<hf token>' },
  { id: 'huggingface-org-token', source: 'gitleaks:huggingface-organization-api-token', pattern: String.raw`\bapi_org_[A-Za-z0-9]{30,}`, to: '<hf token>' },
  {
    id: 'openai-anthropic-key',
    source: 'gitleaks:openai-api-key, anthropic-api-key, anthropic-admin-api-key; detect-secrets:OpenAIDetector',
    pattern: String.raw`\bsk-[A-Za-z0-9_-]{20,}`,
    to: '<api key>',
  },
  {
    id: 'stripe-key',
    source: 'gitleaks:stripe-access-token; detect-secrets:StripeDetector',
    pattern: String.raw`\b(?:sk|rk|pk)_(?:live|test|prod)_[A-Za-z0-9]{10,}`,
    to: '<stripe key>',
  },
  { id: 'stripe-webhook-secret', source: 'Stripe webhook signing secret format', pattern: String.raw`\bwhsec_[A-Za-z0-9]{24,}`, to: '<stripe key>' },
  // An AWS secret next to its key id (`AKIA… wJalr…`, a CSV row): both go, before the key id alone.
  {
    id: 'aws-key-pair',
    source: 'detect-secrets:AWSKeyDetector; gitleaks:aws-access-token',
    pattern: String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b([\s,;:|"'=]{1,8})[A-Za-z0-9/+]{40}([^A-Za-z0-9/+=]|$)`,
    to: '<aws key id>$1<aws secret>$2',
  },
  {
    id: 'aws-access-key-id',
    source: 'gitleaks:aws-access-token; detect-secrets:AWSKeyDetector',
    pattern: String.raw`\b(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b`,
    to: '<aws key id>',
  },
  {
    id: 'aws-bedrock-key',
    source: 'gitleaks:aws-amazon-bedrock-api-key-long-lived',
    pattern: String.raw`\bABSK[A-Za-z0-9+/]{109,269}={0,2}`,
    to: '<aws secret>',
  },
  { id: 'gcp-api-key', source: 'gitleaks:gcp-api-key', pattern: String.raw`\bAIza[\w-]{35}`, to: '<google api key>' },
  { id: 'google-oauth-secret', source: 'Google OAuth client secret format (GOCSPX-)', pattern: String.raw`\bGOCSPX-[\w-]{20,}`, to: '<google secret>' },
  {
    id: 'google-oauth-token',
    source: 'Google OAuth access / refresh token formats (ya29., 1//0)',
    pattern: String.raw`\b(?:ya29\.[\w-]{20,}|1//0[\w-]{30,})`,
    to: '<google token>',
  },
  {
    id: 'azure-ad-client-secret',
    source: 'gitleaks:azure-ad-client-secret',
    pattern: String.raw`(^|[\\'"\x60\s>=:(,)])[a-zA-Z0-9_~.]{3}\dQ~[a-zA-Z0-9_~.-]{31,34}`,
    to: '$1<azure secret>',
  },
  {
    id: 'azure-sas-signature',
    source: 'detect-secrets:AzureStorageKeyDetector (SAS sig=)',
    pattern: String.raw`([?&;]sig=)[A-Za-z0-9%/+=]{20,200}`,
    to: '$1<redacted>',
  },
  { id: 'npm-token', source: 'gitleaks:npm-access-token; detect-secrets:NpmDetector', pattern: String.raw`\bnpm_[A-Za-z0-9]{36}\b`, to: '<npm token>' },
  { id: 'pypi-token', source: 'gitleaks:pypi-upload-token; detect-secrets:PypiTokenDetector', pattern: String.raw`\bpypi-AgE[\w-]{50,}`, to: '<pypi token>' },
  {
    id: 'sendgrid-key',
    source: 'gitleaks:sendgrid-api-token; detect-secrets:SendGridDetector',
    pattern: String.raw`\bSG\.[\w-]{16,32}\.[\w-]{16,64}`,
    to: '<sendgrid key>',
  },
  { id: 'twilio-key', source: 'gitleaks:twilio-api-key; detect-secrets:TwilioKeyDetector', pattern: String.raw`\bSK[0-9a-fA-F]{32}\b`, to: '<twilio key>' },
  {
    id: 'telegram-bot-token',
    source: 'detect-secrets:TelegramBotTokenDetector',
    pattern: String.raw`(\b|bot)\d{8,10}:[A-Za-z0-9_-]{35}` + END,
    to: '$1<telegram token>$2',
  },
  {
    id: 'discord-bot-token',
    source: 'detect-secrets:DiscordBotTokenDetector',
    pattern: String.raw`\b[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}`,
    to: '<discord token>',
  },
  { id: 'mailchimp-key', source: 'detect-secrets:MailchimpDetector', pattern: String.raw`\b[0-9a-f]{32}-us\d{1,2}\b`, to: '<mailchimp key>' },
  {
    id: 'square-token',
    source: 'gitleaks:square-access-token; detect-secrets:SquareOAuthDetector',
    pattern: String.raw`\bsq0(?:atp|csp|idp)-[\w-]{22,60}`,
    to: '<square token>',
  },
  {
    id: 'digitalocean-token',
    source: 'gitleaks:digitalocean-pat, digitalocean-access-token, digitalocean-refresh-token',
    pattern: String.raw`\bdo[opr]_v1_[a-f0-9]{64}`,
    to: '<digitalocean token>',
  },
  { id: 'databricks-token', source: 'gitleaks:databricks-api-token', pattern: String.raw`\bdapi[a-f0-9]{32}(?:-\d)?\b`, to: '<databricks token>' },
  {
    id: 'doppler-token',
    source: 'gitleaks:doppler-api-token',
    pattern: String.raw`\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}`,
    to: '<doppler token>',
  },
  { id: 'vault-token', source: 'gitleaks:vault-service-token, vault-batch-token', pattern: String.raw`\bhv[sbr]\.[\w-]{24,300}`, to: '<vault token>' },
  { id: 'pulumi-token', source: 'gitleaks:pulumi-api-token', pattern: String.raw`\bpul-[a-f0-9]{40}\b`, to: '<pulumi token>' },
  { id: 'linear-key', source: 'gitleaks:linear-api-key', pattern: String.raw`\blin_api_[A-Za-z0-9]{40}\b`, to: '<linear key>' },
  { id: 'notion-token', source: 'gitleaks:notion-api-token', pattern: String.raw`\b(?:ntn_[A-Za-z0-9]{40,50}|secret_[A-Za-z0-9]{43})\b`, to: '<notion token>' },
  {
    id: 'shopify-token',
    source: 'gitleaks:shopify-access-token, shopify-custom-access-token, shopify-private-app-access-token, shopify-shared-secret',
    pattern: String.raw`\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b`,
    to: '<shopify token>',
  },
  { id: 'sentry-token', source: 'gitleaks:sentry-org-token, sentry-user-token', pattern: String.raw`\bsntry[su]_[A-Za-z0-9+/=_]{40,}`, to: '<sentry token>' },
  {
    id: 'grafana-token',
    source: 'gitleaks:grafana-service-account-token, grafana-cloud-api-token, grafana-api-key',
    pattern: String.raw`\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}|eyJrIjoi[A-Za-z0-9]{70,400}={0,3})`,
    to: '<grafana token>',
  },
  {
    id: '1password-secret-key',
    source: 'gitleaks:1password-secret-key',
    pattern: String.raw`\bA3-[A-Z0-9]{6}-(?:[A-Z0-9]{11}|[A-Z0-9]{6}-[A-Z0-9]{5})-[A-Z0-9]{5}-[A-Z0-9]{5}-[A-Z0-9]{5}\b`,
    to: '<1password key>',
  },
  {
    id: '1password-service-token',
    source: 'gitleaks:1password-service-account-token',
    pattern: String.raw`\bops_eyJ[A-Za-z0-9+/]{250,}={0,3}`,
    to: '<1password token>',
  },
  {
    id: 'artifactory-token',
    source: 'gitleaks:artifactory-api-key, artifactory-reference-token; detect-secrets:ArtifactoryDetector',
    pattern: String.raw`\b(?:AKCp[A-Za-z0-9]{69}|cmVmd[A-Za-z0-9]{59})\b`,
    to: '<artifactory token>',
  },
  { id: 'heroku-key', source: 'gitleaks:heroku-api-key-v2', pattern: String.raw`\bHRKU-[\w-]{30,}`, to: '<heroku key>' },
  { id: 'openshift-token', source: 'gitleaks:openshift-user-token', pattern: String.raw`\bsha256~[\w-]{43}`, to: '<openshift token>' },
  { id: 'replicate-token', source: 'Replicate API token format (r8_)', pattern: String.raw`\br8_[A-Za-z0-9]{37}\b`, to: '<api key>' },
  { id: 'groq-key', source: 'Groq API key format (gsk_)', pattern: String.raw`\bgsk_[A-Za-z0-9]{48,}\b`, to: '<api key>' },
  { id: 'perplexity-key', source: 'gitleaks:perplexity-api-key', pattern: String.raw`\bpplx-[A-Za-z0-9]{48}\b`, to: '<api key>' },
  { id: 'tailscale-key', source: 'Tailscale auth key format (tskey-)', pattern: String.raw`\btskey-[\w-]{20,}`, to: '<tailscale key>' },
  { id: 'postman-key', source: 'gitleaks:postman-api-token', pattern: String.raw`\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b`, to: '<postman key>' },
  { id: 'rubygems-token', source: 'gitleaks:rubygems-api-token', pattern: String.raw`\brubygems_[a-f0-9]{48}\b`, to: '<rubygems token>' },
  { id: 'dynatrace-token', source: 'gitleaks:dynatrace-api-token', pattern: String.raw`\bdt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}\b`, to: '<dynatrace token>' },
  {
    id: 'planetscale-token',
    source: 'gitleaks:planetscale-api-token, planetscale-oauth-token, planetscale-password',
    pattern: String.raw`\bpscale_(?:tkn|oauth|pw)_[\w=.-]{32,64}`,
    to: '<planetscale token>',
  },
  { id: 'prefect-token', source: 'gitleaks:prefect-api-token', pattern: String.raw`\bpnu_[A-Za-z0-9]{36}\b`, to: '<prefect token>' },
  { id: 'sendinblue-key', source: 'gitleaks:sendinblue-api-token', pattern: String.raw`\bxkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}\b`, to: '<sendinblue key>' },
  { id: 'alibaba-key-id', source: 'gitleaks:alibaba-access-key-id', pattern: String.raw`\bLTAI[A-Za-z0-9]{20}\b`, to: '<alibaba key id>' },
  { id: 'clickhouse-key', source: 'gitleaks:clickhouse-cloud-api-secret-key', pattern: String.raw`\b4b1d[A-Za-z0-9]{38}\b`, to: '<clickhouse key>' },
  { id: 'terraform-token', source: 'gitleaks:hashicorp-tf-api-token', pattern: String.raw`\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,70}`, to: '<terraform token>' },
  {
    id: 'flyio-token',
    source: 'gitleaks:flyio-access-token',
    pattern: String.raw`\b(?:fo1_[\w-]{43}|fm[12][ar]?_[A-Za-z0-9+/]{100,}={0,3})`,
    to: '<fly token>',
  },
  {
    id: 'jwt',
    source: 'gitleaks:jwt; detect-secrets:JwtTokenDetector',
    pattern: String.raw`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.(?:[A-Za-z0-9_-]{8,})?`,
    to: '<jwt>',
  },

  // Credentials by context: command lines and headers.
  {
    id: 'curl-user',
    source: 'gitleaks:curl-auth-user',
    pattern: String.raw`(\bcurl\b[^\r\n]{0,500}?\s(?:-u|--user)(?:=|[ \t]{0,5}))(?:"[^"\r\n]{1,300}"|'[^'\r\n]{1,300}'|[^\s"']{1,300})`,
    to: '$1<credentials>',
  },
  {
    id: 'mysql-password-flag',
    source: 'detect-secrets:KeywordDetector (mysql -p<password>)',
    pattern: String.raw`(\b(?:mysql|mysqldump|mysqladmin|mariadb|mariadb-dump|mysqlimport)\b[^\r\n]{0,300}?\s-p)[^\s<-][^\s]{0,200}`,
    to: '$1<redacted>',
  },
  {
    id: 'sshpass-flag',
    source: 'detect-secrets:KeywordDetector (sshpass -p)',
    pattern: String.raw`(\bsshpass\s+-p[ \t]*)[^\s<-][^\s]{0,200}`,
    to: '$1<redacted>',
  },
  {
    id: 'redis-cli-auth',
    source: 'detect-secrets:KeywordDetector (redis-cli -a)',
    pattern: String.raw`(\bredis-cli\b[^\r\n]{0,300}?\s-a[ \t]+)[^\s<-][^\s]{0,200}`,
    to: '$1<redacted>',
  },
  {
    id: 'wandb-login',
    source: 'Weights & Biases API key format (`wandb login KEY`: 40 hex, or local- keys)',
    pattern: String.raw`(\bwandb\s+login\b[^\r\n]{0,200}?\s)(?:local-)?[A-Za-z0-9_-]{40,}`,
    to: '$1<wandb key>',
  },
  {
    id: 'netrc-password',
    source: 'netrc(5) file format (`machine H login U password P`)',
    pattern: String.raw`(\bmachine\s+\S{1,200}\s+login\s+\S{1,200}\s+password\s+)\S{1,300}`,
    to: '$1<redacted>',
  },
  // Authorization headers (after the named tokens, which keep their kind).
  { id: 'bearer-token', source: 'gitleaks:curl-auth-header', pattern: String.raw`\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}`, flags: 'i', to: '$1 <token>' },
  // `Authorization: Basic …`, `Token …`, or a bare value; "token embeddings" in prose is not a header.
  {
    id: 'authorization-header',
    source: 'gitleaks:curl-auth-header; detect-secrets:BasicAuthDetector',
    pattern: String.raw`(\b(?:Proxy-)?Authorization["']?[ \t]{0,3}[:=][ \t]{0,3}["']?(?:(?:Basic|Token|Digest|ApiKey|Key)[ \t]{1,3})?)[^\s"'<,;][^\s"',;]{7,}`,
    flags: 'i',
    to: '$1<token>',
  },
  // Credentials in URLs: scheme://user:password@host and scheme://:password@host.
  {
    id: 'url-credentials',
    source: 'detect-secrets:BasicAuthDetector',
    pattern: String.raw`([A-Za-z][A-Za-z0-9+.-]{0,20}://)[^\s/:@]{0,200}:[^\s/@]{1,200}@`,
    to: '$1<credentials>@',
  },
  // --password X, --password=X, --api-key "a b", --token X (the flag's name ends with a secret's name).
  {
    id: 'secret-flag',
    source: 'detect-secrets:KeywordDetector',
    pattern: String.raw`(--?${SECRET_KEY})(=|[ \t]+)("[^"\r\n]{1,300}"|'[^'\r\n]{1,300}'|[^\s"'<-][^\s"']{0,500})`,
    flags: 'i',
    to: '$1$2<redacted>',
    keyword: true,
  },
  // key=value / key: value / "key": "value" where the key names a secret.
  {
    id: 'secret-assignment',
    source: 'gitleaks:generic-api-key; detect-secrets:KeywordDetector',
    pattern: String.raw`\b(${SECRET_KEY})(["']?[ \t]{0,3}(?::=|=>|=|:)[ \t]{0,3})(${SECRET_VALUE})`,
    flags: 'i',
    to: '$1$2<redacted>',
    keyword: true,
  },
];
