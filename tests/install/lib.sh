# shellcheck shell=bash
# Helpers for the host-side install checks (tests/install/*.sh): run from
# the top of the tree by tests/install/run or alone.
set -euo pipefail

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$top"
KVER=${KVER:-$(scripts/kver)}
export KVER

log() { printf '%s %s\n' "$(date +%T)" "$*"; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# copy_tree DEST: the tree as git sees it (tracked and new files, without
# ignored ones such as build/), so a package or DKMS build starts clean.
copy_tree() {
	local dest=$1 f
	mkdir -p "$dest"
	git ls-files -z --cached --others --exclude-standard |
		while IFS= read -r -d '' f; do
			[ -e "$f" ] && printf '%s\0' "$f"
		done | tar --null -T - -cf - | tar -C "$dest" -xf -
}
