#!/bin/bash
# dkms add, build and install of dm-barrier for $KVER against the installed
# Debian headers, from the same source files the dm-barrier-dkms package
# ships (debian/dm-barrier-dkms.install).  Nothing on the host changes:
# DKMS's source, build and install trees, its signing key and depmod are
# all under build/dkms, and the kernel is named with -k (never uname -r).
# The module DKMS built is left in build/dkms/out/$KVER/ for the guest test
# install-packages.  Each kernel scripts/kernels unpacked (make kernels)
# gets the same build, install, checks (vermagic, no warning in the build,
# depmod finds it) and uninstall against its headers (dkms
# --kernelsourcedir), as DKMS does on the release the kernel is for: 6.12
# with the host's dkms and gcc-12 (bookworm with bookworm-backports); 7.x,
# which needs gcc-14, with trixie's dkms, kmod and gcc-14 in the build root
# (scripts/kernels chroot), in trees of their own in build/dkms/SERIES.
# That install tree holds the kernel's dm-mod.ko.xz, so DKMS compresses the
# module (.ko.xz) as it would there and depmod resolves its dependency.
. "$(dirname "$0")/lib.sh"

D=$top/build/dkms
rm -rf "$D"
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
name=$(sed -n 's/^PACKAGE_NAME="\(.*\)"/\1/p' dkms.conf)
[ "$name/$ver" = dm-barrier/1.0.0 ] || fail "dkms.conf names $name/$ver"
src=$D/src/$name-$ver
mkdir -p "$src"
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
# set_dkms [SERIES]: DKMS runs on the host, or in SERIES' build root (run:
# the command prefix), with its dkms and install trees in T/tree, T/root.
set_dkms() {
	if [ -n "${1:-}" ]; then
		run=(scripts/kernels chroot "$1") T=$D/$1
	else
		run=() T=$D
	fi
	trees=(--sourcetree "$D/src" --dkmstree "$T/tree" --installtree "$T/root/lib/modules")
}
set_dkms

mktarball() {
	tarball=$D/out/$name-$ver.dkms.tar.gz
	dkms mktarball -m "$name" -v "$ver" -k "$KVER" --archive "$tarball" "${trees[@]}" >"$D/mktarball.log" 2>&1 ||
		{ cat "$D/mktarball.log"; fail "dkms mktarball"; }
	# The listing first: with pipefail, grep -q's early exit would fail tar.
	list=$(tar -tzf "$tarball")
	grep -q "$KVER/x86_64/module/dm-barrier.ko" <<<"$list" || fail "$tarball holds no module for $KVER"
}

dkms_add() {
	log "dkms add $name/$ver${run[*]:+ (${run[*]})}"
	mkdir -p "$T/tree"
	"${run[@]}" dkms add -m "$name" -v "$ver" "${trees[@]}" >"$D/add.log" 2>&1 ||
		{ cat "$D/add.log"; fail "dkms add"; }
}

