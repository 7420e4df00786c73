// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * polkit.c: whether the sender of a mutating call may do it, as polkit
 * says (org.freedesktop.PolicyKit1.Authority.CheckAuthorization, subject
 * the caller's unique bus name), without blocking the event loop.  The
 * pattern is systemd's (bus-polkit.c) and udisks2's: the first time a
 * handler asks, the question goes out asynchronously and the call is kept;
 * when the answer comes, the verdict is stored beside the call and the call
 * is put back into sd-bus's read queue, so the handler runs again, from
 * the start (its object and arguments looked up anew: a device removed
 * meanwhile is not acted on), and this time finds the verdict.
 *
 * When polkit cannot be asked (not installed, so the bus has no
 * org.freedesktop.PolicyKit1: ServiceUnknown; or any other error, such as
 * an action it does not know because the policy file is missing), the rule
 * is the one barrierd had before polkit: the caller's effective uid, as
 * the bus vouches for it, must be 0.  That is never more than polkit would
 * allow, since polkit authorizes uid 0 for everything.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "daemon.h"
#include "log.h"
#include "macro.h"
#include "polkit.h"

#define POLKIT_BUS "org.freedesktop.PolicyKit1"
#define POLKIT_PATH "/org/freedesktop/PolicyKit1/Authority"
#define POLKIT_IFACE "org.freedesktop.PolicyKit1.Authority"
/* CheckAuthorization's flags: AllowUserInteraction. */
#define POLKIT_FLAG_ALLOW_USER_INTERACTION 1U
/* A caller allowed to be asked for a password has time to type it. */
#define POLKIT_INTERACTIVE_TIMEOUT_USEC (120 * USEC_PER_SEC)

enum verdict {
	VERDICT_PENDING,
	VERDICT_YES,
	VERDICT_NO,		/* error holds the reply */
};

struct polkit_query {
	struct polkit_registry *reg;
	sd_bus_message *call;	/* the caller's message, dispatched again */
	const char *action;	/* static */
	sd_bus_slot *slot;	/* CheckAuthorization in flight */
	sd_event_source *defer;	/* drops an answer its call never came back for */
	enum verdict verdict;
	sd_bus_error error;
};

struct polkit_registry {
	struct polkit_query *queries[POLKIT_QUERIES_MAX];
	size_t n_queries;
	bool unavailable;	/* the fallback is in use (logged once when it starts) */
};

static struct polkit_query *query_free(struct polkit_query *q)
{
	struct polkit_registry *reg;

	if (!q)
		return NULL;
	reg = q->reg;
	for (size_t i = 0; i < reg->n_queries; i++)
		if (reg->queries[i] == q) {
			reg->queries[i] = reg->queries[--reg->n_queries];
			break;
		}
	q->slot = sd_bus_slot_unref(q->slot);
	q->defer = sd_event_source_unref(q->defer);
	sd_bus_message_unref(q->call);
	sd_bus_error_free(&q->error);
	free(q);
	return NULL;
}

struct polkit_registry *polkit_registry_free(struct polkit_registry *reg)
{
	if (!reg)
		return NULL;
	while (reg->n_queries)
		query_free(reg->queries[reg->n_queries - 1]);
	free(reg);
	return NULL;
}

static void sender_describe(sd_bus_message *call, uid_t *euid, bool *have_euid)
{
	_cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;

	*have_euid = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID, &creds) >= 0 &&
		     sd_bus_creds_get_euid(creds, euid) >= 0;
}

/* The rule without polkit: root only. */
static void verdict_without_polkit(struct polkit_query *q)
{
	const char *member = sd_bus_message_get_member(q->call);
	bool have_euid;
	uid_t euid;

	sender_describe(q->call, &euid, &have_euid);
	if (have_euid && euid == 0) {
		q->verdict = VERDICT_YES;
		return;
	}
	q->verdict = VERDICT_NO;
	if (!have_euid) {
		log_warning("Refused %s() from %s: cannot get its credentials",
			    member, strna(sd_bus_message_get_sender(q->call)));
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
					"Cannot verify the caller's credentials");
		return;
	}
	log_info("Refused %s() from %s (uid %u): not root, and polkit cannot be asked", member,
		 strna(sd_bus_message_get_sender(q->call)), (unsigned int)euid);
	(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
				"%s() needs root while polkit is not available (the caller has uid %u)",
				member, (unsigned int)euid);
}

/* polkit's answer: (is_authorized, is_challenge, details); < 0 if unreadable. */
static int verdict_from_reply(struct polkit_query *q, sd_bus_message *reply)
{
	const char *member = sd_bus_message_get_member(q->call);
	int authorized, challenge, r;
	bool have_euid;
	uid_t euid;

	r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
	if (r < 0)
		return r;
	r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
	if (r < 0)
		return r;
	if (authorized) {
		q->verdict = VERDICT_YES;
		return 0;
	}
	q->verdict = VERDICT_NO;
	sender_describe(q->call, &euid, &have_euid);
	log_info("Refused %s() from %s (uid %d): polkit does not authorize %s%s", member,
		 strna(sd_bus_message_get_sender(q->call)), have_euid ? (int)euid : -1, q->action,
		 challenge ? " without authentication" : "");
	if (challenge && sd_bus_message_get_allow_interactive_authorization(q->call) <= 0)
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
					"%s() needs authentication for %s: call again allowing interactive authorization",
					member, q->action);
	else
		(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
					"%s() refused: not authorized for %s (polkit)", member,
					q->action);
	return 0;
}

