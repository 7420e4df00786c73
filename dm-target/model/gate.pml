/*
 * gate.pml: the lock-free "gate" of dm-barrier (dm-target/dm-barrier.c) in
 * Promela, for an exhaustive check with spin (Debian package spin).
 *
 * HOW TO RUN
 *
 *     make check-model                  (runs dm-target/model/check)
 *     dm-target/model/check --trails    ... printing every control's trail
 *     dm-target/model/check --deep      ... and the 3-thread run (-DTHREAD_C)
 *
 * The script runs each of these in a temporary directory; by hand:
 *
 *     spin -a gate.pml && gcc -O2 -DSAFETY -DCOLLAPSE -o pan pan.c
 *     ./pan -m100000        the fixed protocol: "errors: 0", about 4
 *                           million states, no "max search depth too small"
 *     spin -DN1_REREAD -a gate.pml && gcc -O2 -DSAFETY -DBFS -o pan pan.c
 *     ./pan -m100000        N1: "assertion violated (durable&(1<<0))"
 *     spin -DN1_REREAD -t gate.pml | grep '@ '   the interleaving it found
 *
 * The compile-time switches (spin -D...):
 *     N1_REREAD         the protocol of 767b561 (the negative control)
 *     NO_DIRECT         the module parameter direct=0 for every barrier: all
 *                       through the worker (with N1_REREAD: N1 in the
 *                       worker's shape); by default each barrier may be
 *                       DIRECT_NO or try the direct way
 *     PASS_WRITES_LAST  a mutant: one pass, but the writes summed last
 *     NO_ACCOUNT_DIRTY  a mutant: barrier_account_issue() without dirty = true
 *     B_NO_WRITE        thread B only two bare fdatasyncs
 *     THREAD_C          a third thread, one bare fdatasync (131 million
 *                       states: 5 minutes and 6 GB with -DCOLLAPSE)
 *
 * Every step a process takes is one Promela statement (or one d_step /
 * atomic, where the C does it under bc->lock or as one instruction), named
 * in a comment after the C function and line it stands for; the steps
 * print "@ <who> <bio>: ..." lines, which spin -t replays as the trail.
 * Line numbers are those of dm-target/dm-barrier.c at commit 767b561 (the
 * protocol with review finding N1).  The fix keeps the function names but
 * for the one pass over the counts (barrier_snapshot() in the fix, which
 * replaces barrier_inflight(), barrier_writes() and the re-reads in
 * barrier_dirty_locked() and barrier_clean_locked()).
 *
 * WHAT IS MODELLED
 *
 *  - Two CPUs, each with its per-CPU counts issued, completed, writes
 *    (struct barrier_pcpu).  Every this_cpu_inc() picks the CPU anew, so a
 *    thread may migrate between any two of its increments and a bio may
 *    complete on either CPU.  A sum over the CPUs is one read per CPU, each
 *    its own step: other processes run between them.
 *  - bc->lock is a test-and-set (lock()/unlock() below); busy, dirty,
 *    direct, writes_flushed and the queue are written only under it, as in
 *    the C.  The gate, busy, is read without it by the fast path.
 *  - The fast path of an ordinary write, barrier_pass_gate(); a write that
 *    meets the gate closed counts itself completed (a "bounce") and takes
 *    barrier_map()'s locked path: queued behind the barrier if the gate is
 *    still closed (the worker issues it later: barrier_account_issue(),
 *    issued++ and dirty = true), else counted and issued under the lock
 *    (barrier_account_issue() too).
 *  - An empty flush barrier (what fdatasync() sends) in mode flush, on a
 *    write-back cache: barrier_map()'s locked part; queued if the gate is
 *    closed; else it closes the gate and either is queued for the worker
 *    at once (DIRECT_NO: direct=0, which can change at run time, or
 *    REQ_NOWAIT; chosen nondeterministically per barrier) or takes the
 *    direct way (barrier_map_direct(): the pass; queued for the worker if
 *    anything is in flight;
 *    answered at once when clean; else sent down as a flush with the gate
 *    kept closed, completed by barrier_direct_endio(), which reopens the
 *    gate on an empty queue or kicks the worker).
 *  - The worker, barrier_work(), a process kicked by a flag (queue_work():
 *    a kick while it runs makes it run once more): a stray run while a
 *    direct barrier is in flight, reopening the gate on an empty queue,
 *    releasing the plain bios up to the next barrier (barrier_account_issue
 *    each, then barrier_submit_queued), batching empty barriers back to
 *    back, and barrier_run() for the batch: barrier_drain() (closes the
 *    gate again, then waits, retaking the pass until it shows nothing in
 *    flight), barrier_decide(), barrier_flush() (clean, then a synchronous
 *    flush), completion of the batch.
 *  - The device: a write it completes is in its volatile cache ("cached");
 *    a flush makes durable exactly the writes that were in the cache when
 *    the flush was ISSUED, once it completes.  A completed write's end_io
 *    (barrier_end_io(), barrier_done_one()) counts it completed afterwards,
 *    on either CPU.  Nothing fails.
 *  - Two threads, each a sequence of synchronous bios on the mapping:
 *      thread A:  write W0, then fdatasync F0 (an empty flush barrier);
 *      thread B:  fdatasync F1, write W1, fdatasync F2.
 *    A write is waited for before the thread goes on, as fdatasync() waits
 *    for the data before it sends the flush.
 *
 * THE FIXED PROTOCOL (default) and N1 (-DN1_REREAD)
 *
 *  Fixed: a barrier that has closed the gate takes ONE pass: S = sum of
 *  writes, then C = sum of completed, then I = sum of issued (smp_rmb()
 *  between them in the C); inflight = I - C.  The S of the pass that showed
 *  inflight == 0 is the only write count used: flush needed = dirty ||
 *  S != writes_flushed; clean = (dirty = false, writes_flushed = S).  The
 *  fast path counts issued, then (smp_wmb()) writes.
 *
 *  N1_REREAD (767b561): the pass is C then I only (barrier_inflight()); the
 *  dirty decision reads the sum of writes again (barrier_dirty_locked() ->
 *  barrier_writes()) and the clean once more (barrier_clean_locked() ->
 *  barrier_writes()).  A write on another CPU that counts itself between
 *  the pass and those re-reads, and reads the gate after it reopens, passes
 *  with its count already in writes_flushed: its own fdatasync() then finds
 *  the mapping clean and succeeds without a flush.  spin must find this.
 *
 * THE PROPERTIES
 *
 *  1. Durability (assert): a write whose submitter saw a later barrier
 *     succeed (one it submitted after the write completed) is durable
 *     then: a flush ISSUED after the write had completed has completed.
 *     W0 at F0's success, W1 at F2's.
 *  2. Drain (assert): every write accepted (queued, or issued to the
 *     device) when a barrier took bc->lock in map() has completed on the
 *     device before that barrier's flush is issued, or before it succeeds
 *     without one.
 *  3. (assert) The direct way reopens the gate only on an empty queue.
 *  4. No invalid end state: every bio submitted completes; a barrier
 *     stranded in the queue with nobody to kick the worker, or a write
 *     nobody issues, is a deadlock spin reports.
 *
 * WHAT IS NOT MODELLED
 *
 *  - Memory ordering.  spin explores the interleavings of a sequentially
 *    consistent memory.  In the kernel, the smp_mb() pairing (pass_gate's
 *    counts-then-gate against close_gate's gate-then-counts: the
 *    store-buffering pattern) and the smp_wmb()/smp_rmb() pairing
 *    (pass_gate's issued-then-writes against the pass's writes-then-issued:
 *    the message-passing pattern) are what forbid, under the Linux kernel
 *    memory model, the outcomes the proof needs forbidden and sequential
 *    consistency forbids here; that argument is in the C comments ("the
 *    gate") and is not checked by this model.  N1 needs no weak ordering:
 *    it is reached here, under sequential consistency.
 *  - Other modes (passthrough, none, drain, fua), write-through caches,
 *    barriers with data, REQ_NOWAIT, the `barrier` message, flush failures
 *    and holds, debts (nr_debts), suspend, reads (a read counts issued and
 *    completed as a write does, but no write), counter wrap-around, the
 *    drain_wait wake-ups (the drain retakes the pass until it shows nothing
 *    in flight: a lost wake-up is not checked), statistics.
 *  - Bounded scenario: two CPUs, two threads (three with -DTHREAD_C), two
 *    writes and three barriers.  The check is exhaustive for that scenario,
 *    not for every number of threads and bios.
 */

