#!/bin/bash
# dm-barrier: over a thousand malformed table lines and messages are
# rejected cleanly: every table load fails (with the target's error text in
# the kernel log), every message fails with EINVAL, the live mapping's table
# and mode do not change, nothing stays allocated (no extra holder of the
# disk, no extra worker thread, the module unloads), and the kernel does not
# WARN.  The cases are systematic (each argument, each feature, each way of
# being wrong) plus seeded random combinations that are invalid by
# construction.  Negative control: the same tool is fed valid lines and
# messages and must report them accepted (so it can tell).
# vm: ide ahci smp=1
# timeout: 400
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
D=$DISK_IDE
S=$(sectors "$D")
make_barrier live "$DISK_AHCI" hold_on_flush_error:100
fuzz=$B/tests/dmb-tablefuzz
[ -x "$fuzz" ] || fail "$fuzz not built"

# --- negative control: valid cases must come back accepted.
{
	echo "table $D 0"
	echo "table $D 0 1 mode:drain"
	echo "table $D 8 3 mode:fua fallback:drain hold_on_flush_error:60000"
	echo "message reset_stats"
	echo "message mode flush"
} >"$WORK/valid"
out=$("$fuzz" live "$((S - 8))" <"$WORK/valid") && fail "the fuzz tool accepted nothing it could reject: $out"
expect_eq "valid cases reported accepted" "$(echo "$out" | grep -c '^ACCEPTED')" 5

# --- systematic cases
cases=$WORK/cases
{
	for args in "" "$D" "$D 0 1" "$D 0 2 mode:flush" "$D 0 1 mode:flush extra" "$D 0 0 extra" \
		"$D 0 4 mode:flush fallback:none hold_on_flush_error:0 mode:drain" \
		"$D 0 -1 mode:flush" "$D 0 x mode:flush" "$D 0 1x mode:flush" "$D 0 +1 mode:flush" \
		"$D 0 4294967297 mode:flush" "$D 0 18446744073709551617 mode:flush" "$D 0 0x1 mode:flush" \
		"/dev/nonexistent 0" "999:999 0" "/dev/null 0" "/dev/zero 0" "/ 0" "$D/x 0" "relative 0" \
		"$D -1" "$D abc" "$D 1.5" "$D 0x10" "$D 99999999999999999999" "$D 18446744073709551616" \
		"$D 1e3" "$D +5" "$D 5-" "$D 65" "$D $S" "$D $((S + 1))" "$D 0 0 0" "$D 0 1 ''"; do
		echo "table $args"
	done
	for f in mode: mode:FLUSH mode:Flush mode:flushx mode:fl mode=flush modeflush :flush mode::flush \
		mode:flush: Mode:flush MODE:drain mode:tag mode:ordered mode:barrier fallback:flush \
		fallback:fua fallback:passthrough fallback: fallback:none2 fallback:NONE fallback:tag \
		hold_on_flush_error: hold_on_flush_error:-1 hold_on_flush_error:abc \
		hold_on_flush_error:60001 hold_on_flush_error:1e3 hold_on_flush_error:99999999999 \
		hold_on_flush_error:4295567296 hold_on_flush_error:+5 hold_on_flush_error:0x10 \
		hold_on_flush_error:5ms hold_on_flush_error:5.0 hold_on_flush_error:: \
		hold_on_flush_error hold_on_flush_error:-0 foo:bar barrier:1 hold:5 flush : ::: \
		mode fallback hold_on_flush_errors:5 hold_on_flush_error_:5 _mode:flush; do
		echo "table $D 0 1 $f"
		echo "table $D 0 2 mode:drain $f"
		echo "table $D 0 3 $f fallback:drain hold_on_flush_error:1"
	done
	for dup in "mode:flush mode:drain" "mode:flush mode:flush" "fallback:none fallback:drain" \
		"hold_on_flush_error:1 hold_on_flush_error:2" "mode:flush hold_on_flush_error:1 mode:flush" \
		"fallback:drain mode:none fallback:drain"; do
		echo "table $D 0 $(echo "$dup" | wc -w) $dup"
	done
	for m in "" mode "mode foo" "mode flush extra" "mode FLUSH" "mode flush2" "mode Drain" \
		"mode tag" "mode ordered" "mode 0" "mode -" "reset_stats x" "reset_stats_" "reset" \
		"barrier now" "barrier 1" "barriers" "foo" "fallback drain" "hold_on_flush_error 5" \
		"mode mode flush" "flush" "drain" "none" "0 mode flush" "status" "resume" "suspend" \
		"mode=flush" "mode:flush" "reset_stats reset_stats" "barrier barrier" "mode drain drain"; do
		echo "message $m"
	done
} >"$cases"

