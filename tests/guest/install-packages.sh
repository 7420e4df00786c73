#!/bin/bash
# The products of `make check-install` on a running kernel:
#  1. the module DKMS built on the host (build/dkms/out/$KVER, signed with
#     DKMS's key) loads instead of the project's build and carries barriers;
#  2. the five .deb packages (build/deb) install with dpkg -i, maintainer
#     scripts and all, into a copy-on-write root: an overlay of the guest's
#     read-only root (the host's dpkg database and dependencies below, tmpfs
#     above), chrooted into.  The guest root itself is read-only 9p (only
#     /etc and the module tree are overlays), so this is how a package
#     install can happen here.  dm-barrier-dkms's postinst runs DKMS for the
#     running kernel.  Compiling the module under TCG takes ~2 minutes, so
#     by default the postinst is handed the host's DKMS build as a DKMS
#     tarball (/usr/share/dm-barrier-dkms/dm-barrier-1.0.0.dkms.tar.gz, the
#     binary-distribution path of common.postinst: dkms ldtarball, then
#     install and depmod); DMB_DKMS_BUILD=1 makes it compile in the guest
#     instead.  Then the packaged barrierctl, on the packaged libdmbarrier,
#     creates a mapping (the kernel loads the DKMS module for the table:
#     the only dm-barrier.ko in that root; the kernel's modprobe helper is
#     pointed into the root for that, as it would run there on a real
#     install) and shows its status; barrierd.service,
#     its D-Bus and udev files are in place and the unit is enabled.
# Negative control: before the packages are installed, the root has no
# barrierctl, no barrierd.service and no dm-barrier.ko, so what is found
# after is the packages' doing.
# vm: ide ahci
# timeout: 240
# env: DMB_DKMS_BUILD
source "$PROJECT/tests/vm/lib.sh"