#define NCPU	2

/* Writes W0 (thread A), W1 (thread B): bit w of the masks below. */
#define W0	0
#define W1	1
#define NW	2
/* Barriers F0 (thread A's fdatasync), F1, F2 (thread B's). */
#define F0	0
#define F1	1
#define F2	2
#ifdef THREAD_C
#define F3	3	/* thread C's bare fdatasync (-DTHREAD_C) */
#define NB	4
#else
#define NB	3
#endif
/* In the queue a write is its number, a barrier BAR + its number. */
#define BAR	4

/* Where a write is (ghost state, for the properties and the waits). */
#define WS_IDLE		0	/* not submitted yet */
#define WS_MAP		1	/* in map(), not accepted yet */
#define WS_QUEUED	2	/* accepted: in bc->queue (or the worker's batch) */
#define WS_ISSUED	3	/* accepted: sent to the device */
#define WS_CACHED	4	/* the device completed it: in its volatile cache */
#define WS_DONE		5	/* end_io counted it; its submitter has seen it */

/* struct barrier_pcpu, on two CPUs. */
byte issued[NCPU];
byte completed[NCPU];
byte writes[NCPU];

/* struct barrier_c: the fields of the gate. */
bool lk;		/* bc->lock */
bool busy;		/* bc->busy: the gate, closed when true */
bool dirty;		/* bc->dirty */
bool direct;		/* bc->direct */
byte writes_flushed;	/* bc->writes_flushed */
chan q = [4] of { byte };	/* bc->queue, in arrival order */
bool kick;		/* bc->work queued (barrier_kick(): queue_work()) */

