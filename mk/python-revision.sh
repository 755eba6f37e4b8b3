#!/bin/bash
# Installs the host's python3.11 (the native guest's interpreter and
# standard library) at the Debian revision the WASI build is built from
# (python/wasi/build.sh --print-python-revision), so that both backends run
# one standard library; the wazero backend refuses to run while they differ
# (wasi_python_revision_mismatch). Run by `make deps`.
#
# Every installed binary package of the python3.11 source moves with it
# (python3.11-dev, libpython3.11-testsuite, ...): apt requires their versions
# to be equal. This may downgrade a newer revision from bookworm-security: the
# revision is pinned in build.sh, whose source is fetchable (RATIONALE.md).
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
rev=$("$here/../python/wasi/build.sh" --print-python-revision)
sudo=${SUDO:-}

# The packages the native guest needs, CPython's test modules (make
# regrtest), and every other installed one of the python3.11 source.
wanted="python3.11 python3.11-minimal libpython3.11-minimal libpython3.11-stdlib libpython3.11-testsuite"
installed=$(dpkg-query -W -f='${db:Status-Abbrev} ${Package} ${source:Package}\n' 2>/dev/null |
	awk '$1 == "ii" && $3 == "python3.11" { print $2 }')
stale=()
for p in $(printf '%s\n' $wanted $installed | sort -u); do
	v=$(dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$p" 2>/dev/null || true)
	[[ $v == "ii  $rev" ]] || stale+=("$p=$rev")
done
[[ ${#stale[@]} -eq 0 ]] && exit 0

echo "make deps: python3.11 packages to $rev (the WASI build's revision):${stale[*]/#/ }"
install() {
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends --allow-downgrades "${stale[@]}"
}
install || { $sudo apt-get update -qq && install; } || {
	echo "make deps: python3.11 $rev is not in the archive: move PY_SRC_VERSION in python/wasi/build.sh to a revision it serves (apt-cache policy python3.11), then make deps wasi-python" >&2
	exit 1
}
