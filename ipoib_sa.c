// SPDX-License-Identifier: GPL-2.0
/*
 * Link-layer ops of InfiniBand ports: everything that needs the subnet
 * administrator. Unicast destinations are resolved with PathRecord
 * queries (DLID, SL, rate, MTU); multicast groups are joined with
 * MCMemberRecord requests through ib_core's multicast module, which also
 * tells when a group is lost. The broadcast group is joined first (and
 * created with the IPoIB defaults if the SM has not made it); its Q_Key
 * and MTU become the interface's, and its parameters create every other
 * group. Sending to a group needs a membership here: a send-only join is
 * asked for through the multicast state machine.
 *
 * The record builders at the top are pure (tested by KUnit); the queries
 * below wait for the SA in process context (path and multicast work).
 */
#include <kunit/visibility.h>
#include <linux/completion.h>
#include <linux/slab.h>
#include <rdma/ib_cache.h>

#include "ipoib.h"

#define IPNG_SA_TIMEOUT_MS	1000
#define IPNG_JOIN_FULL		BIT(FULLMEMBER_JOIN)
#define IPNG_JOIN_SENDONLY	BIT(SENDONLY_FULLMEMBER_JOIN)

/**
 * ipng_sa_path_query() - build the PathRecord query for one destination
 * @rec: filled
 * @sgid: our port GID
 * @dgid: the destination
 * @pkey: the interface's P_Key
 *
 * One reversible path from @sgid to @dgid in the interface's partition.
 *
 * Return: the component mask to send with @rec.
 */
ib_sa_comp_mask ipng_sa_path_query(struct sa_path_rec *rec,
				   const union ib_gid *sgid,
				   const union ib_gid *dgid, u16 pkey)
{
	memset(rec, 0, sizeof(*rec));
	rec->rec_type = SA_PATH_REC_TYPE_IB;
	rec->sgid = *sgid;
	rec->dgid = *dgid;
	rec->pkey = cpu_to_be16(pkey);
	rec->numb_path = 1;
	rec->reversible = 1;
	return IB_SA_PATH_REC_DGID | IB_SA_PATH_REC_SGID |
	       IB_SA_PATH_REC_PKEY | IB_SA_PATH_REC_NUMB_PATH |
	       IB_SA_PATH_REC_REVERSIBLE;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_sa_path_query);

/**
 * ipng_sa_path_to_ah() - address vector of a PathRecord answer
 * @rec: the SA's answer
 * @port: our port
 * @sgid_index: GID table index of our GID
 * @attr: filled
 *
 * The LID route (DLID, SL, static rate) always; a GRH only when the path
 * leaves the subnet (hop limit above 1).
 *
 * Return: 0, or -EINVAL for a record that is not an InfiniBand path or
 * has no usable DLID.
 */
int ipng_sa_path_to_ah(const struct sa_path_rec *rec, u32 port,
		       u8 sgid_index, struct rdma_ah_attr *attr)
{
	u16 dlid;

	if (rec->rec_type != SA_PATH_REC_TYPE_IB)
		return -EINVAL;
	dlid = be16_to_cpu(rec->ib.dlid);
	if (!dlid || dlid >= be16_to_cpu(IB_MULTICAST_LID_BASE))
		return -EINVAL;
	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_IB;
	rdma_ah_set_port_num(attr, port);
	rdma_ah_set_dlid(attr, dlid);
	rdma_ah_set_sl(attr, rec->sl);
	rdma_ah_set_static_rate(attr, rec->rate);
	if (rec->hop_limit > 1)
		rdma_ah_set_grh(attr, (union ib_gid *)&rec->dgid,
				be32_to_cpu(rec->flow_label), sgid_index,
				rec->hop_limit, rec->traffic_class);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_sa_path_to_ah);

/**
 * ipng_sa_join_query() - build the MCMemberRecord of a join
 * @rec: filled
 * @q: what to join and with which parameters
 *
 * Full joins set JoinState FullMember, send-only joins SendOnlyFullMember
 * (IBA 1.3): unlike SendOnlyNonMember, such a member may create the
 * group, as a host that sends to ff02::2 or ff02::16, which no one else
 * joins, needs. Without @q->tmpl the group is only joined if it exists; with it, the
 * group is created if absent with the template's Q_Key, P_Key, MTU, rate,
 * SL, traffic class, flow label and hop limit (the broadcast group's, or
 * the IPoIB defaults for the broadcast group itself).
 *
 * Return: the component mask to send with @rec.
 */
