#!/bin/bash
# Every page in docs/man renders without a warning: mandoc -T lint, groff
# -ww, and man -l as a reader runs it.  Control: a page with known faults
# must be reported by the same checks.
. "$(dirname "$0")/lib.sh"

out=$top/build/install-test/man
rm -rf "$out"
mkdir -p "$out"

# lint PAGE: prints what is wrong, fails if anything is.
lint() {
	local page=$1 msgs
	msgs=$(mandoc -T lint -W warning "$page" 2>&1)
	msgs+=$(groff -ww -z -t -man "$page" 2>&1)
	msgs+=$(MANWIDTH=80 LC_ALL=C.UTF-8 man --warnings=w -l "$page" 2>&1 >/dev/null)
	[ -z "$msgs" ] || { echo "$msgs"; return 1; }
}

n=0
for page in docs/man/*.[1-9]; do
	lint "$page" || fail "$page has warnings (above)"
	n=$((n + 1))
	log "ok: $page"
done
[ $n -ge 5 ] || fail "only $n man pages in docs/man"

# The control: a wide table, an unknown macro and an empty paragraph.
cat >"$out/bad.7" <<'MAN'
.TH BAD 7 2026-01-01 "dm-barrier" "Test"
.SH NAME
bad \- a page with faults
.SH DESCRIPTION
.PP
.PP
.XX unknown macro
.TS
l l.
aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa	bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb
.TE
MAN
if lint "$out/bad.7" >"$out/bad.msgs"; then fail "control: a faulty page passed the lint"; fi
log "ok: control: a faulty page is reported ($(wc -l <"$out/bad.msgs") lines)"
