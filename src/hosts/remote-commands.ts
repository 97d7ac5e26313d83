// The ONLY commands gpu-doctor ever runs on a GPU host. Every one is a constant; the single variable
// part (the pid list for `ps`) is built from integers the nvidia-smi parser produced, validated here.
// Nothing from chat, config or host output is ever spliced into a command string.
import { SMI_APPS_QUERY_FIELDS, SMI_GPU_QUERY_FIELDS } from '../readings/nvidia-smi-csv.js';
import { SMI_HEALTH_FIELD_SETS } from '../readings/nvidia-smi-health.js';

export const SECTION_MARK = '@@GPU-DOCTOR@@';
/** Seconds the remote `timeout` gives each nvidia-smi call (it hangs on GPUs with Xid faults). */
export const REMOTE_SMI_TIMEOUT_S = 10;

export const SMI_GPU_ARGS = [`--query-gpu=${SMI_GPU_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'] as const;
export const SMI_APPS_ARGS = [`--query-compute-apps=${SMI_APPS_QUERY_FIELDS.join(',')}`, '--format=csv,noheader,nounits'] as const;
/** The health query's field lists, newest names first, as the shell loop tries them. */
export const SMI_HEALTH_FIELD_LISTS = SMI_HEALTH_FIELD_SETS.map((set) => set.join(','));
export const SMI_HEALTH_FORMAT = '--format=csv,noheader,nounits';
/** What nvidia-smi says of a field its driver does not know (`Field "x" is not a valid field to query.`). */
export const SMI_UNKNOWN_FIELD_TEXT = 'is not a valid field to query';
export const FREE_ARGS = ['-b'] as const;
export const PS_FORMAT_ARGS = ['-o', 'pid=,user=,etimes=,pcpu=,rss=,args='] as const;
export const MAX_PS_PIDS = 512;
/** What marks a cgroup line as a container's: its 64-hex id (a constant pattern, double-quoted in the script). */
export const CGROUP_CONTAINER_ID = '[0-9a-f]{64}';

/**
 * One exec per host per request: both nvidia-smi queries (and the health query), `free -b`, and `ps` for the pids the
 * compute-apps query listed, each followed by a marker line carrying its exit status, so one round
 * trip gives everything `status`, `mem` and the leak-watch sampler need.
 *
 * The pids reach `ps` on the host itself: the apps output is cut to its pid column, only lines of
 * 1-10 digits pass `grep -x`, and xargs hands them to ps as one comma-joined argument. Nothing from
 * the bot's side is spliced in; the string is a constant. The whole script runs under `sh -c` so a
 * login shell that is not POSIX (fish, tcsh) still runs it.
 */
/**
 * First in every script: a watchdog that ends the command's process group when the bot closes the
 * channel (sshd then closes the command's stdin). The bot never sends EOF on stdin, so this fires only
 * when the bot gave up (timeout, output cap) or the connection dropped: a hung `nvidia-smi` no longer
 * keeps its session, one of the host's MaxSessions, open until the remote `timeout`. After a normal end
 * sshd closes stdin too and the watchdog ends with nothing left to kill. sshd's `signal` request would
 * not do: it refuses to signal forced-command sessions.
 */
export const CHANNEL_WATCHDOG = `exec 3<&0; (cat >/dev/null; kill 0) <&3 >/dev/null 2>&1 & exec 3<&-; `;

/** `nvidia-smi -L`'s mark of a MIG device line (`  MIG 1g.18gb  Device  3: ...`); a UUID `MIG-...` has no space. */
export const SMI_MIG_LINE_TEXT = 'MIG ';

/**
 * MIG instances where a GPU has MIG on: `nvidia-smi -L` (each device's profile, e.g. 3g.40gb) and, only when
 * it lists a MIG device, the default table (each instance's GI / CI ids and memory, and the GI / CI of each
 * process). A host without MIG pays the one `-L` call; its `mig` section is empty and no `miglist` comes.
 */
const MIG_SCRIPT =
  `l=$(timeout ${REMOTE_SMI_TIMEOUT_S} nvidia-smi -L 2>&1); s=$?; case "$l" in *"${SMI_MIG_LINE_TEXT}"*) printf "%s\\n" "$l"; echo "${SECTION_MARK} miglist $s"; ` +
  `timeout ${REMOTE_SMI_TIMEOUT_S} nvidia-smi 2>&1; s=$? ;; esac; echo "${SECTION_MARK} mig $s"; `;

/** AMD GPUs (ROCm 5 and later): memory, utilisation and names as JSON, and the KFD process table. */
export const ROCM_GPU_ARGS = ['--showproductname', '--showuse', '--showmeminfo', 'vram', '--json'] as const;
export const ROCM_PIDS_ARGS = ['--showpids'] as const;
/** rocm-smi with no arguments: its concise table, where temperature, power and its cap are (the JSON call has neither). */
export const ROCM_TABLE_ARGS: readonly string[] = [];

/**
 * Where nvidia-smi is not installed (exit 127) and rocm-smi is: its GPU reading, its concise table (temperature and
 * power) and its process table, whose rows' first cells (digits only pass, as for nvidia-smi's pids) become the pid
 * list `ps` and the cgroup lines read.
 */
const ROCM_SCRIPT =
  `if [ "$g" = 127 ]; then timeout ${REMOTE_SMI_TIMEOUT_S} rocm-smi ${ROCM_GPU_ARGS.join(' ')} 2>&1; echo "${SECTION_MARK} rocm $?"; ` +
  `timeout ${REMOTE_SMI_TIMEOUT_S} rocm-smi${ROCM_TABLE_ARGS.map((a) => ` ${a}`).join('')} 2>&1; echo "${SECTION_MARK} rocmtable $?"; ` +
  `r=$(timeout ${REMOTE_SMI_TIMEOUT_S} rocm-smi ${ROCM_PIDS_ARGS.join(' ')} 2>&1); s=$?; printf "%s\\n" "$r"; echo "${SECTION_MARK} rocmpids $s"; ` +
  `a=$(printf "%s\\n" "$r" | tr -s " \\t" ",," | sed "s/^/x,/"); fi; `;

const STATUS_SCRIPT =
  CHANNEL_WATCHDOG +
  `LC_ALL=C; export LC_ALL; ` +
  `timeout ${REMOTE_SMI_TIMEOUT_S} nvidia-smi ${SMI_GPU_ARGS.join(' ')} 2>&1; g=$?; echo "${SECTION_MARK} gpu $g"; ` +
  `if [ "$g" = 0 ]; then ${MIG_SCRIPT}fi; ` +
  // Power, ECC, pending retirements / remaps and clock reasons: a query of their own, run only when the
  // memory query worked, so an older driver that does not know a field loses these columns, not the reading.
  // A field list the driver refuses by name is followed by the next (older names); any other failure
  // (a hang, a lost GPU) ends the loop. The section's first line says which list answered.
  `s=1; if [ "$g" = 0 ]; then for f in ${SMI_HEALTH_FIELD_LISTS.join(' ')}; do h=$(timeout ${REMOTE_SMI_TIMEOUT_S} nvidia-smi --query-gpu=$f ${SMI_HEALTH_FORMAT} 2>&1); s=$?; [ $s = 0 ] && break; case "$h" in *"${SMI_UNKNOWN_FIELD_TEXT}"*) ;; *) break ;; esac; done; printf "%s\\n" "$f"; printf "%s\\n" "$h"; fi; echo "${SECTION_MARK} health $s"; ` +
  `a=$(timeout ${REMOTE_SMI_TIMEOUT_S} nvidia-smi ${SMI_APPS_ARGS.join(' ')} 2>&1); s=$?; [ -n "$a" ] && printf "%s\\n" "$a"; echo "${SECTION_MARK} apps $s"; ` +
  ROCM_SCRIPT +
  `free ${FREE_ARGS.join(' ')} 2>&1; echo "${SECTION_MARK} free $?"; ` +
  `printf "%s\\n" "$a" | cut -d, -f2 | tr -d " " | grep -xE "[0-9]{1,10}" | head -n ${MAX_PS_PIDS} | paste -sd, - | xargs -r ps ${PS_FORMAT_ARGS.join(' ')} -p 2>&1; echo "${SECTION_MARK} ps $?"; ` +
  // The container of each listed pid the host shows: the first line of /proc/PID/cgroup naming a
  // 64-hex container id (docker, containerd, CRI-O, podman, kubepods), cut to 300 characters. The pids
  // are the same digits-only list; a pid without a /proc entry (another pid namespace) prints nothing.
  `printf "%s\\n" "$a" | cut -d, -f2 | tr -d " " | grep -xE "[0-9]{1,10}" | head -n ${MAX_PS_PIDS} | while read -r p; do l=$(grep -m1 -E "${CGROUP_CONTAINER_ID}" /proc/$p/cgroup 2>/dev/null | cut -c1-300); [ -n "$l" ] && echo "$p $l"; done; echo "${SECTION_MARK} cgroup 0"; ` +
  // Whether /proc hides other users' processes from the bot's account (hidepid): then a pid ps does not
  // show may be anyone's, not a container's.
  `grep -E "^[^ ]+ /proc proc " /proc/mounts 2>/dev/null | grep -oE "hidepid=[a-z0-9]+" | head -n 1; echo "${SECTION_MARK} proc 0"`;
export const STATUS_COMMAND = `sh -c '${STATUS_SCRIPT}'`;

/** `mem`: `free -b`, and the MIG instances' memory where a GPU has MIG on (nothing more where nvidia-smi is absent). */
export const MEM_COMMAND = `sh -c '${CHANNEL_WATCHDOG}LC_ALL=C; export LC_ALL; free ${FREE_ARGS.join(' ')} 2>&1; echo "${SECTION_MARK} free $?"; ${MIG_SCRIPT.trimEnd()}'`;

/** The comma-joined pid list for a local `ps -p`; throws on anything but safe positive integers. */
export function pidList(pids: readonly number[]): string {
  if (pids.length === 0 || pids.length > MAX_PS_PIDS) throw new Error(`ps needs 1..${MAX_PS_PIDS} pids`);
  for (const p of pids) if (typeof p !== 'number' || !Number.isSafeInteger(p) || p <= 0) throw new Error('pid is not a positive integer');
  return [...new Set(pids)].map((p) => String(p)).join(',');
}

/** Every command string the SSH layer may send, for the audit test. */
export const FIXED_COMMAND_PATTERNS: RegExp[] = [new RegExp(`^${escape(STATUS_COMMAND)}$`), new RegExp(`^${escape(MEM_COMMAND)}$`)];

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
