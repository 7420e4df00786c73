// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * ctx.c: the library context: refcount, log function and priority, the
 * last failure's message; and freeing the string lists the library hands
 * out.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "libdmbarrier-private.h"

static int log_priority_parse(const char *s)
{
	static const struct {
		const char *name;
		int prio;
	} names[] = {
		{ "err", LOG_ERR },	   { "error", LOG_ERR }, { "warning", LOG_WARNING },
		{ "notice", LOG_NOTICE }, { "info", LOG_INFO }, { "debug", LOG_DEBUG },
	};
	char *end;
	long v;

	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (!strcmp(s, names[i].name))
			return names[i].prio;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < LOG_EMERG || v > LOG_DEBUG)
		return -EINVAL;
	return (int)v;
}

_public_ int dmb_ctx_new(struct dmb_ctx **ret)
{
	struct dmb_ctx *ctx;
	const char *env;

	if (!ret)
		return -EINVAL;
	ctx = calloc(1, sizeof(*ctx));
	if (!ctx)
		return -ENOMEM;
	ctx->refcount = 1;
	ctx->log_priority = LOG_ERR;
	env = secure_getenv("DMB_LOG");
	if (env && log_priority_parse(env) >= 0)
		ctx->log_priority = log_priority_parse(env);
	dm_log_attach(ctx);
	*ret = ctx;
	return 0;
}

_public_ struct dmb_ctx *dmb_ctx_ref(struct dmb_ctx *ctx)
{
	if (ctx)
		ctx->refcount++;
	return ctx;
}

_public_ struct dmb_ctx *dmb_ctx_unref(struct dmb_ctx *ctx)
{
	if (!ctx || --ctx->refcount > 0)
		return NULL;
	dm_log_detach(ctx);
	free(ctx);
	return NULL;
}

_public_ void dmb_ctx_set_log_fn(struct dmb_ctx *ctx, dmb_log_fn fn, void *userdata)
{
	ctx->log_fn = fn;
	ctx->log_data = userdata;
}

_public_ void dmb_ctx_set_log_priority(struct dmb_ctx *ctx, int priority)
{
	ctx->log_priority = priority;
}

_public_ int dmb_ctx_get_log_priority(const struct dmb_ctx *ctx)
{
	return ctx->log_priority;
}

_public_ const char *dmb_ctx_get_error(const struct dmb_ctx *ctx)
{
	return ctx->error;
}

void dmb_logv(struct dmb_ctx *ctx, int priority, const char *file, int line, const char *fn,
	      const char *format, va_list args)
{
	int saved = errno;

	if (ctx->log_fn && priority <= ctx->log_priority)
		ctx->log_fn(ctx->log_data, priority, file, line, fn, format, args);
	errno = saved;
}

void dmb_log(struct dmb_ctx *ctx, int priority, const char *file, int line, const char *fn,
	     const char *format, ...)
{
	va_list args;

	va_start(args, format);
	dmb_logv(ctx, priority, file, line, fn, format, args);
	va_end(args);
}

void dmb_call_begin(struct dmb_ctx *ctx)
{
	ctx->error[0] = '\0';
	ctx->dm_error[0] = '\0';
	ctx->dm_errno = 0;
	dm_log_attach(ctx);
}

int dmb_fail(struct dmb_ctx *ctx, int r, const char *format, ...)
{
	va_list args;

	va_start(args, format);
	vsnprintf(ctx->error, sizeof(ctx->error), format, args);
	va_end(args);
	dmb_dbg(ctx, "failed (%s): %s", strerror(-r), ctx->error);
	return r;
}

_public_ char **dmb_strv_free(char **strv)
{
	if (!strv)
		return NULL;
	for (char **s = strv; *s; s++)
		free(*s);
	free(strv);
	return NULL;
}
