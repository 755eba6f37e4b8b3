#!/usr/bin/env bash
# The apysup demo: a local incident tracker (a static HTTP server on a free
# loopback port), a manifest pointing the http handler at it, and an agent
# script run natively under full confinement with approvals auto-granted.
#
#   examples/demo/run.sh [APYSUP_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
apysup=${1:-bin/apysup}
work=$(mktemp -d /tmp/apysup-demo.XXXXXX)
server_pid=
cleanup() {
	status=$?
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null || true
		wait "$server_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
	exit "$status"
}
trap cleanup EXIT

# The tracker: Debian's python3.11 serving examples/demo/records on 127.0.0.1, port chosen by the kernel.
/usr/bin/python3.11 -u - "$here" "$work/port" <<'PY' &
import functools, http.server, sys
root, port_file = sys.argv[1], sys.argv[2]
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass
handler = functools.partial(Quiet, directory=root)
server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
open(port_file + ".tmp", "w").write(str(server.server_address[1]))
__import__("os").rename(port_file + ".tmp", port_file)
server.serve_forever()
PY
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
port=$(cat "$work/port")

sed -e "s|@PORT@|$port|g" -e "s|@DB@|$work/notebook.db|g" "$here/manifest.template.json" > "$work/manifest.json"
echo "== Plan $("$apysup" plan seal "$work/manifest.json") =="
echo "== Running examples/demo/agent_task.py (native, approvals: auto) =="
"$apysup" run --plan "$work/manifest.json" --approve auto "$here/agent_task.py"
