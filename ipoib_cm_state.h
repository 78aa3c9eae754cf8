/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The life of one connected-mode connection as a pure state machine: which
 * state a CM or local event leads to and what the driver has to do about
 * it. ipoib_cm.c performs the actions; KUnit drives the machine alone.
 */
#ifndef IPNG_CM_STATE_H
#define IPNG_CM_STATE_H

#include <linux/atomic.h>
#include <linux/types.h>

/**
 * enum ipng_cm_state - state of one RC connection
 * @IPNG_CM_IDLE: created, nothing sent yet (active) or received (passive)
 * @IPNG_CM_REQ_SENT: active side: REQ sent, waiting for the REP
 * @IPNG_CM_REP_SENT: passive side: REP sent, waiting for the RTU
 * @IPNG_CM_LIVE: established; data flows
 * @IPNG_CM_CLOSING: being torn down (disconnect, error, reaping)
 * @IPNG_CM_FAILED: active side: no connection could be made; packets use
 *	the datagram path until the entry is retried
 */
enum ipng_cm_state {
	IPNG_CM_IDLE,
	IPNG_CM_REQ_SENT,
	IPNG_CM_REP_SENT,
	IPNG_CM_LIVE,
	IPNG_CM_CLOSING,
	IPNG_CM_FAILED,
	IPNG_CM_NR_STATES
};

/**
 * enum ipng_cm_event - what happens to a connection
 * @IPNG_CM_EV_REQ_SENT: active: QP created and REQ sent
 * @IPNG_CM_EV_REP_SENT: passive: REQ accepted and REP sent
 * @IPNG_CM_EV_REP: active: REP received and QP moved to RTS
 * @IPNG_CM_EV_RTU: passive: RTU received (or the first data arrived)
 * @IPNG_CM_EV_REJ: the peer rejected the REQ or REP
 * @IPNG_CM_EV_TIMEOUT: the REQ or REP went unanswered
 * @IPNG_CM_EV_SETUP_ERROR: our side failed to set up (no path, no QP)
 * @IPNG_CM_EV_DREQ: the peer asks to disconnect
 * @IPNG_CM_EV_QP_ERROR: the QP went to the error state or a send failed
 * @IPNG_CM_EV_IDLE: unused longer than the reap timeout
 * @IPNG_CM_EV_CLOSE: the interface closes the connection (stop, flush,
 *	mode change)
 */
enum ipng_cm_event {
	IPNG_CM_EV_REQ_SENT,
	IPNG_CM_EV_REP_SENT,
	IPNG_CM_EV_REP,
	IPNG_CM_EV_RTU,
	IPNG_CM_EV_REJ,
	IPNG_CM_EV_TIMEOUT,
	IPNG_CM_EV_SETUP_ERROR,
	IPNG_CM_EV_DREQ,
	IPNG_CM_EV_QP_ERROR,
	IPNG_CM_EV_IDLE,
	IPNG_CM_EV_CLOSE,
	IPNG_CM_NR_EVENTS
};

/**
 * enum ipng_cm_action - bits of what ipng_cm_step() asks the driver to do
 * @IPNG_CM_ACT_SEND_RTU: active: answer the REP with an RTU
 * @IPNG_CM_ACT_FLUSH: send the packets queued while connecting on RC
 * @IPNG_CM_ACT_FALLBACK: send the queued packets over UD instead
 * @IPNG_CM_ACT_SEND_DREQ: send a DREQ to the peer
 * @IPNG_CM_ACT_SEND_DREP: answer the peer's DREQ
 * @IPNG_CM_ACT_RELEASE: drain and destroy the QP and the CM ID
 * @IPNG_CM_ACT_RETRY_LATER: active: use UD now, connect again later
 */
enum ipng_cm_action {
	IPNG_CM_ACT_SEND_RTU	= BIT(0),
	IPNG_CM_ACT_FLUSH	= BIT(1),
	IPNG_CM_ACT_FALLBACK	= BIT(2),
	IPNG_CM_ACT_SEND_DREQ	= BIT(3),
	IPNG_CM_ACT_SEND_DREP	= BIT(4),
	IPNG_CM_ACT_RELEASE	= BIT(5),
	IPNG_CM_ACT_RETRY_LATER	= BIT(6),
};

/**
 * enum ipng_cm_report - what a state change means to an observer
 * @IPNG_CM_REPORT_NONE: nothing to report (no change, or a failed
 *	outgoing entry going away: its failure was reported already)
 * @IPNG_CM_REPORT_UP: the connection is live
 * @IPNG_CM_REPORT_FAILED: the connection could not be made
 * @IPNG_CM_REPORT_CLOSED: the connection (live or being made) closed
 */
enum ipng_cm_report {
	IPNG_CM_REPORT_NONE,
	IPNG_CM_REPORT_UP,
	IPNG_CM_REPORT_FAILED,
	IPNG_CM_REPORT_CLOSED,
};

enum ipng_cm_state ipng_cm_step(enum ipng_cm_state state,
				enum ipng_cm_event event,
				unsigned int *actions);
const char *ipng_cm_state_name(enum ipng_cm_state state);
const char *ipng_cm_event_name(enum ipng_cm_event event);
enum ipng_cm_report ipng_cm_report(enum ipng_cm_state old,
				   enum ipng_cm_state new,
				   enum ipng_cm_event event);
int ipng_cm_event_errno(enum ipng_cm_event event);

/**
 * struct ipng_cm_budget - cap on the number of connections
 * @count: connections holding a slot
 * @max: the cap (the max_connections module parameter)
 */
struct ipng_cm_budget {
	atomic_t count;
	unsigned int max;
};

bool ipng_cm_budget_take(struct ipng_cm_budget *b);
void ipng_cm_budget_return(struct ipng_cm_budget *b);

#endif /* IPNG_CM_STATE_H */
