/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * polkit.h: authorization of barrierd's mutating D-Bus calls through polkit
 * (org.freedesktop.PolicyKit1), asked asynchronously; the action ids are
 * those of daemon/org.dmbarrier1.policy.
 */
#ifndef BARRIERD_POLKIT_H
#define BARRIERD_POLKIT_H

#include <systemd/sd-bus.h>

#define POLKIT_ACTION_MANAGE_DEVICES "org.dmbarrier1.manage-devices"
#define POLKIT_ACTION_SET_MODE "org.dmbarrier1.set-mode"
#define POLKIT_ACTION_SET_WRITE_CACHE "org.dmbarrier1.set-write-cache"
#define POLKIT_ACTION_BARRIER "org.dmbarrier1.barrier"
#define POLKIT_ACTION_RESET_STATS "org.dmbarrier1.reset-stats"

/* Authorization checks in flight (or answered, not yet acted on) at most. */
#define POLKIT_QUERIES_MAX 64

struct polkit_registry;

/*
 * May the sender of call do action?  Returns 1: yes, go on; 0: polkit was
 * asked, the method handler returns 1 now and sd-bus dispatches call to it
 * again once the answer is in; < 0 with error set: no (AccessDenied,
 * InteractiveAuthorizationRequired, or Busy when too many checks are in
 * flight).  The handler must be idempotent up to this point: it runs
 * twice.  *reg is made on first use.
 */
int polkit_authorize(struct polkit_registry **reg, sd_bus_message *call, const char *action,
		     sd_bus_error *error);

/* Cancels what is in flight (the calls waiting get no reply); NULL-safe. */
struct polkit_registry *polkit_registry_free(struct polkit_registry *reg);

#endif