/* Ghost state: the device and the properties. */
byte wst[NW];		/* WS_* of each write */
byte cached;		/* writes the device has completed (in its cache) */
byte durable;		/* writes a completed flush covered */
byte before[NB];	/* writes accepted, not yet cached, when barrier b took the lock */
bool bdone[NB];		/* the worker completed barrier b (with success) */

/* Writes accepted and not yet completed on the device, as a mask. */
#define ACCEPTED(w)	((wst[w] == WS_QUEUED || wst[w] == WS_ISSUED) -> (1 << w) : 0)
/* Property 2, for barrier b: what was accepted before it is in the cache. */
#define DRAINED(b)	((before[b] & cached) == before[b])
/* ... for each barrier of the worker's batch (in a d_step; i a local). */
#define BATCH_DRAINED() \
	i = 0; \
	do \
	:: i < NB -> assert((batch & (1 << i)) == 0 || DRAINED(i)); i++ \
	:: else -> i = 0; break \
	od

/*
 * this_cpu_inc(bc->pcpu->ctr) on whichever CPU the thread is on now: one
 * step, the CPU chosen nondeterministically.  fmt gets (x, y, cpu).
 */
#define THIS_CPU_INC(ctr, fmt, x, y) \
	if \
	:: d_step { ctr[0]++; printf(fmt, x, y, 0) } \
	:: d_step { ctr[1]++; printf(fmt, x, y, 1) } \
	fi

/*
 * barrier_account_issue() l.506-514, under bc->lock: this_cpu_inc(issued)
 * (l.511) and, for a write, dirty = true (l.513).  -DNO_ACCOUNT_DIRTY is a
 * mutant without l.513 (a write that met the closed gate and is issued
 * later under the lock would not mark the target dirty): a negative
 * control of the model's bounce paths.
 */
#ifdef NO_ACCOUNT_DIRTY
#define ACCOUNT_DIRTY	dirty
#else
#define ACCOUNT_DIRTY	true
#endif
#define ACCOUNT_ISSUE(w) \
	if \
	:: d_step { issued[0]++; dirty = ACCOUNT_DIRTY; \
		printf("@ %c W%d: account_issue: issued[%d]++, dirty = %d (l.511-513)\n", me, w, 0, dirty) } \
	:: d_step { issued[1]++; dirty = ACCOUNT_DIRTY; \
		printf("@ %c W%d: account_issue: issued[%d]++, dirty = %d (l.511-513)\n", me, w, 1, dirty) } \
	fi