# --- seeded random combinations, each invalid by construction
RANDOM=2003
valid=(mode:flush mode:fua mode:drain mode:passthrough mode:none fallback:none fallback:drain
	hold_on_flush_error:0 hold_on_flush_error:5000)
invalid=(mode:ordered mode: fallback:fua hold_on_flush_error:60001 x:y mode:FUA fallback:
	hold_on_flush_error:-3 "" mode:flush:1 hold_on_flush_error:1x modeflush)
pick() { local -n arr=$1; echo "${arr[$((RANDOM % ${#arr[@]}))]}"; }
for ((i = 0; i < 700; i++)); do
	n=$((RANDOM % 3 + 1))
	feats=()
	bad=$((RANDOM % n))
	for ((j = 0; j < n; j++)); do
		if [ $j -eq $bad ]; then feats+=("$(pick invalid)"); else feats+=("$(pick valid)"); fi
	done
	case $((RANDOM % 4)) in
	0) count=$((n + 1 + RANDOM % 3)) ;; # too many announced
	*) count=$n ;;
	esac
	echo "table $D $((RANDOM % 64)) $count ${feats[*]}"
done >>"$cases"
words=(mode flush drain fua none passthrough reset_stats barrier x "" 1 -1 MODE Barrier)
for ((i = 0; i < 300; i++)); do
	n=$((RANDOM % 4 + 1))
	m=()
	for ((j = 0; j < n; j++)); do m+=("$(pick words)"); done
	# dm splits messages on white space: compare the words.
	read -r -a m <<<"${m[*]}"
	msg="${m[*]}"
	# Skip the few random messages that are valid (keywords are case-blind).
	case "${m[0]:-},${m[1]:-},${#m[@]}" in
	[Mm][Oo][Dd][Ee],flush,2|[Mm][Oo][Dd][Ee],drain,2|[Mm][Oo][Dd][Ee],fua,2) continue ;;
	[Mm][Oo][Dd][Ee],none,2|[Mm][Oo][Dd][Ee],passthrough,2) continue ;;
	esac
	case "$(echo "$msg" | tr 'A-Z' 'a-z')" in
	"mode flush"|"mode drain"|"mode fua"|"mode none"|"mode passthrough"|reset_stats|barrier) continue ;;
	esac
	echo "message $msg"
done >>"$cases"

total=$(wc -l <"$cases")
[ "$total" -ge 1000 ] || fail "only $total cases"
holders_before=$(ls "/sys/block/$(disk_name "$D")/holders" | wc -l)
threads_before=$(ps -e -o comm= | grep -c kdmbarrierd || true)
mem_before=$(awk '/^MemAvailable/ {print $2}' /proc/meminfo)

out=$("$fuzz" live "$((S - 64))" <"$cases") || fail "cases were accepted: $(echo "$out" | grep -v '^[0-9]* cases' | head -20)"
log "$(echo "$out" | tail -n 1)"

expect_eq "holders of $D" "$(ls "/sys/block/$(disk_name "$D")/holders" | wc -l)" "$holders_before"
expect_eq "kdmbarrierd threads" "$(ps -e -o comm= | grep -c kdmbarrierd || true)" "$threads_before"
expect_eq "live mapping table" "$(dmsetup table live | cut -d' ' -f3-)" \
	"barrier $(lsblk -dno MAJ:MIN "$DISK_AHCI" | tr -d ' ') 0 1 hold_on_flush_error:100"
mem_after=$(awk '/^MemAvailable/ {print $2}' /proc/meminfo)
log "MemAvailable before ${mem_before} kB, after ${mem_after} kB"
[ $((mem_before - mem_after)) -lt 20000 ] || fail "lost $((mem_before - mem_after)) kB over the run"

# The kernel said why, in the target's words.
for msg in "barrier: Invalid mode" "barrier: Invalid fallback" "barrier: Invalid hold_on_flush_error" \
	"barrier: Unknown feature" "barrier: Duplicate mode: feature" "barrier: Invalid device offset" \
	"barrier: Offset and length exceed the device" "barrier: Device lookup failed" \
	"barrier: Invalid number of feature arguments" "barrier: Invalid argument count" \
	"unrecognised message" "unknown mode"; do
	kmsg_has "$msg" || fail "no kernel log line containing '$msg'"
done

# A healthy mapping still works afterwards; then everything unloads.
dsync_write /dev/mapper/live 1 >/dev/null || fail "the live mapping broke"
dmsetup remove live
rmmod dm_barrier || fail "dm_barrier does not unload: something still holds it"