ib_sa_comp_mask ipng_sa_join_query(struct ib_sa_mcmember_rec *rec,
				   const struct ipng_sa_join_query *q)
{
	ib_sa_comp_mask mask = IB_SA_MCMEMBER_REC_MGID |
			       IB_SA_MCMEMBER_REC_PORT_GID |
			       IB_SA_MCMEMBER_REC_JOIN_STATE;
	const struct ib_sa_mcmember_rec *t = q->tmpl;

	memset(rec, 0, sizeof(*rec));
	rec->mgid = q->mgid;
	rec->port_gid = q->port_gid;
	rec->join_state = q->join == IPNG_MC_FULL ? IPNG_JOIN_FULL
						  : IPNG_JOIN_SENDONLY;
	if (!t)
		return mask;
	rec->qkey = t->qkey;
	rec->pkey = t->pkey;
	rec->mtu_selector = IB_SA_EQ;
	rec->mtu = t->mtu;
	rec->rate_selector = IB_SA_EQ;
	rec->rate = t->rate;
	rec->sl = t->sl;
	rec->traffic_class = t->traffic_class;
	rec->flow_label = t->flow_label;
	rec->hop_limit = t->hop_limit;
	return mask | IB_SA_MCMEMBER_REC_QKEY | IB_SA_MCMEMBER_REC_PKEY |
	       IB_SA_MCMEMBER_REC_MTU_SELECTOR | IB_SA_MCMEMBER_REC_MTU |
	       IB_SA_MCMEMBER_REC_RATE_SELECTOR | IB_SA_MCMEMBER_REC_RATE |
	       IB_SA_MCMEMBER_REC_SL | IB_SA_MCMEMBER_REC_TRAFFIC_CLASS |
	       IB_SA_MCMEMBER_REC_FLOW_LABEL | IB_SA_MCMEMBER_REC_HOP_LIMIT;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_sa_join_query);

/**
 * ipng_sa_bcast_defaults() - parameters to create the broadcast group with
 * @tmpl: filled
 * @pkey: the interface's P_Key
 * @mtu: the port's active MTU
 *
 * Q_Key 0x0B1B (what every IPoIB stack expects), the interface's P_Key,
 * the port MTU and 10 Gb/s (the rate subnet managers give the group by
 * default, so slower links can join too), SL 0, no GRH fields.
 */
void ipng_sa_bcast_defaults(struct ib_sa_mcmember_rec *tmpl, u16 pkey,
			    enum ib_mtu mtu)
{
	memset(tmpl, 0, sizeof(*tmpl));
	tmpl->qkey = cpu_to_be32(IPNG_DEFAULT_QKEY);
	tmpl->pkey = cpu_to_be16(pkey);
	tmpl->mtu = mtu;
	tmpl->rate = IB_RATE_10_GBPS;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_sa_bcast_defaults);

/* --- PathRecord queries --- */

/**
 * struct ipng_sa_path_wait - one PathRecord query being waited for
 * @done: completed by the SA callback
 * @status: its status
 * @rec: the answer when @status is 0
 */
struct ipng_sa_path_wait {
	struct completion done;
	int status;
	struct sa_path_rec rec;
};

static void ipng_sa_path_done(int status, struct sa_path_rec *resp,
			      unsigned int num_prs, void *context)
{
	struct ipng_sa_path_wait *w = context;

	w->status = status;
	if (!status && resp && num_prs > 0)
		w->rec = *resp;
	else if (!status)
		w->status = -ENOENT;
	complete(&w->done);
}

IPNG_SA_PATH_CB_ADAPTER(ipng_sa_path_done);

static int ipng_ib_addr_gid_index(struct ipng_dev *ipd)
{
	return 0;
}

static bool ipng_ib_carried_by(struct ipng_dev *ipd, struct net_device *ndev)
{
	return false;
}

/* Ask the SA for the path from our port GID to @dgid; sleeps. */
static int ipng_sa_path_get(struct ipng_dev *ipd, const union ib_gid *dgid,
			    struct sa_path_rec *rec)
{
	struct ipng_sa_path_wait *w;
	struct ib_sa_query *query;
	struct sa_path_rec req;
	ib_sa_comp_mask mask;
	union ib_gid sgid;
	int err;

