// Secrets and personal data of every kind the redaction of kept logs names (all made up).
export const SECRET_LINES = [
  'export SLACK_BOT_TOKEN=xoxb-1234567890-0987654321-AbCdEfGhIjKlMnOp',
  'git clone https://ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8@github.com/acme/train.git',
  'huggingface-cli login --token hf_AbCdEfGhIjKlMnOpQrStUvWxYz012345',
  'aws s3 cp s3://bucket/x . # AKIAIOSFODNN7EXAMPLE',
  'curl -H "Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.abcdefghijkl" https://api.example.com',
  'db = connect(password=hunter2-correct-horse)',
  'WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567 python3 train.py',
  'Saving checkpoint to /home/alice/runs/exp1/last.pt',
  'Loading C:\\Users\\alice\\data\\coco.yaml and /Users/alice/Downloads/x.pt',
  'wandb: logged in as alice.smith@example.com',
  'NCCL INFO NET/Socket : Using [0]eth0:10.1.2.3<0> [1]eth1:fe80::42:acff:fe11:2%eth1<0>',
];
export const SECRETS = [
  'xoxb-1234567890',
  'ghp_A1b2C3d4',
  'hf_AbCdEfGh',
  'AKIAIOSFODNN7EXAMPLE',
  'eyJhbGciOiJIUzI1NiJ9',
  'hunter2',
  '0123456789abcdef0123',
  'alice',
  '10.1.2.3',
  'fe80::42',
];
