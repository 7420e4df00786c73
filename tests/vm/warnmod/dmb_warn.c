// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only module for the guest harness's self-test: loading it emits a
 * kernel WARNING, which the runner's dmesg scan must turn into a failed
 * test.  It refuses to stay loaded, so nothing needs unloading.
 */
#include <linux/module.h>
#include <linux/bug.h>

static int __init dmb_warn_init(void)
{
	WARN(1, "dmb_warn: deliberate warning for the harness self-test\n");
	return -ECANCELED;
}
module_init(dmb_warn_init);

MODULE_DESCRIPTION("dm-barrier test harness: emits one WARNING on load");
MODULE_LICENSE("GPL");