/* spin_lock_irq*(&bc->lock), spin_unlock_irq*(): a test-and-set. */
inline lock()
{
	atomic { !lk -> lk = true }
}

inline unlock()
{
	lk = false
}

/*
 * A sum over the CPUs: for_each_possible_cpu(cpu) v += READ_ONCE(ctr),
 * one step per CPU.  b names the barrier in the printout; fmt0 and fmt1
 * name the counter (Promela's printf has no %s).
 */
#define SUM(ctr, v, b, fmt0, fmt1) \
	atomic { v = ctr[0]; printf(fmt0, me, b, ctr[0]) }; \
	d_step { v = v + ctr[1]; printf(fmt1, me, b, ctr[1], v) }
#define SUM_WRITES(b) SUM(writes, S, b, \
	"@ %c F%d:   reads writes[0] = %d\n", "@ %c F%d:   reads writes[1] = %d: sum S = %d\n")
#define SUM_COMPLETED(b) SUM(completed, C, b, \
	"@ %c F%d:   reads completed[0] = %d\n", "@ %c F%d:   reads completed[1] = %d: sum C = %d\n")
#define SUM_ISSUED(b) SUM(issued, I, b, \
	"@ %c F%d:   reads issued[0] = %d\n", "@ %c F%d:   reads issued[1] = %d: sum I = %d\n")

/*
 * The pass over the counts that proves the drain, by a barrier that closed
 * the gate.  Fixed: barrier_snapshot(): S (writes), smp_rmb(), C
 * (completed), smp_rmb(), I (issued).  N1_REREAD: barrier_inflight()
 * l.432-444: C (l.437-438), smp_rmb() (l.440), I (l.441-442); no S.
 */
#if defined(N1_REREAD)
#define PASS(b) SUM_COMPLETED(b); SUM_ISSUED(b)
#elif defined(PASS_WRITES_LAST)
/* A mutant: one pass, but the writes summed after the issues. */
#define PASS(b) SUM_COMPLETED(b); SUM_ISSUED(b); SUM_WRITES(b)
#else
#define PASS(b) SUM_WRITES(b); SUM_COMPLETED(b); SUM_ISSUED(b)
#endif

/*
 * N1_REREAD only: barrier_writes() l.446-454, read afresh, as
 * barrier_dirty_locked() (l.462) and barrier_clean_locked() (l.469) do.
 */
#define REREAD(b) SUM(writes, S, b, \
	"@ %c F%d:   reads writes[0] = %d (again)\n", "@ %c F%d:   reads writes[1] = %d: sum S = %d (again)\n")

/*
 * One write, synchronous: barrier_map() of a write bio, the device, and
 * barrier_end_io().  Returns when its submitter has seen it complete.
 */