ko=$B/dkms/out/$KVER/dm-barrier.ko
debs=("$B"/deb/*.deb)
[ -f "$ko" ] && [ -e "${debs[0]}" ] || skip "no build/dkms or build/deb: run make check-install first"

# ------------------------------------------------ 1. the host DKMS module
if grep -q '^dm_barrier ' /proc/modules; then rmmod dm_barrier; fi
expect_eq "signer of $ko" "$(modinfo -F signer "$ko")" "DKMS module signing key"
modprobe dm-mod
insmod "$ko"
grep -q '^dm_barrier ' /proc/modules || fail "insmod $ko did not load dm_barrier"
dmsetup targets | has -E '^barrier +v1\.0\.0$' || fail "dmsetup targets: $(dmsetup targets | tr '\n' ' ')"
make_barrier dkms "$DISK_IDE"
dsync_write /dev/mapper/dkms 0 || fail "O_DSYNC write through the DKMS module failed"
[ "$(bstatus dkms barriers)" -ge 1 ] && [ "$(bstatus dkms flushes)" -ge 1 ] ||
	fail "DKMS module status: $(dmsetup status dkms)"
log "ok: host-DKMS-built module loaded: $(dmsetup status dkms)"
dmsetup remove dkms
rmmod dm_barrier

# ------------------------------------------------ 2. the packages
R=$WORK/root
mkdir -p "$WORK/ov/upper" "$WORK/ov/work" "$R"
mount -t overlay overlay -o "lowerdir=/,upperdir=$WORK/ov/upper,workdir=$WORK/ov/work" "$R"
mount -t proc proc "$R/proc"
mount --bind /sys "$R/sys"
mount --bind /dev "$R/dev"
mount -t tmpfs tmpfs "$R/run"
mount -t tmpfs tmpfs "$R/tmp"
mount -t tmpfs tmpfs "$R/var/lib/dkms"
undo() {
	[ -z "${old_modprobe:-}" ] || echo "$old_modprobe" >/proc/sys/kernel/modprobe
	chroot "$R" barrierctl remove pkg >/dev/null 2>&1 || true
	umount "$R/var/lib/dkms" "$R/tmp" "$R/run" "$R/dev" "$R/sys" "$R/proc" "$R" 2>/dev/null || true
}
trap undo EXIT

# The control: none of it is there before.
[ ! -e "$R/usr/sbin/barrierctl" ] && [ ! -e "$R/lib/systemd/system/barrierd.service" ] ||
	fail "the root has barrierctl or barrierd.service before the packages"
[ -z "$(find "$R/lib/modules/$KVER" -name 'dm-barrier.ko*')" ] ||
	fail "the root's module tree has a dm-barrier.ko before the packages"
chroot "$R" dpkg-query -W barrierd >/dev/null 2>&1 && fail "barrierd is already known to dpkg"

mkdir -p "$R/tmp/debs"
cp "$B"/deb/*.deb "$R/tmp/debs/"
rm -f "$R"/tmp/debs/*-dbgsym_*.deb
tarball=$B/dkms/out/dm-barrier-1.0.0.dkms.tar.gz
if [ "${DMB_DKMS_BUILD:-0}" != 1 ]; then
	[ -f "$tarball" ] || skip "no $tarball: run make check-install first"
	mkdir -p "$R/usr/share/dm-barrier-dkms"
	cp "$tarball" "$R/usr/share/dm-barrier-dkms/"
fi
log "dpkg -i $(cd "$R/tmp/debs" && echo *.deb)"
# A throwaway root: no fsync per file, and no man-db index rebuild (its
# trigger reads every man page over 9p).
rm -f "$R/var/lib/man-db/auto-update"
start=$(date +%s)
chroot "$R" env DEBIAN_FRONTEND=noninteractive sh -c 'dpkg --force-unsafe-io -i /tmp/debs/*.deb' >"$WORK/dpkg.log" 2>&1 ||
	{ cat "$WORK/dpkg.log"; fail "dpkg -i failed"; }
log "dpkg -i took $(($(date +%s) - start)) s"
sed 's/^/  dpkg: /' "$WORK/dpkg.log" | grep -iE 'dkms|build|install|sign|error|warn|depmod' || true
for p in dm-barrier-dkms barrierd barrierctl libdmbarrier1 libdmbarrier-dev; do
	expect_eq "dpkg status of $p" "$(chroot "$R" dpkg-query -W -f '${db:Status-Status}' "$p")" installed
done
expect_eq "dkms status" "$(chroot "$R" dkms status dm-barrier)" "dm-barrier/1.0.0, $KVER, x86_64: installed"
mods=$(cd "$R" && find "lib/modules/$KVER" -name 'dm-barrier.ko*')
expect_eq "dm-barrier modules in the root" "$mods" "lib/modules/$KVER/updates/dkms/dm-barrier.ko"
if [ "${DMB_DKMS_BUILD:-0}" != 1 ]; then
	expect_eq "installed module = host DKMS build" "$(sha256sum <"$R/$mods")" "$(sha256sum <"$ko")"
else
	expect_eq "signer of the guest-built module" "$(modinfo -F signer "$R/$mods")" "DKMS module signing key"
fi
expect_eq "modinfo -n dm-barrier" "$(chroot "$R" modinfo -n dm-barrier)" "/lib/modules/$KVER/updates/dkms/dm-barrier.ko"

# The packaged CLI on the packaged library.
expect_eq "barrierctl" "$(chroot "$R" sh -c 'command -v barrierctl')" /usr/sbin/barrierctl
lib=$(chroot "$R" ldd /usr/sbin/barrierctl | awk '$1 == "libdmbarrier.so.1" { print $3 }')
expect_eq "barrierctl's libdmbarrier.so.1" "$(chroot "$R" readlink -f "$lib")" \
	"$(chroot "$R" sh -c 'readlink -f /usr/lib/*/libdmbarrier.so.1')"
expect_eq "owner of $lib" "$(chroot "$R" dpkg -S "$(chroot "$R" sh -c 'echo /usr/lib/*/libdmbarrier.so.1')" | cut -d: -f1)" libdmbarrier1
! grep -q '^dm_barrier ' /proc/modules || fail "dm_barrier loaded before barrierctl create"
# barrierctl loads no module; the kernel runs its modprobe helper in the
# guest's own root, so point it at the packaged root's modprobe.
old_modprobe=$(cat /proc/sys/kernel/modprobe)
printf '#!/bin/sh\nexec chroot %s /sbin/modprobe "$@"\n' "$R" >"$WORK/modprobe-root"
chmod +x "$WORK/modprobe-root"
echo "$WORK/modprobe-root" >/proc/sys/kernel/modprobe
chroot "$R" barrierctl create pkg "$DISK_IDE" || fail "packaged barrierctl create failed"
echo "$old_modprobe" >/proc/sys/kernel/modprobe
grep -q '^dm_barrier ' /proc/modules || fail "the kernel did not load dm_barrier for the table"
dsync_write /dev/mapper/pkg 0 || fail "O_DSYNC write on the packaged mapping failed"
chroot "$R" barrierctl status pkg >"$WORK/status.txt" || fail "barrierctl status failed"
sed 's/^/  status: /' "$WORK/status.txt"
json=$(chroot "$R" barrierctl --json status pkg) || fail "barrierctl --json status failed"
expect_eq "status mode" "$(jq -r '.mode' <<<"$json")" flush
[ "$(jq -r '.barriers' <<<"$json")" -ge 1 ] || fail "status counts no barrier: $json"
expect_eq "barrierctl status barriers = dmsetup's" "$(jq -r '.barriers' <<<"$json")" "$(bstatus pkg barriers)"

# barrierd's files, and the unit enabled by the postinst.
for f in /lib/systemd/system/barrierd.service /usr/sbin/barrierd /lib/udev/rules.d/56-dm-barrier.rules \
	/usr/share/dbus-1/system.d/org.dmbarrier1.conf /usr/share/dbus-1/system-services/org.dmbarrier1.service \
	/etc/barrierd.conf; do
	[ -e "$R$f" ] || fail "$f is not installed"
done
expect_eq "ExecStart" "$(grep '^ExecStart=' "$R/lib/systemd/system/barrierd.service")" "ExecStart=/usr/sbin/barrierd"
expect_eq "systemctl is-enabled barrierd" "$(chroot "$R" systemctl is-enabled barrierd.service 2>&1)" enabled
chroot "$R" barrierd --help >/dev/null || fail "packaged barrierd does not run"
MANWIDTH=80 chroot "$R" man -P cat dm-barrier 2>/dev/null | has 'keeps write barriers' || fail "man dm-barrier"
log "ok: packages installed; barrierctl status works; barrierd.service in place and enabled"