	err = rdma_query_gid(ipd->ca, ipd->port, 0, &sgid);
	if (err)
		return err;
	w = kzalloc(sizeof(*w), GFP_KERNEL);
	if (!w)
		return -ENOMEM;
	init_completion(&w->done);
	mask = ipng_sa_path_query(&req, &sgid, dgid, ipd->pkey);
	err = ib_sa_path_rec_get(&ipng_sa_client, ipd->ca, ipd->port, &req,
				 mask, IPNG_SA_TIMEOUT_MS, GFP_KERNEL,
				 IPNG_SA_PATH_CB(ipng_sa_path_done), w, &query);
	if (err < 0)
		goto out;
	wait_for_completion(&w->done);
	err = w->status;
	if (!err)
		*rec = w->rec;
out:
	kfree(w);
	return err;
}

/*
 * Multicast destinations come from the group's membership; unicast ones
 * from a PathRecord query (the SA times it out, the path cache retries).
 */
static int ipng_ib_resolve_path(struct ipng_dev *ipd, const union ib_gid *dgid,
				struct rdma_ah_attr *attr)
{
	struct sa_path_rec rec;
	int err;

	if (dgid->raw[0] == 0xff)
		return ipng_mcast_sendonly(ipd->mcast, dgid, attr);
	err = ipng_sa_path_get(ipd, dgid, &rec);
	return err ?: ipng_sa_path_to_ah(&rec, ipd->port, 0, attr);
}

/* A connected-mode REQ carries the SA's PathRecord as it is. */
static int ipng_ib_cm_path(struct ipng_dev *ipd, const union ib_gid *dgid,
			   struct sa_path_rec *rec)
{
	return ipng_sa_path_get(ipd, dgid, rec);
}

/* --- MCMemberRecord joins --- */

/**
 * struct ipng_sa_member - one membership held through ib_core
 * @ipd: interface
 * @sa: ib_core's handle, freed with ib_sa_free_multicast()
 * @done: completed by the first callback (the join's answer)
 * @answered: the first callback ran; later ones report a lost group
 * @status: the join's status
 * @rec: the group's record when @status is 0
 * @attached: the QP is attached to the group (full members)
 */
struct ipng_sa_member {
	struct ipng_dev *ipd;
	struct ib_sa_multicast *sa;
	struct completion done;
	bool answered;
	int status;
	struct ib_sa_mcmember_rec rec;
	bool attached;
};

/*
 * Always 0: the member is freed by ipng_ib_mcast_leave() (or the failed
 * join), never by ib_core. A callback after the answer means the group
 * went away (SM restart, port event): rejoin everything.
 */
static int ipng_sa_join_done(int status, struct ib_sa_multicast *sa)
{
	struct ipng_sa_member *sm = sa->context;

	if (sm->answered) {
		if (status)
			ipng_mcast_rejoin(sm->ipd->mcast);
		return 0;
	}
	sm->status = status;
	if (!status)
		sm->rec = sa->rec;
	sm->answered = true;
	complete(&sm->done);
	return 0;
}

static int ipng_sa_join_wait(struct ipng_sa_member *sm,
			     struct ib_sa_mcmember_rec *req,
			     ib_sa_comp_mask mask)
{
	struct ipng_dev *ipd = sm->ipd;
	struct ib_sa_multicast *sa;

	init_completion(&sm->done);
	sm->answered = false;
	sa = ib_sa_join_multicast(&ipng_sa_client, ipd->ca, ipd->port, req,
				  mask, GFP_KERNEL, ipng_sa_join_done, sm);
	if (IS_ERR(sa))
		return PTR_ERR(sa);
	wait_for_completion(&sm->done);
	if (sm->status) {
		ib_sa_free_multicast(sa);
		return sm->status;
	}
	sm->sa = sa;
	return 0;
}

/* The broadcast group sets the interface's Q_Key and caps its MTU. */
static int ipng_sa_bcast_joined(struct ipng_dev *ipd,
				const struct ib_sa_mcmember_rec *rec)
{
	u32 qkey = be32_to_cpu(rec->qkey);
	int err;

	ipd->bcast_rec = *rec;
	if (qkey != ipd->qkey) {
		err = ipng_ib_set_qkey(ipd, qkey);
		if (err)
			return err;
	}
	ipng_dev_set_bcast_mtu(ipd, ipng_ud_mtu(rec->mtu));
	return 0;
}

