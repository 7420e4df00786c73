#!/bin/bash
# dkms add, build and install of dm-barrier for $KVER against the installed
# Debian headers, from the same source files the dm-barrier-dkms package
# ships (debian/dm-barrier-dkms.install).  Nothing on the host changes:
# DKMS's source, build and install trees, its signing key and depmod are
# all under build/dkms, and the kernel is named with -k (never uname -r).
# The module DKMS built is left in build/dkms/out/$KVER/ for the guest test
# install-packages.  A kernel scripts/kernels unpacked (make kernels) and
# built on the host (6.12, gcc-12) gets the same build, install and
# uninstall against its headers (dkms --kernelsourcedir); 7.x, which needs
# the trixie build root's gcc-14, is not built by DKMS here.
. "$(dirname "$0")/lib.sh"

D=$top/build/dkms
rm -rf "$D"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' dkms.conf)
[ "$name/$ver" = dm-barrier/1.0.0 ] || fail "dkms.conf names $name/$ver"
src=$D/src/$name-$ver
mkdir -p "$src" "$D/tree"
cp dkms.conf "$src/"
# What the package puts in /usr/src/dm-barrier-<version>/.
sed -n "s|^\(dm-target/[^ ]*\) usr/src/$name-$ver/\(.*\)|\1 \2|p" debian/dm-barrier-dkms.install |
	while read -r f dir; do
		mkdir -p "$src/$dir"
		cp "$f" "$src/$dir"
	done
[ -f "$src/dm-target/dm-barrier.c" ] || fail "no module source in $src"

# Sign as a real machine would, with a key of our own.
sign_file=$(ls /usr/lib/linux-kbuild-*/scripts/sign-file 2>/dev/null | head -n 1 || true)
export sign_file mok_signing_key=$D/mok.key mok_certificate=$D/mok.pub
trees=(--sourcetree "$D/src" --dkmstree "$D/tree" --installtree "$D/root/lib/modules")

mktarball() {
	tarball=$D/out/$name-$ver.dkms.tar.gz
	dkms mktarball -m "$name" -v "$ver" -k "$KVER" --archive "$tarball" "${trees[@]}" >"$D/mktarball.log" 2>&1 ||
		{ cat "$D/mktarball.log"; fail "dkms mktarball"; }
	# The listing first: with pipefail, grep -q's early exit would fail tar.
	list=$(tar -tzf "$tarball")
	grep -q "$KVER/x86_64/module/dm-barrier.ko" <<<"$list" || fail "$tarball holds no module for $KVER"
}

log "dkms add $name/$ver"
dkms add -m "$name" -v "$ver" "${trees[@]}" >"$D/add.log" 2>&1 || { cat "$D/add.log"; fail "dkms add"; }

# dkms_kernel KVER [KDIR]: build, install, check and uninstall for KVER
# (headers in KDIR when they are not /lib/modules/KVER/build).
dkms_kernel() {
	local KVER=$1 ksrc=()
	[ -n "${2:-}" ] && ksrc=(--kernelsourcedir "$2")
	mkdir -p "$D/root/lib/modules/$KVER" "$D/out/$KVER"
	log "dkms build / install $name/$ver -k $KVER${2:+ (headers in $2)}"
	dkms build -m "$name" -v "$ver" -k "$KVER" "${ksrc[@]}" "${trees[@]}" >"$D/build.log" 2>&1 ||
		{ cat "$D/build.log"; cat "$D/tree/$name/$ver/build/make.log" 2>/dev/null; fail "dkms build"; }
	dkms install -m "$name" -v "$ver" -k "$KVER" "${ksrc[@]}" --no-depmod "${trees[@]}" >"$D/install.log" 2>&1 ||
		{ cat "$D/install.log"; fail "dkms install"; }
	st=$(dkms status -m "$name" -v "$ver" -k "$KVER" "${trees[@]}")
	case "$st" in *": installed"*) ;; *) fail "dkms status: $st" ;; esac
	ko=$D/root/lib/modules/$KVER/updates/dkms/dm-barrier.ko
	[ -f "$ko" ] || fail "dkms install put no $ko"
	[ "$(modinfo -F vermagic "$ko" | cut -d' ' -f1)" = "$KVER" ] || fail "$ko: vermagic $(modinfo -F vermagic "$ko")"
	modinfo -F description "$ko" | grep -q 'orders barrier bios' || fail "$ko is not dm-barrier"
	if grep -q 'warning:' "$D/tree/$name/$ver/$KVER/x86_64/log/make.log"; then
		grep 'warning:' "$D/tree/$name/$ver/$KVER/x86_64/log/make.log"
		fail "the DKMS build warns"
	fi
	signer=$(modinfo -F signer "$ko" || true)
	log "ok: $st; $ko (signer: ${signer:-none})"
	depmod -b "$D/root" "$KVER" 2>/dev/null
	grep -q '^updates/dkms/dm-barrier.ko:' "$D/root/lib/modules/$KVER/modules.dep" ||
		fail "depmod does not find the DKMS-installed module"
	cp "$ko" "$D/out/$KVER/dm-barrier.ko"
	# The same build as a DKMS tarball (source and module), as dkms ldtarball
	# takes it: the guest test feeds it to the package's postinst (host kernel).
	if [ -z "${2:-}" ]; then
		mktarball
	fi
	dkms uninstall -m "$name" -v "$ver" -k "$KVER" --no-depmod "${trees[@]}" >"$D/uninstall.log" 2>&1 ||
		{ cat "$D/uninstall.log"; fail "dkms uninstall"; }
	[ ! -e "$ko" ] || fail "dkms uninstall left $ko"
}

dkms_kernel "$KVER"
for env in build/kernels/*/env; do
	[ -f "$env" ] || continue
	grep -q '^BUILDROOT=$' "$env" || continue
	# The debug kernel (check-debug) is a test vehicle, not a target.
	grep -q '^SERIES=debug$' "$env" && continue
	dkms_kernel "$(sed -n 's/^KVER=//p' "$env")" "$(sed -n 's/^KDIR=//p' "$env")"
done

dkms remove -m "$name" -v "$ver" --all "${trees[@]}" >"$D/remove.log" 2>&1 ||
	{ cat "$D/remove.log"; fail "dkms remove"; }
[ -z "$(dkms status "${trees[@]}")" ] || fail "dkms status after remove: $(dkms status "${trees[@]}")"
log "ok: dkms uninstall and remove leave nothing; the built modules are in build/dkms/out/*/"
