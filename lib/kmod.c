// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * kmod.c: what libkmod knows of dm-barrier: whether the module is loaded
 * (or built in).  Nothing here loads a module: the kernel loads
 * dm-barrier by itself when the first "barrier" table is loaded (dm core's
 * request_module("dm-barrier")), so neither barrierctl nor barrierd needs
 * CAP_SYS_MODULE.  The loaded target's version comes from device-mapper's
 * own target list (dm.c), which is what the kernel really runs.
 */
#include <libkmod.h>
#include <stdio.h>
#include <string.h>

#include "libdmbarrier-private.h"

#define MODULE_NAME "dm_barrier"

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

static inline void kmod_module_unrefp(struct kmod_module **m)
{
	if (*m)
		kmod_module_unref(*m);
}

int kmod_barrier_state(struct dmb_ctx *ctx, enum dmb_module_state *ret)
{
	_cleanup_(kmod_unrefp) struct kmod_ctx *k = NULL;
	_cleanup_(kmod_module_unrefp) struct kmod_module *mod = NULL;
	int r;

	k = kmod_new(NULL, NULL);
	if (!k)
		return dmb_fail(ctx, -ENOMEM, "cannot set up libkmod");
	kmod_set_log_fn(k, kmod_log_forward, ctx);
	kmod_set_log_priority(k, ctx->log_priority);

	r = kmod_module_new_from_name(k, MODULE_NAME, &mod);
	if (r < 0)
		return dmb_fail(ctx, r, "cannot look up module %s: %s", MODULE_NAME, strerror(-r));
	r = kmod_module_get_initstate(mod);
	switch (r) {
	case KMOD_MODULE_BUILTIN:
		*ret = DMB_MODULE_BUILTIN;
		return 0;
	case KMOD_MODULE_LIVE:
		*ret = DMB_MODULE_LIVE;
		return 0;
	case KMOD_MODULE_COMING:
		*ret = DMB_MODULE_COMING;
		return 0;
	case KMOD_MODULE_GOING:
		*ret = DMB_MODULE_GOING;
		return 0;
	case -ENOENT:
		*ret = DMB_MODULE_ABSENT;
		return 0;
	default:
		return dmb_fail(ctx, r < 0 ? r : -EIO, "cannot read the state of module %s: %s",
				MODULE_NAME, strerror(r < 0 ? -r : EIO));
	}
}

_public_ int dmb_module_state(struct dmb_ctx *ctx, enum dmb_module_state *ret)
{
	enum dmb_module_state st;
	int r;

	dmb_call_begin(ctx);
	r = kmod_barrier_state(ctx, &st);
	if (r < 0)
		return r;
	*ret = st;
	return 0;
}

_public_ const char *dmb_module_state_to_string(enum dmb_module_state state)
{
	static const char *const names[_DMB_MODULE_STATE_MAX] = {
		[DMB_MODULE_ABSENT] = "not loaded",
		[DMB_MODULE_LIVE] = "loaded",
		[DMB_MODULE_COMING] = "loading",
		[DMB_MODULE_GOING] = "unloading",
		[DMB_MODULE_BUILTIN] = "built in",
	};

	if ((unsigned int)state >= _DMB_MODULE_STATE_MAX)
		return NULL;
	return names[state];
}
