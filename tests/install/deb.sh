#!/bin/bash
# dpkg-buildpackage -us -uc -b builds the five packages from a copy of the
# tree in build/deb/src (its products land in build/deb/, never next to the
# work tree), lintian reports no error, and each package holds what it is
# for.  The guest test install-packages installs them.
. "$(dirname "$0")/lib.sh"

B=$top/build/deb
rm -rf "$B"
copy_tree "$B/src"
log "dpkg-buildpackage -us -uc -b (in build/deb/src)"
(cd "$B/src" && dpkg-buildpackage -us -uc -b -j"$(nproc)") >"$B/build.log" 2>&1 ||
	{ tail -n 40 "$B/build.log"; fail "dpkg-buildpackage failed (build/deb/build.log)"; }
ver=$(cd "$B/src" && dpkg-parsechangelog -S Version)
arch=$(dpkg --print-architecture)
for p in dm-barrier-dkms:all barrierd:$arch barrierctl:$arch libdmbarrier1:$arch libdmbarrier-dev:$arch; do
	deb=$B/${p%%:*}_${ver}_${p#*:}.deb
	[ -f "$deb" ] || fail "no ${deb##*/}"
done
log "ok: built $(cd "$B" && ls ./*.deb | grep -vc dbgsym) packages (+ dbgsym): $(cd "$B" && ls ./*.deb | grep -v dbgsym | tr '\n' ' ')"
grep -E '^(dpkg-gensymbols|dpkg-shlibdeps): warning' "$B/build.log" &&
	fail "symbols or shlibs warnings in the build (above)"

log "lintian"
lintian --fail-on error --no-tag-display-limit "$B/dm-barrier_${ver}_$arch.changes" >"$B/lintian.log" 2>&1 ||
	{ cat "$B/lintian.log"; fail "lintian reports errors"; }
log "ok: lintian: $(grep -c '^E:' "$B/lintian.log" || true) errors, $(grep -c '^W:' "$B/lintian.log" || true) warnings"
grep '^[EW]:' "$B/lintian.log" || true

# contents DEB PATH...: the package holds each PATH.
contents() {
	local deb=$B/$1 p list
	shift
	list=$(dpkg-deb -c "$deb" | awk '{print $6}' | sed 's|^\./|/|')
	for p in "$@"; do
		grep -qx -- "$p" <<<"$list" || fail "${deb##*/} lacks $p"
	done
}
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
contents "dm-barrier-dkms_${ver}_all.deb" /usr/src/dm-barrier-1.0.0/dkms.conf \
	/usr/src/dm-barrier-1.0.0/dm-target/dm-barrier.c /usr/src/dm-barrier-1.0.0/dm-target/Kbuild \
	/usr/src/dm-barrier-1.0.0/dm-target/dm-barrier-compat.h /usr/share/man/man7/dm-barrier.7.gz
contents "barrierd_${ver}_$arch.deb" /usr/sbin/barrierd /lib/systemd/system/barrierd.service \
	/lib/udev/rules.d/56-dm-barrier.rules /usr/share/dbus-1/system.d/org.dmbarrier1.conf \
	/usr/share/dbus-1/system-services/org.dmbarrier1.service /etc/barrierd.conf \
	/usr/share/polkit-1/actions/org.dmbarrier1.policy \
	/usr/share/man/man8/barrierd.8.gz /usr/share/man/man5/org.dmbarrier1.5.gz
contents "barrierctl_${ver}_$arch.deb" /usr/sbin/barrierctl /usr/share/man/man8/barrierctl.8.gz
contents "libdmbarrier1_${ver}_$arch.deb" "/usr/lib/$ma/libdmbarrier.so.1.0.0" "/usr/lib/$ma/libdmbarrier.so.1"
contents "libdmbarrier-dev_${ver}_$arch.deb" /usr/include/libdmbarrier.h "/usr/lib/$ma/libdmbarrier.so" \
	"/usr/lib/$ma/pkgconfig/libdmbarrier.pc"
# The DKMS package builds on install; barrierd is enabled and started.
dpkg-deb -I "$B/dm-barrier-dkms_${ver}_all.deb" postinst | grep -q 'common.postinst' ||
	fail "dm-barrier-dkms has no DKMS postinst"
dpkg-deb -f "$B/dm-barrier-dkms_${ver}_all.deb" Depends | grep -q dkms || fail "dm-barrier-dkms does not depend on dkms"
dpkg-deb -I "$B/barrierd_${ver}_$arch.deb" postinst | grep -q 'deb-systemd-helper' ||
	fail "barrierd's postinst does not enable the unit"
# Version skew: the tools run on their own build of the library, and the
# library refuses a target of another major version (so does dpkg).
for p in barrierctl barrierd; do
	dpkg-deb -f "$B/${p}_${ver}_$arch.deb" Depends | grep -qF "libdmbarrier1 (= $ver)" ||
		fail "$p Depends: $(dpkg-deb -f "$B/${p}_${ver}_$arch.deb" Depends)"
	dpkg-deb -f "$B/${p}_${ver}_$arch.deb" Recommends | grep -qF "dm-barrier-dkms (>= 1.0.0)" ||
		fail "$p Recommends: $(dpkg-deb -f "$B/${p}_${ver}_$arch.deb" Recommends)"
done
breaks=$(dpkg-deb -f "$B/libdmbarrier1_${ver}_$arch.deb" Breaks)
for b in 'dm-barrier-dkms (<< 1.0.0)' 'dm-barrier-dkms (>= 2~)'; do
	grep -qF "$b" <<<"$breaks" || fail "libdmbarrier1 Breaks lacks $b: $breaks"
done
conffiles=$(dpkg-deb --ctrl-tarfile "$B/barrierd_${ver}_$arch.deb" | tar -xO ./conffiles)
grep -qx /etc/barrierd.conf <<<"$conffiles" ||
	fail "/etc/barrierd.conf is not a conffile"
log "ok: each package holds its files; DKMS postinst; unit enabled; shlibs; conffile"