inline submit_write(w)
{
	/* barrier_map() l.577 -> barrier_pass_gate() l.411: this_cpu_inc(issued) */
	if
	:: d_step { wst[w] = WS_MAP; issued[0]++;
		printf("@ %c W%d: pass_gate: issued[%d]++ (l.411)\n", me, w, 0) }
	:: d_step { wst[w] = WS_MAP; issued[1]++;
		printf("@ %c W%d: pass_gate: issued[%d]++ (l.411)\n", me, w, 1) }
	fi;
	/* (fix: smp_wmb()) l.413: this_cpu_inc(writes) */
	THIS_CPU_INC(writes, "@ %c W%d: pass_gate: writes[%d]++ (l.413)\n", me, w);
	/* l.415 smp_mb(); l.416 READ_ONCE(bc->busy) */
	if
	:: atomic { !busy -> wst[w] = WS_ISSUED;
		printf("@ %c W%d: pass_gate: reads busy = 0: passed, sent to the device (l.416-418, l.579)\n", me, w) }
	:: atomic { busy ->
		printf("@ %c W%d: pass_gate: reads busy = 1: the gate is closed (l.416)\n", me, w) };
		/* l.420 barrier_done_one() l.403: the bounce counts itself completed */
		THIS_CPU_INC(completed, "@ %c W%d: bounce: completed[%d]++ (l.420, l.403)\n", me, w);
		/* barrier_map(): the locked path, l.582 */
		atomic { !lk -> lk = true;
			printf("@ %c W%d: locked path: lock (l.582), busy = %d\n", me, w, busy) };
		if
		:: busy ->
			/* l.598-601: queued behind the barrier; the worker issues it */
			d_step { q!w; wst[w] = WS_QUEUED;
				printf("@ %c W%d: locked path: busy: queued (l.598-601)\n", me, w) };
			unlock();
			wst[w] == WS_ISSUED	/* until barrier_work() submits it */
		:: else ->
			/* l.610-614: the gate reopened meanwhile: counted and issued */
			ACCOUNT_ISSUE(w);
			unlock();
			d_step { wst[w] = WS_ISSUED;
				printf("@ %c W%d: locked path: sent to the device (l.614)\n", me, w) }
		fi
	fi;
	/* The device completes it: the data is in its volatile cache. */
	d_step { cached = cached | (1 << w); wst[w] = WS_CACHED;
		printf("@ %c W%d: the device completes it: in the volatile cache\n", me, w) };
	/* barrier_end_io() l.684 -> barrier_done_one() l.403, on any CPU */
	if
	:: d_step { completed[0]++; wst[w] = WS_DONE;
		printf("@ %c W%d: end_io: completed[%d]++ (l.684, l.403)\n", me, w, 0) }
	:: d_step { completed[1]++; wst[w] = WS_DONE;
		printf("@ %c W%d: end_io: completed[%d]++ (l.684, l.403)\n", me, w, 1) }
	fi
}

/*
 * barrier_map() l.645-657: the gate stays closed, the barrier is queued
 * (l.645), the lock dropped (l.649) and the worker kicked (l.657); then
 * the submitter waits for the worker to complete it.
 */
#define QUEUE_AND_KICK(b) \
	d_step { q!(BAR + b); S = 0; C = 0; I = 0; \
		printf("@ %c F%d: not the direct way: queued for the worker (l.645)\n", me, b) }; \
	unlock(); \
	d_step { kick = true; printf("@ %c F%d: kicks the worker (l.657)\n", me, b) }; \
	bdone[b]

/*
 * One empty flush barrier (an fdatasync()), synchronous: barrier_map(),
 * the direct way or the queue.  Returns when it has succeeded (nothing
 * fails in this model).
 */
inline submit_barrier(b)
{
	/* barrier_map() l.582: spin_lock_irqsave(); the ghost "before" mask */
	atomic { !lk -> lk = true; before[b] = ACCEPTED(0) | ACCEPTED(1);
		printf("@ %c F%d: map: lock (l.582); writes accepted before it: mask %d\n",
			me, b, before[b]) };
	if
	:: busy ->
		/* l.598-601: behind a closed gate: the worker runs it */
		d_step { q!(BAR + b);
			printf("@ %c F%d: busy: queued behind the closed gate (l.598-601)\n", me, b) };
		unlock();
		bdone[b]
	:: else ->
		/* l.638 barrier_close_gate_locked() l.384-386: busy = true; smp_mb() */
		d_step { busy = true;
			printf("@ %c F%d: closes the gate: busy = 1 (l.638, l.384)\n", me, b) };
		if
		:: /*
		    * l.882 DIRECT_NO before the pass: the module parameter direct
		    * (writable at run time) is 0, or the bio is REQ_NOWAIT.
		    */
			QUEUE_AND_KICK(b)
#ifndef NO_DIRECT
		:: /* barrier_map_direct() l.882: the pass that proves the drain */
			PASS(b);
			if
			:: I != C ->
				/* l.883 DIRECT_NO */
				QUEUE_AND_KICK(b)
			:: else ->
#ifdef N1_REREAD
				/* l.884 barrier_dirty_locked(): the sum of writes, again */
				REREAD(b);
#endif
				/* l.884: dirty || S != writes_flushed */
				d_step { need = dirty || S != writes_flushed;
					printf("@ %c F%d: inflight 0; flush needed = %d (dirty %d, writes %d, writes_flushed %d) (l.884)\n",
						me, b, need, dirty, S, writes_flushed) };
#ifdef N1_REREAD
				/* l.911 barrier_clean_locked() l.469: the sum of writes, once more */
				REREAD(b);
#endif
				/* l.911 barrier_clean_locked() l.468-469 */
				d_step { dirty = false; writes_flushed = S; S = 0; C = 0; I = 0;
					printf("@ %c F%d: clean: dirty = 0, writes_flushed = %d (l.911, l.468-469)\n",
						me, b, writes_flushed) };
				if
				:: !need ->
					/*
					 * l.916 DIRECT_DONE; l.641 barrier_open_gate_locked()
					 * l.392; l.649 unlock; l.653 bio_endio(): success.
					 */
					d_step { assert(DRAINED(b)); assert(len(q) == 0); busy = false;
						printf("@ %c F%d: no flush: reopens the gate, succeeds (l.916, l.641, l.653)\n", me, b) };
					unlock()
				:: else ->
					/* l.931 bc->direct = true; l.649 unlock; l.660 sent down as a flush */
					direct = true;
					unlock();
					d_step { assert(DRAINED(b)); fm = cached;
						printf("@ %c F%d: flush sent to the device: covers the cache, mask %d (l.660)\n",
							me, b, fm) };
					/* the device completes the flush */
					d_step { durable = durable | fm; fm = 0;
						printf("@ %c F%d: the device completes the flush: durable mask %d\n", me, b, durable) };
					/* barrier_direct_endio() l.972-980 */
					lock();
					direct = false;
					unlock();
					/* l.989-993: reopen on an empty queue, else kick (l.995) */
					lock();
					if
					:: len(q) == 0 ->
						d_step { busy = false;
							printf("@ %c F%d: direct end_io: queue empty, reopens the gate (l.992)\n", me, b) };
						unlock()
					:: else ->
						unlock();
						d_step { kick = true;
							printf("@ %c F%d: direct end_io: kicks the worker (l.995)\n", me, b) }
					fi
				fi
			fi
#endif
		fi
	fi;
	d_step { need = false;
		printf("@ %c F%d: succeeds\n", me, b) }
}