static int ipng_ib_mcast_join(struct ipng_dev *ipd, struct ipng_mcast_member *m)
{
	struct ipng_sa_join_query q = { .mgid = m->mgid, .join = m->join };
	struct ib_sa_mcmember_rec req, tmpl;
	struct ipng_sa_member *sm;
	ib_sa_comp_mask mask;
	int err;

	sm = kzalloc(sizeof(*sm), GFP_KERNEL);
	if (!sm)
		return -ENOMEM;
	sm->ipd = ipd;
	err = rdma_query_gid(ipd->ca, ipd->port, 0, &q.port_gid);
	if (err)
		goto err_free;

	/* The broadcast group is joined as the SM made it; only if that
	 * fails is it created with the IPoIB defaults. Other groups are
	 * created like the broadcast group.
	 */
	if (m->broadcast) {
		mask = ipng_sa_join_query(&req, &q);
		err = ipng_sa_join_wait(sm, &req, mask);
		if (err) {
			ipng_sa_bcast_defaults(&tmpl, ipd->pkey,
					       READ_ONCE(ipd->port_mtu));
			q.tmpl = &tmpl;
			mask = ipng_sa_join_query(&req, &q);
			err = ipng_sa_join_wait(sm, &req, mask);
		}
	} else {
		q.tmpl = &ipd->bcast_rec;
		mask = ipng_sa_join_query(&req, &q);
		err = ipng_sa_join_wait(sm, &req, mask);
	}
	if (err)
		goto err_free;

	if (m->join == IPNG_MC_FULL) {
		err = ib_attach_mcast(ipd->qp, &sm->rec.mgid,
				      be16_to_cpu(sm->rec.mlid));
		if (err)
			goto err_sa;
		sm->attached = true;
	}
	if (m->broadcast) {
		err = ipng_sa_bcast_joined(ipd, &sm->rec);
		if (err)
			goto err_detach;
	}
	m->priv = sm;
	return 0;

err_detach:
	if (sm->attached)
		ib_detach_mcast(ipd->qp, &sm->rec.mgid,
				be16_to_cpu(sm->rec.mlid));
err_sa:
	ib_sa_free_multicast(sm->sa);
err_free:
	kfree(sm);
	return err;
}

static void ipng_ib_mcast_leave(struct ipng_dev *ipd,
				struct ipng_mcast_member *m)
{
	struct ipng_sa_member *sm = m->priv;

	if (!sm)
		return;
	if (sm->attached)
		ib_detach_mcast(ipd->qp, &sm->rec.mgid,
				be16_to_cpu(sm->rec.mlid));
	/* Waits for a callback still running, then sends the leave. */
	ib_sa_free_multicast(sm->sa);
	kfree(sm);
}

static int ipng_ib_mcast_ah_attr(struct ipng_dev *ipd,
				 struct ipng_mcast_member *m,
				 struct rdma_ah_attr *attr)
{
	struct ipng_sa_member *sm = m->priv;

	if (!sm)
		return -ENOENT;
	return ib_init_ah_from_mcmember(ipd->ca, ipd->port, &sm->rec, NULL,
					IB_GID_TYPE_IB, attr);
}

/* Any membership of this port in @mgid that ib_sa knows of. */
static bool ipng_ib_mcast_user_joined(struct ipng_dev *ipd,
				      const union ib_gid *mgid)
{
	struct ib_sa_mcmember_rec rec;
	union ib_gid gid = *mgid;

	return !ib_sa_get_mcmember_rec(ipd->ca, ipd->port, &gid, &rec);
}

/* The SM owns InfiniBand GIDs: nothing to repair. */
static int ipng_ib_repair_gids(struct ipng_dev *ipd)
{
	return 0;
}

const struct ipng_fabric_ops ipng_fabric_ib = {
	.name		= "infiniband",
	.addr_gid_index	= ipng_ib_addr_gid_index,
	.carried_by	= ipng_ib_carried_by,
	.resolve_path	= ipng_ib_resolve_path,
	.mcast_join	= ipng_ib_mcast_join,
	.mcast_leave	= ipng_ib_mcast_leave,
	.mcast_ah_attr	= ipng_ib_mcast_ah_attr,
	.repair_gids	= ipng_ib_repair_gids,
	.cm_path	= ipng_ib_cm_path,
	.mcast_user_joined = ipng_ib_mcast_user_joined,
	.cm_retry	= 0,
};
