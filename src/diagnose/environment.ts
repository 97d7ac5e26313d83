// Where the failing job runs, read from the paste (issue 23 item 4): a hosted notebook (Colab, Kaggle), the
// OS (Windows with its WDDM driver model, WSL, macOS), the accelerator (CUDA, ROCm/HIP, Apple MPS, TPU) and
// the torch version. Advice must hold there: no nvidia-smi kill on a notebook whose GPU is its own, no
// expandable_segments where the allocator has none (PyTorch < 2.1, Windows, MPS), MPS's own watermark.
// Each signal is a fixed string a platform prints (paths, driver names, exception formats), not prose.
// Patterns are bounded and anchored on fixed text (untrusted input, linear).
import { torchVersion } from './torch-version.js';

export interface Environment {
  /** A hosted notebook: the GPU is this session's own, restarting the runtime frees it. */
  notebook?: 'colab' | 'kaggle';
  os?: 'windows' | 'wsl' | 'macos' | 'linux';
  accelerator?: 'cuda' | 'rocm' | 'mps' | 'tpu';
  /** PyTorch [major, minor] as the paste states it. */
  torch?: [number, number];
  /** The job runs in a container whose /dev/shm the launcher sizes: its own flags fix shm (Docker/Podman's
   *  --shm-size, a pod's emptyDir), and a "Process N" listed alone may be this job seen from the host. */
  container?: 'docker' | 'kubernetes';
  /** The signals that decided, as the reply may quote them ("/content/", "C:\\", "MPS backend"). */
  why: string[];
}

// Only the ends of a huge paste are read: these signals sit in paths, banners and the final error.
const WINDOW = 256 * 1024;

