#!/bin/bash
# make install DESTDIR=... installs exactly tests/install/files.txt, and what
# it installs works from there (no build-tree rpath, soname links, .pc usable
# for a build, unit pointing at the installed daemon, module for $KVER);
# depmod runs when DESTDIR holds a module tree; make uninstall leaves no file.
. "$(dirname "$0")/lib.sh"

out=$top/build/install-test/destdir
rm -rf "$out"
mkdir -p "$out"
D=$out/root

# listing DIR: every non-directory under DIR, as files.txt writes them.
listing() {
	(cd "$1" && find . ! -type d | sed 's|^\./||' | sort | while read -r f; do
		if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else echo "$f"; fi
	done)
}
# expect_empty DIR WHAT: no file left under DIR.
expect_empty() {
	local left
	left=$(cd "$1" && find . ! -type d | sed 's|^\./||')
	[ -z "$left" ] || { echo "$2 left:"; echo "$left" | sed 's/^/  /'; return 1; }
}

log "make install DESTDIR=$D PREFIX=/usr/local"
make -s install DESTDIR="$D" PREFIX=/usr/local >"$out/install.log" 2>&1 ||
	{ cat "$out/install.log"; fail "make install failed"; }
grep -v '^#' tests/install/files.txt | sed "s/@KVER@/$KVER/" | sort >"$out/want"
listing "$D" >"$out/got"
diff -u "$out/want" "$out/got" || fail "installed files differ from tests/install/files.txt (- wanted, + got)"
log "ok: $(wc -l <"$out/got") files, as listed"

P=$D/usr/local
for f in "$P/sbin/barrierctl" "$P/sbin/barrierd"; do
	if readelf -d "$f" | grep -qE 'RPATH|RUNPATH'; then
		fail "$f keeps an rpath: $(readelf -d "$f" | grep -E 'RPATH|RUNPATH')"
	fi
	readelf -d "$f" | grep -q 'NEEDED.*\[libdmbarrier.so.1\]' || fail "$f does not need libdmbarrier.so.1"
done
readelf -d "$P/lib/libdmbarrier.so.1.0.0" | grep -q 'SONAME.*\[libdmbarrier.so.1\]' ||
	fail "the installed library's soname is not libdmbarrier.so.1"
LD_LIBRARY_PATH=$P/lib "$P/sbin/barrierctl" --help >/dev/null ||
	fail "installed barrierctl --help fails"
LD_LIBRARY_PATH=$P/lib "$P/sbin/barrierd" --help >/dev/null ||
	fail "installed barrierd --help fails"
log "ok: binaries without rpath, linked to the soname, run from the install"

# A program built only from the installed header and .pc.
cat >"$out/use.c" <<'C'
#include <libdmbarrier.h>
#include <stdio.h>
#include <string.h>
int main(void)
{
	enum dmb_mode m;
	if (dmb_mode_from_string("drain", &m) < 0 || strcmp(dmb_mode_to_string(m), "drain"))
		return 1;
	puts("ok");
	return 0;
}
C
pcflags=$(PKG_CONFIG_SYSROOT_DIR=$D PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --cflags --libs libdmbarrier) ||
	fail "pkg-config libdmbarrier fails on the installed .pc"
# shellcheck disable=SC2086
cc -std=c11 -Wall -Werror -o "$out/use" "$out/use.c" $pcflags || fail "cannot build against the installed header/.pc ($pcflags)"
[ "$(LD_LIBRARY_PATH=$P/lib "$out/use")" = ok ] || fail "program linked to the installed library fails"
log "ok: builds and runs against the installed header, .pc and library ($pcflags)"

grep -qx 'ExecStart=/usr/local/sbin/barrierd' "$D/lib/systemd/system/barrierd.service" ||
	fail "barrierd.service: $(grep ExecStart= "$D/lib/systemd/system/barrierd.service")"
[ "$(modinfo -F vermagic "$D/lib/modules/$KVER/updates/dm-barrier.ko" | cut -d' ' -f1)" = "$KVER" ] ||
	fail "installed module is not for $KVER"
grep -q 'depmod left to the system' "$out/install.log" || fail "depmod ran on a staging tree"
log "ok: unit runs /usr/local/sbin/barrierd; module for $KVER; no depmod on a staging tree"

log "make uninstall"
make -s uninstall DESTDIR="$D" PREFIX=/usr/local >"$out/uninstall.log" 2>&1 ||
	{ cat "$out/uninstall.log"; fail "make uninstall failed"; }
expect_empty "$D" "make uninstall" || fail "make uninstall left files"
log "ok: make uninstall left no file"

# Negative control: the same checks catch a file too many, and a changed
# configuration survives uninstall (and is then reported).
make -s install DESTDIR="$D" PREFIX=/usr/local >/dev/null 2>&1
touch "$P/lib/stray"
listing "$D" >"$out/got2"
if diff -q "$out/want" "$out/got2" >/dev/null; then fail "control: a stray file went unnoticed"; fi
echo "# changed" >>"$D/etc/barrierd.conf"
make -s uninstall DESTDIR="$D" PREFIX=/usr/local >/dev/null 2>&1
[ -f "$D/etc/barrierd.conf" ] || fail "make uninstall removed a changed barrierd.conf"
if expect_empty "$D" control >/dev/null; then fail "control: files left went unnoticed"; fi
rm -rf "$D"
log "ok: controls: a stray file is reported; a changed barrierd.conf is kept"

# With a module tree in DESTDIR (an image being built), depmod runs there.
M=$out/modroot/lib/modules/$KVER
mkdir -p "$M"
: >"$M/modules.order"; : >"$M/modules.builtin"; : >"$M/modules.builtin.modinfo"
make -s install-module DESTDIR="$out/modroot" >/dev/null || fail "install-module into a module tree"
grep -q '^updates/dm-barrier.ko:' "$M/modules.dep" || fail "depmod did not index updates/dm-barrier.ko"
make -s uninstall-module DESTDIR="$out/modroot" >/dev/null || fail "uninstall-module"
if grep -q 'dm-barrier' "$M/modules.dep"; then fail "modules.dep still lists dm-barrier after uninstall"; fi
log "ok: depmod indexes the module in a module tree and forgets it on uninstall"