static int on_defer(sd_event_source *s, void *userdata)
{
	struct polkit_query *q = userdata;

	/* The call was answered (or its object vanished) without using the verdict. */
	query_free(q);
	return 0;
}

static int on_check_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error)
{
	struct polkit_query *q = userdata;
	struct polkit_registry *reg = q->reg;
	const sd_bus_error *e = sd_bus_message_get_error(reply);
	sd_bus *bus = sd_bus_message_get_bus(q->call);
	int r;

	q->slot = sd_bus_slot_unref(q->slot);
	if (e) {
		if (!reg->unavailable)
			log_warning("Cannot ask polkit (%s: %s); only root may change anything until it answers",
				    e->name, strna(e->message));
		reg->unavailable = true;
		verdict_without_polkit(q);
	} else {
		r = verdict_from_reply(q, reply);
		if (r < 0) {
			log_warning_errno(r, "Cannot read polkit's answer, treating it as a refusal: %m");
			q->verdict = VERDICT_NO;
			(void)sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
						"Cannot read polkit's answer for %s", q->action);
		} else if (reg->unavailable) {
			log_info("polkit answers again: authorization is polkit's");
			reg->unavailable = false;
		}
	}

	/*
	 * After the call is dispatched again (the bus runs at normal priority,
	 * before idle), the defer source drops the answer if nothing took it.
	 */
	r = sd_event_add_defer(sd_bus_get_event(bus), &q->defer, on_defer, q);
	if (r >= 0)
		r = sd_event_source_set_priority(q->defer, SD_EVENT_PRIORITY_IDLE);
	if (r >= 0)
		r = sd_event_source_set_enabled(q->defer, SD_EVENT_ONESHOT);
	if (r >= 0)
		r = sd_bus_message_rewind(q->call, true);
	if (r >= 0)
		r = sd_bus_enqueue_for_read(bus, q->call);
	if (r < 0) {
		log_error_errno(r, "Cannot dispatch %s() again after polkit's answer: %m",
				sd_bus_message_get_member(q->call));
		(void)sd_bus_reply_method_errorf(q->call, SD_BUS_ERROR_FAILED,
						 "Internal error after the authorization check");
		query_free(q);
	}
	return 0;
}

static int query_start(struct polkit_registry *reg, sd_bus_message *call, const char *action)
{
	_cleanup_(sd_bus_message_unrefp) sd_bus_message *check = NULL;
	sd_bus *bus = sd_bus_message_get_bus(call);
	bool interactive = sd_bus_message_get_allow_interactive_authorization(call) > 0;
	const char *sender = sd_bus_message_get_sender(call);
	struct polkit_query *q;
	int r;

	if (!sender)
		return -EBADMSG;
	r = sd_bus_message_new_method_call(bus, &check, POLKIT_BUS, POLKIT_PATH, POLKIT_IFACE,
					   "CheckAuthorization");
	if (r < 0)
		return r;
	r = sd_bus_message_append(check, "(sa{sv})s", "system-bus-name", 1, "name", "s", sender,
				  action);
	if (r < 0)
		return r;
	/* No details; no cancellation id. */
	r = sd_bus_message_append(check, "a{ss}us", 0,
				  interactive ? POLKIT_FLAG_ALLOW_USER_INTERACTION : 0U, "");
	if (r < 0)
		return r;

	q = calloc(1, sizeof(*q));
	if (!q)
		return -ENOMEM;
	*q = (struct polkit_query){ .reg = reg, .call = sd_bus_message_ref(call), .action = action,
				    .error = SD_BUS_ERROR_NULL };
	reg->queries[reg->n_queries++] = q;
	r = sd_bus_call_async(bus, &q->slot, check, on_check_reply, q,
			      interactive ? POLKIT_INTERACTIVE_TIMEOUT_USEC : 0);
	if (r < 0) {
		query_free(q);
		return r;
	}
	return 0;
}

int polkit_authorize(struct polkit_registry **reg, sd_bus_message *call, const char *action,
		     sd_bus_error *error)
{
	struct polkit_query *q = NULL;
	int r;

	if (!*reg) {
		*reg = calloc(1, sizeof(**reg));
		if (!*reg)
			return -ENOMEM;
	}
	for (size_t i = 0; i < (*reg)->n_queries; i++)
		if ((*reg)->queries[i]->call == call) {
			q = (*reg)->queries[i];
			break;
		}
	if (q) {
		if (q->verdict == VERDICT_PENDING)
			return 0;
		if (q->verdict == VERDICT_YES) {
			query_free(q);
			return 1;
		}
		r = sd_bus_error_copy(error, &q->error);
		query_free(q);
		return r < 0 ? r : -EACCES;
	}
	if ((*reg)->n_queries >= POLKIT_QUERIES_MAX) {
		log_warning("Refused %s() from %s: %d authorization checks in flight already",
			    sd_bus_message_get_member(call), strna(sd_bus_message_get_sender(call)),
			    POLKIT_QUERIES_MAX);
		return sd_bus_error_setf(error, ERROR_BUSY,
					 "%d authorization checks are in flight already; try again",
					 POLKIT_QUERIES_MAX);
	}
	r = query_start(*reg, call, action);
	if (r < 0)
		return log_error_errno(r, "Cannot ask polkit about %s() from %s: %m",
				       sd_bus_message_get_member(call),
				       strna(sd_bus_message_get_sender(call)));
	return 0;
}