const COLAB = /(?:^|[\s"'(])\/content\/|google\.colab|colab\.research\.google\.com|\/usr\/local\/lib\/python3\.\d{1,2}\/dist-packages\/google\/colab/m;
const KAGGLE = /\/kaggle\/(?:working|input|temp)\b|\/opt\/conda\/lib\/python3\.\d{1,2}\/site-packages\/kaggle/;
// A drive-letter path with a backslash (C:\Users\..., D:\ComfyUI_windows_portable\...), a Windows executable,
// WDDM in nvidia-smi's table, or Windows' own Python paths.
const WINDOWS = /\b[A-Z]:\\{1,2}[\w .()$-]{1,60}\\|\b[\w-]{1,60}\.exe\b|\bWDDM\b|\bPython3\d{1,2}\\(?:lib|Lib)\\/;
const WSL = /microsoft-standard-WSL2?|(?:^|[\s"'(])\/mnt\/[c-z]\/|\/usr\/lib\/wsl\/lib/m;
const MACOS = /\bmacOS[- ]\d{1,2}|\bDarwin Kernel\b|\/opt\/homebrew\/|\/Library\/Frameworks\/Python\.framework\/|-arm64-arm-64bit/;
const MPS = /MPS backend out of memory|\bPYTORCH_MPS_HIGH_WATERMARK_RATIO\b|device(?:=|\s{0,2}:\s{0,2})['"]?mps['"]?|\bmps:0\b|torch\.backends\.mps/;
// XLA's own error tag on a TPU ("XLA:TPU compile permanent error") and Cloud TPU's accelerator names ("TPU v2-8", "v3-8 TPU").
const TPU =
  /\blibtpu\b|\btorch_xla\b|\bxla:\d\b|\bTpuDevice\b|\bTPU_\d{1,3}\(|jax\.devices\(\)[^\n]{0,40}TPU|\bXLA:TPU\b|\bTPU[ _-]?v[2-7][a-z]?(?:[-_]\d{1,4})?\b|\bv[2-7][a-z]?-\d{1,4} TPU\b/;
// A container launched from the paste (docker/podman/nvidia-docker run, Docker's version banner, NGC and
// vLLM/SGLang images) or a Kubernetes pod (kubectl, a pod spec's emptyDir, the service account mount).
const DOCKER =
  /(?:^|[\s$>`'"])(?:sudo\s{1,3})?(?:docker|podman|nvidia-docker)\s{1,3}(?:run|exec|compose)\b|\bDocker version \d|\bnvcr\.io\/|\/\.dockerenv\b|\b(?:vllm\/vllm-openai|lmsysorg\/sglang):/m;
// Docker names a container's host after its short id (12 hex digits) unless told otherwise, so that id where a
// host name is printed is a container: torch elastic's failure record ("host : 494f2fcc8a8d"), a shell prompt
// ("root@c8680db4aa07:"), NCCL's line prefix ("e66aa18dc444:3171:3171 [0]"). A letter and a digit both: not a number.
const HEX_ID = '(?=[0-9a-f]{0,11}[a-f])(?=[0-9a-f]{0,11}[0-9])[0-9a-f]{12}';
const DOCKER_HOSTNAME = new RegExp(`^\\s{0,8}host\\s{0,8}:\\s{0,4}${HEX_ID}\\s{0,4}$|\\broot@${HEX_ID}:|^${HEX_ID}:\\d{1,9}:\\d{1,9} \\[\\d{1,3}\\]`, 'm');
// Docker Compose's own line when a service's container stops ("tmpitprkm4o_algo-1-xxsq9_1 exited with code 1",
// v2: "web-1 exited with code 137"): the run was a container.
const COMPOSE_EXITED = /^[\w.-]{1,80}[-_]\d{1,3} exited with code \d{1,3}\s{0,4}$/m;
// Docker mounts a tmpfs named "shm" of 64 MB at /dev/shm unless told otherwise: a pasted df line of it is a container.
const DOCKER_SHM_MOUNT = /^shm\s{1,20}(?:64M|65536)\s[^\n]{0,80}\/dev\/shm\s{0,4}$/m;
// The managed services' and the platform's own names count too ("deployed on Kubernetes engine", GKE, a k8s pod):
// a pod has no --shm-size, so the place decides the flag even when the report also quotes a docker command.
const KUBERNETES =
  /(?:^|[\s$>`'"])kubectl\s{1,3}\w|\bemptyDir\s{0,2}:|\/var\/run\/secrets\/kubernetes\.io\b|\bKUBERNETES_SERVICE_HOST\b|\bKubernetes (?:engine|cluster|pod)s?\b|\bk8s\b|\b(?:GKE|EKS|AKS|OpenShift)\b/m;
const ROCM = /\bHIP out of memory\b|\bhipError\w{0,40}|\bHIP runtime version: \d|\+rocm\d|\bAMD Instinct\b|\brocm-smi\b|HIP_VISIBLE_DEVICES/;

/** The environment the paste shows; fields it gives no signal for stay undefined. */
export function detectEnvironment(text: string): Environment {
  const t = text.length > 2 * WINDOW ? text.slice(0, WINDOW) + '\n' + text.slice(-WINDOW) : text;
  const env: Environment = { why: [] };
  const hit = (re: RegExp) => {
    const m = re.exec(t);
    if (m) env.why.push(m[0].trim().slice(0, 60));
    return m !== null;
  };
  if (hit(COLAB)) env.notebook = 'colab';
  else if (hit(KAGGLE)) env.notebook = 'kaggle';
  if (hit(WSL)) env.os = 'wsl';
  else if (hit(WINDOWS)) env.os = 'windows';
  else if (hit(MACOS)) env.os = 'macos';
  else if (env.notebook) env.os = 'linux';
  if (hit(MPS)) {
    env.accelerator = 'mps';
    env.os ??= 'macos';
  } else if (hit(TPU)) env.accelerator = 'tpu';
  else if (hit(ROCM)) env.accelerator = 'rocm';
  if (hit(KUBERNETES)) env.container = 'kubernetes';
  else if (hit(DOCKER) || hit(DOCKER_HOSTNAME) || hit(DOCKER_SHM_MOUNT) || hit(COMPOSE_EXITED)) env.container = 'docker';
  const v = torchVersion(t);
  if (v) env.torch = v;
  return env;
}

/** PyTorch's expandable segments exist only from 2.1, on Linux CUDA (not Windows, not MPS). */
export function expandableSegmentsAvailable(env: Environment | undefined): boolean {
  if (!env) return true;
  if (env.os === 'windows' || env.accelerator === 'mps' || env.accelerator === 'tpu') return false;
  if (env.torch && (env.torch[0] < 2 || (env.torch[0] === 2 && env.torch[1] < 1))) return false;
  return true;
}

/** Why expandable segments are not available, as the reply says it ("PyTorch 1.13", "Windows"). */
export function expandableUnavailableWhy(env: Environment): string {
  if (env.os === 'windows') return 'Windows';
  if (env.accelerator === 'mps') return 'Apple MPS';
  if (env.accelerator === 'tpu') return 'TPU / XLA';
  return env.torch ? `PyTorch ${env.torch[0]}.${env.torch[1]}` : 'PyTorch < 2.1';
}
