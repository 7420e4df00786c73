#!/bin/bash
# dm-barrier: what a hold may cost is bounded, and nothing lands between
# deciding a hold and starting it (review findings 5 and 2).
# A  hold_on_flush_error is at most 60000 ms (half the default
#    hung_task_timeout): 60001 is refused, 60000 taken.  (9a24aab: 600000.)
# B  writes queued behind a hold end it early past 4096, so the queue cannot
#    grow without bound.  (9a24aab: held for the whole hold_ms.)
# B2 reads do not count (review N8): 4200 reads queued behind a hold leave
#    it waiting for its answer, and a `mode` message then replays it.
#    (767b561 counted every bio: the hold ended, the barrier failed.)
# C  the `barrier` message is refused at once while a hold keeps the queue
#    (it would wait inside dm core's table reference) and while suspended
#    (no I/O after postsuspend: the dmb_fault log shows no flush).
#    (9a24aab: it waited for the hold; it flushed a suspended device.)
# D  a `mode` message, or a suspend, landing between the flush failure and
#    the start of the hold: the dmb_kdelay test module stalls
#    barrier_log_fallback() 1.5 s (9a24aab logged between the two); the
#    message must replay the barrier, the suspend must end the hold, both
#    at once.  (9a24aab: the message was lost, the barrier held 20 s; the
#    suspend waited 20 s.)
# Negative control: without the message, the barrier stays held (D).
# vm: ide ahci
# timeout: 300
source "$PROJECT/tests/vm/lib.sh"

modprobe dm-barrier
make_fault flt "$DISK_IDE"
F=/dev/mapper/flt
S=$(sectors "$F")

# --- A: the cap
must_fail dmsetup create a --table "0 $S barrier $F 0 1 hold_on_flush_error:60001"
dmsetup create a --table "0 $S barrier $F 0 1 hold_on_flush_error:60000"
dmsetup remove a

# held NAME: barriers held
held() { bstatus "$1" held; }
# hold_one NAME SEEK: a barrier write whose flush fails, held (bg tag hSEEK)
hold_one() {
	dd if=/dev/urandom of="/dev/mapper/$1" bs=4k count=1 seek=$(($2 + 1)) oflag=direct conv=notrunc status=none
	fault flt fail_flush all
	bg "h$2" dsync_write "/dev/mapper/$1" "$2"
	wait_until 15 'test "$(held '"$1"')" -ge 1' || fail "$1: the barrier was not held: $(dmsetup status "$1")"
}

# --- B: the queue behind a hold is bounded
make_barrier b "$F" hold_on_flush_error:20000 fallback:drain
hold_one b 10
bio_open /dev/mapper/b
start=$(date +%s)
for ((i = 1; i <= 4200; i++)); do
	echo "submit $i W - $((100000 + i * 8)) 8" >"$DMB_BIO/ctl"
done
wait_until 15 'bg_done h10' || fail "B: 4200 bios queued behind a 20 s hold did not end it"
log "B: the hold ended after $(($(date +%s) - start)) s with 4200 bios queued"
out=$(bg_out h10)
case "$out" in *"Input/output error"*) ;; *) fail "B: the held barrier: '$out', want EIO" ;; esac
fault flt clear
wait_until 30 '! grep -q pending "$DMB_BIO/results"' || fail "B: queued bios did not complete"
bio_close
kmsg_has "writes queued behind a hold; ending it" || fail "B: no log line for the early end"
dmsetup remove b

# --- B2: reads queued behind a hold do not end it
make_barrier b2 "$F" hold_on_flush_error:20000 fallback:drain
hold_one b2 30
bio_open /dev/mapper/b2
for ((i = 1; i <= 4200; i++)); do
	echo "submit $i R - $((100000 + i * 8)) 8" >"$DMB_BIO/ctl"
