// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmod.c: loading dm-barrier with libkmod when the kernel lacks the
 * barrier target.  modprobe's resolution (aliases, dependencies such as
 * dm-mod, blacklist ignored as for an explicit request) without running
 * a program.
 */
#include <libkmod.h>
#include <stdio.h>
#include <string.h>

#include "libdmbarrier-private.h"

#define MODULE_NAME "dm-barrier"

static void kmod_log_forward(void *data, int priority, const char *file, int line,
			     const char *fn, const char *format, va_list args)
{
	char msg[512];
	size_t n;

	/* libkmod ends its messages with a newline; ours have none. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
	vsnprintf(msg, sizeof(msg), format, args);
#pragma GCC diagnostic pop
	n = strlen(msg);
	while (n > 0 && msg[n - 1] == '\n')
		msg[--n] = '\0';
	dmb_log(data, priority, file, line, fn, "%s", msg);
}

static inline void kmod_unrefp(struct kmod_ctx **k)
{
	kmod_unref(*k);
}

static inline void kmod_module_unref_listp(struct kmod_list **l)
{
	kmod_module_unref_list(*l);
}

int kmod_load_barrier(struct dmb_ctx *ctx)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *k = NULL;
	_cleanup_(kmod_module_unref_listp) struct kmod_list *list = NULL;
	struct kmod_list *l;
	int r, n = 0;

	k = kmod_new(NULL, NULL);
	if (!k)
		return dmb_fail(ctx, -ENOMEM, "cannot set up libkmod");
	kmod_set_log_fn(k, kmod_log_forward, ctx);
	kmod_set_log_priority(k, ctx->log_priority);

	r = kmod_module_new_from_lookup(k, MODULE_NAME, &list);
	if (r < 0)
		return dmb_fail(ctx, r, "cannot look up module %s: %s", MODULE_NAME, strerror(-r));
	if (!list)
		return dmb_fail(ctx, -ENOENT,
				"module %s is not installed for this kernel (see depmod, make install)",
				MODULE_NAME);
	kmod_list_foreach(l, list) {
		struct kmod_module *mod = kmod_module_get_module(l);

		r = kmod_module_probe_insert_module(mod, 0, NULL, NULL, NULL, NULL);
		kmod_module_unref(mod);
		if (r < 0)
			return dmb_fail(ctx, r, "cannot load module %s: %s", MODULE_NAME,
					strerror(-r));
		n++;
	}
	dmb_dbg(ctx, "loaded %d module(s) for %s", n, MODULE_NAME);
	return 0;
}
