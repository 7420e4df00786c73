// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the guest harness's self-tests: loading it makes
 * the kernel report a bug, which the runner's kernel-log scan
 * (tests/vm/kscan.sh) must turn into a failed test.  mode= picks the bug:
 *
 *   warn     a WARNING (any kernel; tests/vm/selftest/warns.sh)
 *   lockdep  two mutexes taken in both orders, one after the other: no
 *            deadlock, but the AB-BA inversion lockdep reports (the debug
 *            kernel; tests/guest/debug-kernel.sh)
 *   leak     a buffer allocated and its only pointer dropped, for kmemleak
 *            to find (the debug kernel); the buffer starts with "dmb_warn
 *            leak" so that its report says whose it is
 *   spin     a hung guest (tests/vm/selftest/lockup.sh): every CPU spins
 *            in dmb_warn_spin() with preemption off (a kthread bound to
 *            each, and the loading thread), for ever: nothing else runs,
 *            the soft-lockup watchdog reports each CPU, and the runner
 *            must dump the guest and name the function
 *
 * It refuses to stay loaded, so nothing needs unloading (but for spin,
 * which ends only with the guest).
 */
#include <linux/module.h>
#include <linux/bug.h>
#include <linux/mutex.h>
#include <linux/kthread.h>
#include <linux/preempt.h>
#include <linux/slab.h>
#include <linux/string.h>

static char *mode = "warn";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "the bug to cause: warn (default), lockdep, leak or spin");

static DEFINE_MUTEX(dmb_warn_a);
static DEFINE_MUTEX(dmb_warn_b);

static void dmb_warn_inversion(void)
{
	mutex_lock(&dmb_warn_a);
	mutex_lock(&dmb_warn_b);
	mutex_unlock(&dmb_warn_b);
	mutex_unlock(&dmb_warn_a);

	/* The other order: lockdep has seen a -> b, this is b -> a. */
	mutex_lock(&dmb_warn_b);
	mutex_lock(&dmb_warn_a);
	mutex_unlock(&dmb_warn_a);
	mutex_unlock(&dmb_warn_b);
}

#define DMB_WARN_LEAK_SIZE 200
static const char dmb_warn_leak_tag[] = "dmb_warn leak";

static int dmb_warn_leak(void)
{
	char *p = kzalloc(DMB_WARN_LEAK_SIZE, GFP_KERNEL);

	if (!p)
		return -ENOMEM;
	memcpy(p, dmb_warn_leak_tag, sizeof(dmb_warn_leak_tag));
	/*
	 * p escapes into printk (hashed: the log holds no pointer to the
	 * buffer), or the compiler drops the memcpy into memory nothing
	 * reads.  Then p goes out of scope: nothing points at the buffer.
	 */
	pr_info("dmb_warn: deliberately leaking %d bytes at %p\n", DMB_WARN_LEAK_SIZE, p);
	return 0;
}

static noinline void dmb_warn_spin(void)
{
	preempt_disable();
	for (;;)
		cpu_relax();
}

static int dmb_warn_spin_thread(void *unused)
{
	dmb_warn_spin();
	return 0;
}

static void dmb_warn_spin_all(void)
{
	struct task_struct *t;
	unsigned int cpu;

	for_each_online_cpu(cpu) {
		t = kthread_create(dmb_warn_spin_thread, NULL, "dmb_spin/%u", cpu);
		if (IS_ERR(t))
			continue;
		kthread_bind(t, cpu);
		wake_up_process(t);
	}
	dmb_warn_spin();
}

static int __init dmb_warn_init(void)
{
	int r = 0;

	if (!strcmp(mode, "warn"))
		WARN(1, "dmb_warn: deliberate warning for the harness self-test\n");
	else if (!strcmp(mode, "lockdep"))
		dmb_warn_inversion();
	else if (!strcmp(mode, "leak"))
		r = dmb_warn_leak();
	else if (!strcmp(mode, "spin"))
		dmb_warn_spin_all();
	else
		return -EINVAL;
	return r ? r : -ECANCELED;
}
module_init(dmb_warn_init);

MODULE_DESCRIPTION("dm-barrier test harness: causes one kernel bug report on load");
MODULE_LICENSE("GPL");
