#!/bin/bash
# Benchmark part 2, fsync-heavy ext4: fio 4k sequential writes with an
# fsync after each, 1 and 8 jobs, on ext4 over the raw AHCI disk, dm-linear,
# and barrier in modes flush, fua and drain, and flush with
# dm_barrier.direct=N (flush-worker: every barrier through the worker).
# Per run: fsync'd writes/s (ratio to dm-linear), flushes reaching the disk
# per fsync (diskstats of the disk) and, for barrier mappings, the target's
# flushes per fsync (its status counters, zeroed before the run): fewer than
# one when shared flushes answer several fsyncs.  Also feeds part 4
# (commands per barrier).
# vm: ide ahci scsi
# timeout: 1200
source "$PROJECT/tests/vm/lib.sh"
source "$PROJECT/bench/guest/lib.sh"

load_barrier
BDISK=$(set -- ${DMB_BENCH_DISKS:-ahci}; echo "$1")
DEV=$(bench_disk "$BDISK") || exit 1
MNT=$WORK/mnt
mkdir -p "$MNT"

# DMB_BENCH_FSYNC_CONFIGS: a subset, for quick runs (e.g. "linear flush").
read -ra CONFIGS <<<"${DMB_BENCH_FSYNC_CONFIGS:-raw linear flush flush-worker fua drain}"
name_of() {
	case "$1" in
	raw) echo raw-disk ;;
	linear) echo dm-linear ;;
	flush-worker) echo "barrier/flush (worker)" ;;
	*) echo "barrier/$1" ;;
	esac
}

for rep in $(seq "$REPS"); do
	for i in "${!CONFIGS[@]}"; do
		config=${CONFIGS[$(((i + rep - 1) % ${#CONFIGS[@]}))]}
		name=$(name_of "$config")
		if [ "$config" = raw ]; then
			target=$DEV
		else
			mapping fs "$config" "$DEV"
			target=/dev/mapper/fs
		fi
		# Small, fully initialised: no ext4lazyinit writes during the runs.
		mkfs.ext4 -q -F -E lazy_itable_init=0,lazy_journal_init=0 "$target" 256M
		mount -t ext4 "$target" "$MNT"
		for jobs in 1 8; do
			rm -f "$MNT"/f.*
			args=(--name=f --directory="$MNT" --filename_format='f.$jobnum' --rw=write --bs=4k
				--size=4M --numjobs="$jobs" --ioengine=psync)
			fio_json "$WORK/lay.json" "${args[@]}" --create_only=1
			sync
			[ "$config" = raw ] || { [ "$config" = linear ] || dmsetup message fs 0 reset_stats; }
			d0=$(disk_flushes "$DEV")
			fio_json "$WORK/fs.json" "${args[@]}" --fsync=1 --runtime="$FIO_RUNTIME" --time_based
			d1=$(disk_flushes "$DEV")
			read -r barriers flushes fuaw shared maxdrain <<<"$(counters fs 2>/dev/null || echo 0 0 0 0 0)"
			fsyncs=$(fio_fsyncs "$WORK/fs.json")
			[ "$fsyncs" -gt 0 ] || fail "$name: fio reports no fsyncs"
			wps=$(fio_iops "$WORK/fs.json")
			if [ "$config" = linear ]; then
				row fsync "$name" "writes+fsync/s ${jobs}j" "$rep" "$wps"
			elif [ "$config" = flush ]; then
				row fsync "$name" "writes+fsync/s ${jobs}j" "$rep" "$wps" dm-linear "ratio>=0.90"
			else
				row fsync "$name" "writes+fsync/s ${jobs}j" "$rep" "$wps" dm-linear
			fi
			row fsync "$name" "disk flushes/fsync ${jobs}j" "$rep" "$(ratio $((d1 - d0)) "$fsyncs")" dm-linear
			case "$config" in
			raw | linear) ;;
			*)
				goal="value<=1.0"
				[ "$jobs" = 8 ] && goal="value<=0.5"
				[ "$config" = drain ] || [ "$config" = flush-worker ] && goal=""
				row fsync "$name" "target flushes/fsync ${jobs}j" "$rep" "$(ratio "$flushes" "$fsyncs")" "" "$goal"
				row cost "$name ext4 ${jobs}j" "barriers/fsync" "$rep" "$(ratio "$barriers" "$fsyncs")"
				row cost "$name ext4 ${jobs}j" "flushes/barrier" "$rep" "$(ratio "$flushes" "$barriers")"
				row cost "$name ext4 ${jobs}j" "fua writes/barrier" "$rep" "$(ratio "$fuaw" "$barriers")"
				row cost "$name ext4 ${jobs}j" "shared/barrier" "$rep" "$(ratio "$shared" "$barriers")"
				row cost "$name ext4 ${jobs}j" "max drain us" "$rep" "$maxdrain"
				;;
			esac
		done
		umount "$MNT"
		[ "$config" = raw ] || dmsetup remove fs
	done
done
