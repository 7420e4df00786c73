// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module: widens a race window.  A kprobe on the function named
 * by symbol= busy-waits delay_ms at every entry, so a test can land a
 * message or a suspend inside a window that is otherwise microseconds
 * wide, and show that nothing is lost there.  hits counts the entries.
 */
#include <linux/module.h>
#include <linux/kprobes.h>
#include <linux/delay.h>

static char *symbol;
module_param(symbol, charp, 0444);
MODULE_PARM_DESC(symbol, "Function to delay at entry");

static unsigned int delay_ms = 200;
module_param(delay_ms, uint, 0444);
MODULE_PARM_DESC(delay_ms, "Busy-wait this long at each entry (at most 2000)");

static atomic_t hits = ATOMIC_INIT(0);
module_param_named(hits, hits.counter, int, 0444);
MODULE_PARM_DESC(hits, "Entries delayed so far");

static int dmb_kdelay_pre(struct kprobe *p, struct pt_regs *regs)
{
	atomic_inc(&hits);
	mdelay(delay_ms);
	return 0;
}

static struct kprobe dmb_kdelay_probe = {
	.pre_handler = dmb_kdelay_pre,
};

static int __init dmb_kdelay_init(void)
{
	if (!symbol || delay_ms > 2000)
		return -EINVAL;
	dmb_kdelay_probe.symbol_name = symbol;
	return register_kprobe(&dmb_kdelay_probe);
}

static void __exit dmb_kdelay_exit(void)
{
	unregister_kprobe(&dmb_kdelay_probe);
}

module_init(dmb_kdelay_init);
module_exit(dmb_kdelay_exit);

MODULE_DESCRIPTION("dm-barrier tests: delay a kernel function to widen a race window");
MODULE_LICENSE("GPL");