# dkms_kernel KVER [KDIR]: build, install, check and uninstall for KVER
# (headers in KDIR when they are not /lib/modules/KVER/build).
dkms_kernel() {
	local KVER=$1 ksrc=() mlog ko vermagic dep
	[ -n "${2:-}" ] && ksrc=(--kernelsourcedir "$2")
	mkdir -p "$T/root/lib/modules/$KVER" "$D/out/$KVER"
	log "dkms build / install $name/$ver -k $KVER${2:+ (headers in $2)}${run[*]:+ (${run[*]})}"
	"${run[@]}" dkms build -m "$name" -v "$ver" -k "$KVER" "${ksrc[@]}" "${trees[@]}" >"$D/build.log" 2>&1 ||
		{ cat "$D/build.log"; cat "$T/tree/$name/$ver/build/make.log" 2>/dev/null; fail "dkms build"; }
	"${run[@]}" dkms install -m "$name" -v "$ver" -k "$KVER" "${ksrc[@]}" --no-depmod "${trees[@]}" \
		>"$D/install.log" 2>&1 || { cat "$D/install.log"; fail "dkms install"; }
	st=$("${run[@]}" dkms status -m "$name" -v "$ver" -k "$KVER" "${trees[@]}")
	case "$st" in *": installed"*) ;; *) fail "dkms status: $st" ;; esac
	# dm-barrier.ko, or .ko.xz where the kernel's modules are compressed.
	ko=$(ls "$T/root/lib/modules/$KVER/updates/dkms/dm-barrier.ko"* 2>/dev/null || true)
	[ -f "$ko" ] || fail "dkms install put no $T/root/lib/modules/$KVER/updates/dkms/dm-barrier.ko*"
	vermagic=$("${run[@]}" modinfo -F vermagic "$ko")
	[ "${vermagic%% *}" = "$KVER" ] || fail "$ko: vermagic $vermagic"
	"${run[@]}" modinfo -F description "$ko" | grep -q 'orders barrier bios' || fail "$ko is not dm-barrier"
	mlog=$T/tree/$name/$ver/$KVER/x86_64/log/make.log
	[ -f "$mlog" ] || fail "no DKMS build log $mlog"
	if grep -q 'warning:' "$mlog"; then
		grep 'warning:' "$mlog"
		fail "the DKMS build warns"
	fi
	signer=$("${run[@]}" modinfo -F signer "$ko" || true)
	log "ok: $st; $ko (signer: ${signer:-none})"
	"${run[@]}" depmod -b "$T/root" "$KVER" 2>/dev/null
	dep=$(grep "^updates/dkms/${ko##*/}:" "$T/root/lib/modules/$KVER/modules.dep" || true)
	[ -n "$dep" ] || fail "depmod does not find the DKMS-installed module"
	# With the kernel's dm-mod in the tree, depmod resolves the dependency.
	if [ -n "$(ls "$T/root/lib/modules/$KVER/kernel/drivers/md/dm-mod.ko"* 2>/dev/null)" ]; then
		case "$dep" in *" kernel/drivers/md/dm-mod.ko"*) ;; *) fail "modules.dep: $dep" ;; esac
	fi
	log "ok: vermagic $KVER, no warnings, depmod: $dep"
	cp "$ko" "$D/out/$KVER/"
	# The same build as a DKMS tarball (source and module), as dkms ldtarball
	# takes it: the guest test feeds it to the package's postinst (host kernel).
	if [ -z "${2:-}" ]; then
		mktarball
	fi
	"${run[@]}" dkms uninstall -m "$name" -v "$ver" -k "$KVER" --no-depmod "${trees[@]}" >"$D/uninstall.log" 2>&1 ||
		{ cat "$D/uninstall.log"; fail "dkms uninstall"; }
	[ ! -e "$ko" ] || fail "dkms uninstall left $ko"
}

dkms_remove() {
	"${run[@]}" dkms remove -m "$name" -v "$ver" --all "${trees[@]}" >"$D/remove.log" 2>&1 ||
		{ cat "$D/remove.log"; fail "dkms remove"; }
	st=$("${run[@]}" dkms status "${trees[@]}")
	[ -z "$st" ] || fail "dkms status after remove: $st"
}

# The host's kernel, and the kernels built on the host (6.12).
dkms_add
dkms_kernel "$KVER"
for env in build/kernels/*/env; do
	[ -f "$env" ] || continue
	grep -q '^BUILDROOT=$' "$env" || continue
	# The debug kernel (check-debug) is a test vehicle, not a target.
	grep -q '^SERIES=debug$' "$env" && continue
	dkms_kernel "$(sed -n 's/^KVER=//p' "$env")" "$(sed -n 's/^KDIR=//p' "$env")"
done
dkms_remove

# The kernels built in a build root (7.x): its dkms, with the kernel's own
# sign-file, as on the release the kernel is for.
for env in build/kernels/*/env; do
	[ -f "$env" ] || continue
	grep -q '^BUILDROOT=$' "$env" && continue
	(
		# shellcheck source=/dev/null
		. "$env"
		set_dkms "$SERIES"
		sign_file=$KDIR/scripts/sign-file
		mkdir -p "$T/root/lib/modules/$KVER/kernel/drivers/md"
		cp -l "$MODDIR"/kernel/drivers/md/dm-mod.ko* "$T/root/lib/modules/$KVER/kernel/drivers/md/"
		dkms_add
		dkms_kernel "$KVER" "$KDIR"
		dkms_remove
	)
done
log "ok: dkms uninstall and remove leave nothing; the built modules are in build/dkms/out/*/"