done
# 767b561 ended the hold at the 4097th and failed the barrier at once.
wait_until 3 'bg_done h30' && fail "B2: 4200 reads queued behind a hold ended it: the held barrier returned '$(bg_out h30)'"
pending=$(grep -c pending "$DMB_BIO/results" || true)
log "B2: 4200 reads submitted behind the hold, $pending pending; $(dmsetup status b2)"
[ "$pending" -gt 4096 ] || fail "B2: only $pending reads were queued behind the hold"
expect_eq "B2: barriers still held" "$(held b2)" 1
fault flt clear
dmsetup message b2 0 mode drain
wait_until 15 'bg_done h30' || fail "B2: the mode message did not replay the hold"
expect_eq "B2: the replayed barrier" "$(bg_rc h30)" 0
wait_until 30 '! grep -q pending "$DMB_BIO/results"' || fail "B2: queued reads did not complete"
grep -qv ' 0$' "$DMB_BIO/results" && fail "B2: a queued read failed: $(grep -v ' 0$' "$DMB_BIO/results" | head -3)"
bio_close
dmsetup remove b2

# --- C: the barrier message while holding, and while suspended
make_barrier c "$F" hold_on_flush_error:20000 fallback:drain
hold_one c 20
out=$(timeout 5 dmsetup message c 0 barrier 2>&1) && fail "C: the barrier message succeeded during a hold"
case "$out" in *"busy"*) ;; *) fail "C: barrier message during a hold: '$out', want EBUSY at once" ;; esac
dmsetup message c 0 mode drain
wait_until 10 'bg_done h20' || fail "C: the mode change did not replay the hold"
expect_eq "C: replayed barrier" "$(bg_rc h20)" 0
fault flt clear
dmsetup suspend c
fault flt log_clear
out=$(timeout 5 dmsetup message c 0 barrier 2>&1) && fail "C: the barrier message succeeded on a suspended mapping"
case "$out" in *"temporarily unavailable"*) ;; *) fail "C: barrier message when suspended: '$out', want EAGAIN" ;; esac
expect_eq "C: bios the disk saw while suspended" "$(fault_log flt | wc -l)" 0
dmsetup resume c
dmsetup message c 0 barrier || fail "C: the barrier message failed after resume"
dmsetup remove c

# --- D: the window between the failure and the hold
echo N >/sys/module/dm_barrier/parameters/direct
trap 'echo Y >/sys/module/dm_barrier/parameters/direct 2>/dev/null || true' EXIT
load_testmod dmb_kdelay symbol=barrier_log_fallback delay_ms=1500
hits() { cat /sys/module/dmb_kdelay/parameters/hits; }
# D1: a mode message in the window
make_barrier d1 "$F" hold_on_flush_error:20000 fallback:drain
dd if=/dev/urandom of=/dev/mapper/d1 bs=4k count=1 seek=31 oflag=direct conv=notrunc status=none
h=$(hits)
fault flt fail_flush all
bg d1 dsync_write /dev/mapper/d1 30
wait_until 15 'test "$(hits)" -gt '"$h" || fail "D1: the failure never reached barrier_log_fallback"
dmsetup message d1 0 mode drain
fault flt clear
wait_until 8 'bg_done d1' || fail "D1: a mode message in the window was lost: the barrier is still held ($(dmsetup status d1))"
expect_eq "D1: the replayed barrier" "$(bg_rc d1)" 0
dmsetup remove d1
# D2: a suspend in the window
make_barrier d2 "$F" hold_on_flush_error:20000 fallback:drain
dd if=/dev/urandom of=/dev/mapper/d2 bs=4k count=1 seek=41 oflag=direct conv=notrunc status=none
h=$(hits)
fault flt fail_flush all
bg d2 dsync_write /dev/mapper/d2 40
wait_until 15 'test "$(hits)" -gt '"$h" || fail "D2: the failure never reached barrier_log_fallback"
start=$(date +%s%N)
timeout 60 dmsetup suspend d2
took=$((($(date +%s%N) - start) / 1000000))
log "D2: suspend took $took ms"
[ "$took" -lt 10000 ] || fail "D2: a suspend in the window waited for the hold ($took ms)"
dmsetup resume d2
wait_until 5 'bg_done d2' || fail "D2: the barrier did not complete"
fault flt clear
dmsetup remove d2
# D3 (control): no message, the barrier stays held
make_barrier d3 "$F" hold_on_flush_error:20000 fallback:drain
hold_one d3 50
sleep 3
bg_done h50 && fail "D3: the barrier was not held without a message"
dmsetup message d3 0 mode drain
wait_until 10 'bg_done h50' || fail "D3: the mode change did not replay"
fault flt clear
dmsetup remove d3 flt