/*
 * Thread A: write W0, wait for it, then fdatasync() (F0): when F0 succeeds,
 * W0 must be durable.
 */
active proctype ThreadA()
{
	byte me = 'A';
	byte S, C, I, fm;
	bool need;

	submit_write(W0);
	submit_barrier(F0);
	d_step { printf("@ A F0: succeeded after W0 completed: W0 durable = %d\n",
			(durable >> W0) & 1);
		assert(durable & (1 << W0)) }
}

/*
 * Thread B: fdatasync() with nothing of its own written (F1), then a write
 * W1 and its fdatasync() (F2): when F2 succeeds, W1 must be durable.
 */
active proctype ThreadB()
{
	byte me = 'B';
	byte S, C, I, fm;
	bool need;

	submit_barrier(F1);
#ifndef B_NO_WRITE
	submit_write(W1);
#endif
	submit_barrier(F2);
#ifndef B_NO_WRITE
	d_step { printf("@ B F2: succeeded after W1 completed: W1 durable = %d\n",
			(durable >> W1) & 1);
		assert(durable & (1 << W1)) }
#endif
}

#ifdef THREAD_C
/* Thread C (-DTHREAD_C): one bare fdatasync() (F3), beside A and B. */
active proctype ThreadC()
{
	byte me = 'C';
	byte S, C, I, fm;
	bool need;

	submit_barrier(F3)
}
#endif

/*
 * barrier_work() l.1192, run by the workqueue when kicked.  b is the first
 * barrier of the batch (for the printout), batch the mask of its barriers,
 * wm the mask of the writes released.
 */
active proctype Worker()
{
	byte me = 'K';
	byte S, C, I, fm, h, b, batch, wm, i;
	bool need;

end_idle:
	do
	:: atomic { kick -> kick = false; printf("@ K: the worker runs\n") };
		do	/* for (;;) l.1199 */
		:: lock();	/* l.1203 */
			if
			:: direct ->
				/* l.1205-1207: a stray run; the direct end_io kicks again */
				unlock();
				break
			:: !direct && len(q) == 0 ->
				/* l.1220-1224: nothing queued: reopen the gate, stop */
				d_step { busy = false;
					printf("@ K: queue empty: reopens the gate (l.1222)\n") };
				unlock();
				break
			:: !direct && len(q) > 0 ->
				q?<h>;	/* l.1220 bio_list_peek() */
				if
				:: h < BAR ->
					/* l.1228-1235: the plain bios up to the next barrier */
					do
					:: h < BAR ->
						q?eval(h);	/* l.1231 barrier_dequeue() */
						ACCOUNT_ISSUE(h);	/* l.1232 */
						wm = wm | (1 << h);
						if
						:: len(q) > 0 -> q?<h>
						:: else -> h = BAR
						fi
					:: else -> break
					od;
					h = 0;
					unlock();	/* l.1235 */
					/* l.1236-1237 barrier_submit_queued() each */
					do
					:: wm & (1 << W0) ->
						d_step { wst[W0] = WS_ISSUED; wm = wm & ~(1 << W0);
							printf("@ K W0: submitted to the device (l.1237)\n") }
					:: wm & (1 << W1) ->
						d_step { wst[W1] = WS_ISSUED; wm = wm & ~(1 << W1);
							printf("@ K W1: submitted to the device (l.1237)\n") }
					:: else -> break
					od
				:: else ->
					/* l.1241 the barrier; l.1243-1246 the empty barriers right behind it */
					d_step { q?h; b = h - BAR; batch = 1 << b; h = 0 };
					if
					:: len(q) > 0 -> q?<h>
					:: else -> skip
					fi;
					do
					:: h >= BAR ->
						q?eval(h);
						batch = batch | (1 << (h - BAR));
						if
						:: len(q) > 0 -> q?<h>
						:: else -> h = 0
						fi
					:: else -> break
					od;
					atomic { h = 0;
						printf("@ K F%d: dequeued, batch mask %d (l.1241-1246)\n", b, batch) };
					unlock();	/* l.1248 */
					/* l.1250 barrier_run(): STEP_DRAIN, barrier_drain() l.700-702 */
					lock();
					d_step { busy = true;
						printf("@ K F%d: drain: closes the gate again (l.701, l.384)\n", b) };
					unlock();
					/*
					 * l.703 wait_event(drain_wait, !barrier_inflight()): the
					 * pass, retaken until it shows nothing in flight (the fix:
					 * !barrier_snapshot(), whose S it keeps, bc->writes_drained)
					 */
					do
					:: PASS(b);
						if
						:: I == C -> break
						:: else -> d_step { S = 0; C = 0; I = 0 }
						fi
					od;
					/* STEP_DECIDE, barrier_decide() l.1041-1070 (the fix: S is writes_drained) */
					lock();
#ifdef N1_REREAD
					REREAD(b);	/* l.1065 barrier_dirty_locked() */
#endif
					d_step { need = dirty || S != writes_flushed;
						printf("@ K F%d: inflight 0; flush needed = %d (dirty %d, writes %d, writes_flushed %d) (l.1065)\n",
							b, need, dirty, S, writes_flushed) };
					unlock();
					if
					:: need ->
						/* STEP_PREFLUSH, barrier_flush() l.716-720 */
						lock();
#ifdef N1_REREAD
						REREAD(b);	/* l.719 barrier_clean_locked() */
#endif
						d_step { dirty = false; writes_flushed = S;
							printf("@ K F%d: clean: dirty = 0, writes_flushed = %d (l.719)\n",
								b, writes_flushed) };
						unlock();
						/* l.722 blkdev_issue_flush(), synchronous */
						d_step { BATCH_DRAINED();
							fm = cached;
							printf("@ K F%d: flush sent to the device: covers the cache, mask %d (l.722)\n",
								b, fm) };
						d_step { durable = durable | fm; fm = 0;
							printf("@ K F%d: the device completes the flush: durable mask %d\n",
								b, durable) }
					:: else ->
						d_step { BATCH_DRAINED();
							printf("@ K F%d: no flush needed\n", b) }
					fi;
					/* l.1159-1160: the batch completes, with success */
					d_step { i = 0;
						do
						:: i < NB -> bdone[i] = bdone[i] || (batch & (1 << i)); i++
						:: else -> i = 0; break
						od;
						printf("@ K F%d: completes batch mask %d (l.1160)\n", b, batch);
						S = 0; C = 0; I = 0; need = false; batch = 0; b = 0 }
				fi
			fi
		od
	od
}
