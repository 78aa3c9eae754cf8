// SPDX-License-Identifier: GPL-2.0
/*
 * ipoib_ng_live_test.ko: the KUnit suite "ipoib_ng_live". It drives a live
 * ipoib_ng interface on a RoCE port (soft-RoCE in the test VMs) with real
 * verbs: its address and UD QP, an address handle for its own GID, a
 * datagram sent to itself and received through NAPI, link header and GRH
 * handling of received frames, broadcast and group membership, the drop
 * paths of transmit and receive, stray send completions, and path aging.
 *
 * Frames from another sender come from a second UD QP that this suite
 * creates on the same port (the "injector"); it can send what the
 * interface itself never would (short frames, unknown EtherTypes).
 *
 * Every case is skipped when no ipoib_ng interface exists (no RDMA
 * device), so that the module can be loaded anywhere.
 */
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_ether.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/random.h>
#include <linux/rtnetlink.h>
#include <linux/skbuff.h>
#include <net/addrconf.h>
#include <net/if_inet6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "../../ipoib.h"
#include "ipoib_test.h"

#define LIVE_WAIT_MS		15000	/* for what must happen (TCG is slow) */
#define LIVE_QUIET_MS		3000	/* for what must not happen */
#define LIVE_POLL_MS		20
#define LIVE_COOKIE_LEN		16
#define LIVE_COOKIE_OFF		sizeof(struct arphdr)
#define LIVE_PAYLOAD_LEN	200
#define LIVE_INJECT_QKEY	0x5eed
#define LIVE_MAX_AH		2

/**
 * struct live_seen - what the receive tap saw of the first matching frame
 * @len: skb->len (payload only, link header pulled)
 * @mac_len: bytes between the MAC and the network header
 * @proto: skb->protocol
 * @pkt_type: skb->pkt_type
 * @parse_len: return value of dev_parse_header()
 * @hdr: the 24-byte link header in front of the payload
 * @parsed: the address dev_parse_header() reported
 * @data: the first LIVE_PAYLOAD_LEN bytes of the payload
 */
struct live_seen {
	unsigned int len;
	unsigned int mac_len;
	__be16 proto;
	u8 pkt_type;
	int parse_len;
	u8 hdr[IPNG_HARD_LEN];
	u8 parsed[MAX_ADDR_LEN];
	u8 data[LIVE_PAYLOAD_LEN];
};

/**
 * struct live_state - the interface under test and the suite's objects
 * @ndev: the ipoib_ng interface (a reference is held)
 * @tracker: tracks that reference
 * @ipd: its private area
 * @lower: the Ethernet device under the RoCE port (a reference is held)
 * @lower_tracker: tracks that reference
 * @opened: the suite brought the interface up and takes it down again
 * @skip: why every case is skipped, or NULL
 * @setup_err: error of the suite setup (cases fail), with @setup_step
 * @setup_step: what failed
 * @gid_index: GID table index of the interface address
 * @gid: the interface's GID
 * @pd: protection domain of the injector
 * @cq: completion queue of the injector (polled directly)
 * @qp: the injector, a UD QP on the same port
 * @ahs: address handles of the injector created by the running case
 * @ipng_ah: address handle made by the driver in the running case
 * @extra: group joined by the running case through the fabric ops
 * @extra_joined: @extra must be left
 * @taps: the receive taps are registered
 * @tap_arp: receive tap for ETH_P_ARP on @ndev
 * @tap_exp: receive tap for ETH_P_802_EX1 (0x88B5) on @ndev
 * @lock: protects @armed, @cookie, @hits and @seen (taps run in softirq)
 * @armed: the taps look for @cookie
 * @cookie: random bytes at LIVE_COOKIE_OFF of the frame awaited
 * @hits: frames seen with @cookie
 * @seen: the first of them
 * @done: completed at every hit
 */
struct live_state {
	struct net_device *ndev;
	netdevice_tracker tracker;
	struct ipng_dev *ipd;
	struct net_device *lower;
	netdevice_tracker lower_tracker;
	bool opened;
	const char *skip;
	int setup_err;
	const char *setup_step;
	int gid_index;
	union ib_gid gid;

	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_ah *ahs[LIVE_MAX_AH];
	struct ipng_ah *ipng_ah;
	struct ipng_mcast_member extra;
	bool extra_joined;

	bool taps;
	struct packet_type tap_arp;
	struct packet_type tap_exp;
	spinlock_t lock;	/* armed, cookie, hits, seen */
	bool armed;
	u8 cookie[LIVE_COOKIE_LEN];
	unsigned int hits;
	struct live_seen seen;
	struct completion done;
};

static struct live_state live;

/* ---- receive taps ---- */

static int live_tap_rcv(struct sk_buff *skb, struct net_device *dev,
			struct packet_type *pt, struct net_device *orig_dev)
{
	struct live_seen *seen = &live.seen;
	u8 cookie[LIVE_COOKIE_LEN];

	if (dev != live.ndev ||
	    skb_copy_bits(skb, LIVE_COOKIE_OFF, cookie, sizeof(cookie)))
		goto out;
	spin_lock(&live.lock);
	if (!live.armed || memcmp(cookie, live.cookie, sizeof(cookie))) {
		spin_unlock(&live.lock);
		goto out;
	}
	if (!live.hits++) {
		memset(seen, 0, sizeof(*seen));
		seen->len = skb->len;
		seen->mac_len = skb->mac_len;
		seen->proto = skb->protocol;
		seen->pkt_type = skb->pkt_type;
		if (skb_mac_header_was_set(skb) &&
		    skb->mac_len == IPNG_HARD_LEN)
			memcpy(seen->hdr, skb_mac_header(skb), IPNG_HARD_LEN);
		seen->parse_len = dev_parse_header(skb, seen->parsed);
		skb_copy_bits(skb, 0, seen->data,
			      min_t(unsigned int, skb->len, sizeof(seen->data)));
	}
	spin_unlock(&live.lock);
	complete(&live.done);
out:
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* Look for frames carrying a fresh cookie, which is returned. */
static void live_arm(u8 *cookie)
{
	get_random_bytes(cookie, LIVE_COOKIE_LEN);
	spin_lock_bh(&live.lock);
	memcpy(live.cookie, cookie, LIVE_COOKIE_LEN);
	live.hits = 0;
	reinit_completion(&live.done);
	live.armed = true;
	spin_unlock_bh(&live.lock);
}

static void live_disarm(void)
{
	spin_lock_bh(&live.lock);
	live.armed = false;
	spin_unlock_bh(&live.lock);
}

/*
 * Wait up to @ms for the armed frame; copy what the tap saw to @seen.
 * Return: the number of matching frames seen so far.
 */
static unsigned int live_wait_rx(struct live_seen *seen, unsigned int ms)
{
	unsigned int hits;

	wait_for_completion_timeout(&live.done, msecs_to_jiffies(ms));
	spin_lock_bh(&live.lock);
	hits = live.hits;
	if (hits && seen)
		*seen = live.seen;
	spin_unlock_bh(&live.lock);
	return hits;
}

static unsigned int live_hits(void)
{
	unsigned int hits;

	spin_lock_bh(&live.lock);
	hits = live.hits;
	spin_unlock_bh(&live.lock);
	return hits;
}

/*
 * A payload the stack drops without a trace or a reply: an ARP header
 * whose hardware address length is not the interface's (arp_rcv() frees
 * it), then the cookie, then a pattern.
 */
static void live_payload(u8 *buf, unsigned int len, const u8 *cookie)
{
	struct arphdr *arp = (struct arphdr *)buf;
	unsigned int i;

	memset(arp, 0, sizeof(*arp));
	arp->ar_hrd = htons(ARPHRD_INFINIBAND);
	memcpy(buf + LIVE_COOKIE_OFF, cookie, LIVE_COOKIE_LEN);
	for (i = LIVE_COOKIE_OFF + LIVE_COOKIE_LEN; i < len; i++)
		buf[i] = (u8)(i * 7 + cookie[i % LIVE_COOKIE_LEN]);
}

/* ---- counters ---- */

static u64 live_stat(enum ipng_stat stat)
{
	u64 sum[IPNG_STAT_MAX];

	ipng_stats_read(live.ipd, sum);
	return sum[stat];
}

/* Wait up to @ms for counter @stat to reach @want; return its value. */
static u64 live_wait_stat(enum ipng_stat stat, u64 want, unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	u64 val;

	for (;;) {
		val = live_stat(stat);
		if (val >= want || time_after(jiffies, end))
			return val;
		msleep(LIVE_POLL_MS);
	}
}

/* ---- sending through the interface ---- */

/*
 * Send @len bytes of @data with EtherType @type to link address @daddr
 * through the interface: header_ops->create, the qdisc, ndo_start_xmit.
 * Return: what dev_queue_xmit() returned (NET_XMIT_SUCCESS) or an errno.
 */
static int live_xmit(const u8 *daddr, u16 type, const void *data,
		     unsigned int len)
{
	struct net_device *ndev = live.ndev;
	unsigned int room = LL_RESERVED_SPACE(ndev);
	struct sk_buff *skb;

	skb = alloc_skb(room + len + ndev->needed_tailroom, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, room);
	skb_reset_network_header(skb);
	skb_put_data(skb, data, len);
	skb->dev = ndev;
	skb->protocol = htons(type);
	if (dev_hard_header(skb, ndev, type, daddr, NULL, len) < 0) {
		kfree_skb(skb);
		return -EINVAL;
	}
	return dev_queue_xmit(skb);
}

/* Hand ndo_start_xmit a frame of @len bytes without a link header. */
static int live_xmit_raw(unsigned int len)
{
	struct sk_buff *skb;

	skb = alloc_skb(LL_RESERVED_SPACE(live.ndev) + len, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(live.ndev));
	skb_put_zero(skb, len);
	skb_reset_network_header(skb);
	skb->dev = live.ndev;
	skb->protocol = htons(ETH_P_ARP);
	return dev_queue_xmit(skb);
}

/* ---- the injector QP ---- */

static int live_injector_create(void)
{
	struct ipng_dev *ipd = live.ipd;
	struct ib_qp_init_attr init = {
		.cap = {
			.max_send_wr	= 8,
			.max_recv_wr	= 1,
			.max_send_sge	= 1,
			.max_recv_sge	= 1,
		},
		.sq_sig_type	= IB_SIGNAL_ALL_WR,
		.qp_type	= IB_QPT_UD,
		.port_num	= ipd->port,
	};
	struct ib_qp_attr attr = {
		.qp_state	= IB_QPS_INIT,
		.pkey_index	= ipd->pkey_index,
		.port_num	= ipd->port,
		.qkey		= LIVE_INJECT_QKEY,
	};
	int err;

	live.pd = ib_alloc_pd(ipd->ca, 0);
	if (IS_ERR(live.pd)) {
		err = PTR_ERR(live.pd);
		goto err_out;
	}
	live.cq = ib_alloc_cq(ipd->ca, NULL, 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(live.cq)) {
		err = PTR_ERR(live.cq);
		goto err_pd;
	}
	init.send_cq = live.cq;
	init.recv_cq = live.cq;
	live.qp = ib_create_qp(live.pd, &init);
	if (IS_ERR(live.qp)) {
		err = PTR_ERR(live.qp);
		goto err_cq;
	}
	err = ib_modify_qp(live.qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_QKEY);
	if (err)
		goto err_qp;
	attr.qp_state = IB_QPS_RTR;
	err = ib_modify_qp(live.qp, &attr, IB_QP_STATE);
	if (err)
		goto err_qp;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	err = ib_modify_qp(live.qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
	if (err)
		goto err_qp;
	return 0;

err_qp:
	ib_destroy_qp(live.qp);
err_cq:
	ib_free_cq(live.cq);
err_pd:
	ib_dealloc_pd(live.pd);
err_out:
	live.qp = NULL;
	live.cq = NULL;
	live.pd = NULL;
	return err;
}

static void live_injector_destroy(void)
{
	if (!live.qp)
		return;
	ib_destroy_qp(live.qp);
	ib_free_cq(live.cq);
	ib_dealloc_pd(live.pd);
	live.qp = NULL;
	live.cq = NULL;
	live.pd = NULL;
}

/*
 * An address handle of the injector to @dgid, built by the interface's
 * own fabric ops; destroyed by the case's exit.
 */
static struct ib_ah *live_injector_ah(struct kunit *test,
				      const union ib_gid *dgid)
{
	struct rdma_ah_attr attr;
	struct ib_ah *ah;
	int i, err;

	for (i = 0; i < LIVE_MAX_AH && live.ahs[i]; i++)
		;
	KUNIT_ASSERT_LT(test, i, LIVE_MAX_AH);
	err = live.ipd->fabric->resolve_path(live.ipd, dgid, &attr);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "resolve_path(%pI6)", dgid->raw);
	ah = rdma_create_ah(live.pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_NOT_ERR_OR_NULL_MSG(test, ah, "rdma_create_ah(%pI6)",
					 dgid->raw);
	live.ahs[i] = ah;
	return ah;
}

/*
 * Send one datagram from the injector: the 4-byte IPoIB header with
 * EtherType @proto and reserved bits @reserved, then @data (@len may be
 * 0); or, with @raw, only the first @len bytes of @data and no header.
 * Waits for the send completion and asserts its success.
 */
static void live_inject(struct kunit *test, struct ib_ah *ah, u32 qpn,
			bool raw, __be16 proto, __be16 reserved,
			const void *data, unsigned int len)
{
	struct ib_device *ca = live.ipd->ca;
	unsigned int total = raw ? len : IPNG_HLEN + len;
	unsigned long end;
	struct ib_sge sge;
	struct ib_ud_wr wr = {
		.wr = {
			.sg_list	= total ? &sge : NULL,
			.num_sge	= total ? 1 : 0,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah,
		.remote_qpn	= qpn,
		.remote_qkey	= live.ipd->qkey,
	};
	struct ib_wc wc = {};
	u8 *buf;
	u64 dma;
	int n, err;

	buf = kunit_kzalloc(test, max(total, 1U), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	if (raw) {
		memcpy(buf, data, len);
	} else {
		memcpy(buf, &proto, sizeof(proto));
		memcpy(buf + sizeof(proto), &reserved, sizeof(reserved));
		memcpy(buf + IPNG_HLEN, data, len);
	}
	dma = ib_dma_map_single(ca, buf, max(total, 1U), DMA_TO_DEVICE);
	KUNIT_ASSERT_FALSE(test, ib_dma_mapping_error(ca, dma));
	sge.addr = dma;
	sge.length = total;
	sge.lkey = live.pd->local_dma_lkey;

	err = ib_post_send(live.qp, &wr.wr, NULL);
	end = jiffies + msecs_to_jiffies(LIVE_WAIT_MS);
	n = 0;
	while (!err && time_before(jiffies, end)) {
		n = ib_poll_cq(live.cq, 1, &wc);
		if (n)
			break;
		msleep(LIVE_POLL_MS);
	}
	ib_dma_unmap_single(ca, dma, max(total, 1U), DMA_TO_DEVICE);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "ib_post_send");
	KUNIT_ASSERT_EQ_MSG(test, n, 1, "no send completion within %u ms",
			    LIVE_WAIT_MS);
	KUNIT_ASSERT_EQ_MSG(test, wc.status, IB_WC_SUCCESS, "send status %s",
			    ib_wc_status_msg(wc.status));
}

/* ---- the Ethernet device under the port ---- */

/* Whether @lower is a member of the IPv6 group @mgid (what RoCE needs). */
static bool live_lower_in_group(const union ib_gid *mgid)
{
	const struct in6_addr *group = (const struct in6_addr *)mgid->raw;
	struct ifmcaddr6 *mc;
	struct inet6_dev *idev;
	bool found = false;

	rcu_read_lock();
	idev = __in6_dev_get(live.lower);
	if (idev) {
		for (mc = rcu_dereference(idev->mc_list); mc && !found;
		     mc = rcu_dereference(mc->next))
			found = ipv6_addr_equal(&mc->mca_addr, group);
	}
	rcu_read_unlock();
	return found;
}

/* Whether the lower device's filter takes the group's multicast MAC. */
static bool live_lower_has_mac(const union ib_gid *mgid)
{
	struct netdev_hw_addr *ha;
	u8 mac[ETH_ALEN];
	bool found = false;

	ipv6_eth_mc_map((const struct in6_addr *)mgid->raw, (char *)mac);
	netif_addr_lock_bh(live.lower);
	netdev_for_each_mc_addr(ha, live.lower)
		found |= ether_addr_equal(ha->addr, mac);
	netif_addr_unlock_bh(live.lower);
	return found;
}

static bool live_wait_group(const union ib_gid *mgid, bool member,
			    unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		if (live_lower_in_group(mgid) == member)
			return true;
		if (time_after(jiffies, end))
			return false;
		msleep(LIVE_POLL_MS);
	}
}

/* ---- suite setup ---- */

static bool live_is_ipng(struct net_device *dev)
{
	struct ethtool_drvinfo info = {};

	if (dev->type != ARPHRD_INFINIBAND || !dev->rtnl_link_ops ||
	    strcmp(dev->rtnl_link_ops->kind, "ipoib") || !dev->ethtool_ops ||
	    !dev->ethtool_ops->get_drvinfo)
		return false;
	dev->ethtool_ops->get_drvinfo(dev, &info);
	return !strcmp(info.driver, DRV_NAME);
}

/* Take a reference on the first ipoib_ng interface; bring it up. */
static int live_find_netdev(void)
{
	struct net_device *dev;
	int err = 0;

	rtnl_lock();
	for_each_netdev(&init_net, dev) {
		if (!live_is_ipng(dev))
			continue;
		netdev_hold(dev, &live.tracker, GFP_KERNEL);
		live.ndev = dev;
		live.ipd = ipng_priv(dev);
		break;
	}
	if (live.ndev && !netif_running(live.ndev)) {
		err = dev_open(live.ndev, NULL);
		live.opened = !err;
	}
	rtnl_unlock();
	return err;
}

static int live_find_lower(void)
{
	const struct ib_gid_attr *attr;
	struct net_device *lower;
	int err = 0;

	attr = rdma_get_gid_attr(live.ipd->ca, live.ipd->port, live.gid_index);
	if (IS_ERR(attr))
		return PTR_ERR(attr);
	rcu_read_lock();
	lower = rdma_read_gid_attr_ndev_rcu(attr);
	if (IS_ERR(lower)) {
		err = PTR_ERR(lower);
	} else {
		netdev_hold(lower, &live.lower_tracker, GFP_ATOMIC);
		live.lower = lower;
	}
	rcu_read_unlock();
	rdma_put_gid_attr(attr);
	return err;
}

static int live_wait_oper_up(unsigned int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (!netif_oper_up(live.ndev)) {
		if (time_after(jiffies, end))
			return -ENETDOWN;
		msleep(LIVE_POLL_MS);
	}
	return 0;
}

static void live_setup_failed(int err, const char *step)
{
	live.setup_err = err;
	live.setup_step = step;
}

static int live_suite_init(struct kunit_suite *suite)
{
	struct ipng_dev *ipd;
	int err;

	spin_lock_init(&live.lock);
	init_completion(&live.done);

	err = live_find_netdev();
	if (!live.ndev) {
		live.skip = "no ipoib_ng interface (no RDMA device)";
		return 0;
	}
	if (err) {
		live_setup_failed(err, "bring the interface up");
		return 0;
	}
	ipd = live.ipd;
	if (!rdma_protocol_roce(ipd->ca, ipd->port)) {
		live.skip = "the interface's port is not RoCE (no SA support yet)";
		return 0;
	}
	err = live_wait_oper_up(LIVE_WAIT_MS);
	if (err) {
		live_setup_failed(err, "wait for the interface to be operational");
		return 0;
	}
	live.gid_index = ipd->fabric->addr_gid_index(ipd);
	err = rdma_query_gid(ipd->ca, ipd->port, live.gid_index, &live.gid);
	if (err) {
		live_setup_failed(err, "query the address GID");
		return 0;
	}
	err = live_find_lower();
	if (err) {
		live_setup_failed(err, "find the Ethernet device under the port");
		return 0;
	}
	err = live_injector_create();
	if (err) {
		live_setup_failed(err, "create the injector QP");
		return 0;
	}

	live.tap_arp.type = htons(ETH_P_ARP);
	live.tap_arp.dev = live.ndev;
	live.tap_arp.func = live_tap_rcv;
	live.tap_exp.type = htons(ETH_P_802_EX1);
	live.tap_exp.dev = live.ndev;
	live.tap_exp.func = live_tap_rcv;
	dev_add_pack(&live.tap_arp);
	dev_add_pack(&live.tap_exp);
	live.taps = true;
	return 0;
}

static void live_suite_exit(struct kunit_suite *suite)
{
	if (live.taps) {
		dev_remove_pack(&live.tap_exp);
		dev_remove_pack(&live.tap_arp);
		live.taps = false;
	}
	live_injector_destroy();
	if (live.lower)
		netdev_put(live.lower, &live.lower_tracker);
	if (live.ndev) {
		if (live.opened) {
			rtnl_lock();
			dev_close(live.ndev);
			rtnl_unlock();
		}
		netdev_put(live.ndev, &live.tracker);
	}
	memset(&live, 0, sizeof(live));
}

static int live_case_init(struct kunit *test)
{
	if (live.skip)
		kunit_skip(test, "%s", live.skip);
	KUNIT_ASSERT_EQ_MSG(test, live.setup_err, 0, "setup: cannot %s",
			    live.setup_step);
	return 0;
}

/* Undo what an aborted case may have left behind. */
static void live_case_exit(struct kunit *test)
{
	int i;

	live_disarm();
	for (i = 0; i < LIVE_MAX_AH; i++) {
		if (live.ahs[i])
			rdma_destroy_ah(live.ahs[i], RDMA_DESTROY_AH_SLEEPABLE);
		live.ahs[i] = NULL;
	}
	if (live.ipng_ah) {
		ipng_ah_put(live.ipng_ah);
		live.ipng_ah = NULL;
	}
	if (live.extra_joined) {
		live.ipd->fabric->mcast_leave(live.ipd, &live.extra);
		live.extra_joined = false;
	}
	if (live.ipd && netif_running(live.ndev))
		ipng_paths_start(live.ipd);	/* a case may have stopped aging */
}

/* ---- cases ---- */

/*
 * The link address is the flags (connected mode where the device has CM),
 * the QPN of a UD QP in RTS, the port GID.
 */
static void live_test_address(struct kunit *test)
{
	struct ipng_dev *ipd = live.ipd;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	u8 addr[IPNG_ADDR_LEN];
	union ib_gid gid;

	memcpy(addr, live.ndev->dev_addr, sizeof(addr));
	KUNIT_EXPECT_EQ(test, live.ndev->addr_len, IPNG_ADDR_LEN);
	KUNIT_EXPECT_EQ(test, ipng_addr_flags(addr),
			ipd->cm ? IPNG_FLAG_RC : 0);
	KUNIT_EXPECT_NOT_NULL(test, ipd->cm);	/* rxe has RC and CM */
	KUNIT_EXPECT_EQ(test, ipng_addr_qpn(addr), ipd->qp->qp_num);
	KUNIT_EXPECT_EQ(test, ipd->qp->qp_type, IB_QPT_UD);
	ipng_addr_gid(addr, &gid);
	IPNG_EXPECT_MEMEQ(test, gid.raw, live.gid.raw, sizeof(gid.raw));
	KUNIT_EXPECT_TRUE(test, ipng_addr_is_mcast(live.ndev->broadcast));

	KUNIT_ASSERT_EQ(test, ib_query_qp(ipd->qp, &attr, IB_QP_STATE |
					  IB_QP_QKEY | IB_QP_PORT, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.qkey, IPNG_DEFAULT_QKEY);
	KUNIT_EXPECT_EQ(test, attr.port_num, ipd->port);
}

/*
 * The fabric ops turn our own GID into an address vector with a GRH from
 * the address GID, and the driver makes an address handle of it.
 */
static void live_test_ah_own_gid(struct kunit *test)
{
	struct ipng_dev *ipd = live.ipd;
	const struct ib_global_route *grh;
	struct rdma_ah_attr attr, back;
	struct ipng_ah *ah;

	KUNIT_ASSERT_EQ(test, ipd->fabric->resolve_path(ipd, &live.gid, &attr),
			0);
	KUNIT_EXPECT_EQ(test, attr.type, rdma_ah_find_type(ipd->ca, ipd->port));
	KUNIT_EXPECT_EQ(test, rdma_ah_get_port_num(&attr), ipd->port);
	KUNIT_ASSERT_TRUE(test, rdma_ah_get_ah_flags(&attr) & IB_AH_GRH);
	grh = rdma_ah_read_grh(&attr);
	IPNG_EXPECT_MEMEQ(test, grh->dgid.raw, live.gid.raw, 16);
	KUNIT_EXPECT_EQ(test, grh->sgid_index, live.gid_index);
	KUNIT_EXPECT_GT(test, grh->hop_limit, 0);
	/* Kernel address handles on RoCE take the MAC from the caller. */
	IPNG_EXPECT_MEMEQ_MSG(test, attr.roce.dmac, live.lower->dev_addr,
			      ETH_ALEN, "destination MAC of our own GID");

	ah = ipng_ah_create(ipd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	live.ipng_ah = ah;
	KUNIT_EXPECT_EQ(test, kref_read(&ah->ref), 1);
	KUNIT_EXPECT_PTR_EQ(test, ah->ah->pd, ipd->pd);
	KUNIT_ASSERT_NOT_NULL(test, ah->ah->sgid_attr);
	KUNIT_EXPECT_EQ(test, ah->ah->sgid_attr->index, live.gid_index);
	IPNG_EXPECT_MEMEQ(test, ah->ah->sgid_attr->gid.raw, live.gid.raw, 16);

	KUNIT_ASSERT_EQ(test, rdma_query_ah(ah->ah, &back), 0);
	KUNIT_EXPECT_EQ(test, rdma_ah_get_port_num(&back), ipd->port);
	IPNG_EXPECT_MEMEQ(test, rdma_ah_read_grh(&back)->dgid.raw,
			  live.gid.raw, 16);

	ipng_ah_put(ah);
	live.ipng_ah = NULL;
}

/* Whether @qpn is the QP of one of the interface's channels. */
static bool live_own_qpn(u32 qpn)
{
	bool own = false;
	unsigned int i;

	rtnl_lock();
	for (i = 0; i < live.ipd->nchans; i++)
		own |= ipng_chan(live.ipd, i)->qp->qp_num == qpn;
	rtnl_unlock();
	return own;
}

/*
 * A datagram the interface sends to its own address comes back through
 * the receive ring and NAPI: the GRH area is gone, the link header holds
 * our own address as the source, the payload is intact.
 */
static void live_test_loopback(struct kunit *test)
{
	u64 rx0 = live_stat(IPNG_STAT_RX_PACKETS);
	u64 rxb0 = live_stat(IPNG_STAT_RX_BYTES);
	u64 tx0 = live_stat(IPNG_STAT_TX_PACKETS);
	u8 cookie[LIVE_COOKIE_LEN], addr[IPNG_ADDR_LEN], src[IPNG_ADDR_LEN];
	u8 payload[LIVE_PAYLOAD_LEN];
	struct live_seen *seen;
	__be16 proto;

	seen = kunit_kzalloc(test, sizeof(*seen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	memcpy(addr, live.ndev->dev_addr, sizeof(addr));
	/* A datagram does not carry the sender's flags: the source reads 0;
	 * its QPN is that of the channel that sent it (below).
	 */
	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	KUNIT_ASSERT_EQ(test, live_xmit(addr, ETH_P_ARP, payload,
					sizeof(payload)), NET_XMIT_SUCCESS);
	KUNIT_ASSERT_EQ_MSG(test, live_wait_rx(seen, LIVE_WAIT_MS), 1,
			    "datagram to our own address not received within %u ms",
			    LIVE_WAIT_MS);

	/* The send went out on one of the channels: its QP is the source. */
	KUNIT_EXPECT_TRUE_MSG(test, live_own_qpn(ipng_addr_qpn(seen->hdr)),
			      "source QPN 0x%06x is none of our channels' QPs",
			      ipng_addr_qpn(seen->hdr));
	ipng_addr_build(src, 0, ipng_addr_qpn(seen->hdr),
			(const union ib_gid *)(addr + IPNG_GID_OFFSET));

	KUNIT_EXPECT_EQ(test, seen->len, sizeof(payload));
	IPNG_EXPECT_MEMEQ(test, seen->data, payload, 64);
	KUNIT_EXPECT_TRUE(test, !memcmp(seen->data, payload, sizeof(payload)));
	KUNIT_EXPECT_EQ(test, ntohs(seen->proto), ETH_P_ARP);
	KUNIT_EXPECT_EQ(test, seen->pkt_type, PACKET_HOST);
	KUNIT_EXPECT_EQ(test, seen->mac_len, IPNG_HARD_LEN);
	IPNG_EXPECT_MEMEQ_MSG(test, seen->hdr, src, IPNG_ADDR_LEN,
			      "source address in the link header");
	KUNIT_EXPECT_EQ(test, ipng_hdr_parse(seen->hdr + IPNG_ADDR_LEN,
					     IPNG_HLEN, &proto), 0);
	KUNIT_EXPECT_EQ(test, ntohs(proto), ETH_P_ARP);
	KUNIT_EXPECT_EQ(test, seen->parse_len, IPNG_ADDR_LEN);
	IPNG_EXPECT_MEMEQ_MSG(test, seen->parsed, src, IPNG_ADDR_LEN,
			      "address from header_ops->parse");

	KUNIT_EXPECT_GE(test, live_stat(IPNG_STAT_RX_PACKETS), rx0 + 1);
	KUNIT_EXPECT_GE(test, live_stat(IPNG_STAT_RX_BYTES),
			rxb0 + sizeof(payload));
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_TX_PACKETS, tx0 + 1,
					     LIVE_WAIT_MS), tx0 + 1);
	/* Exactly one copy came back. */
	msleep(LIVE_QUIET_MS / 3);
	KUNIT_EXPECT_EQ(test, live_hits(), 1);
}

/*
 * An aging pass judges at one instant: a path idle by its own use but not
 * by its neighbour's stays; past both, both go (aging held off meanwhile).
 */
static void live_test_aging_one_instant(struct kunit *test)
{
	struct ipng_dev *ipd = live.ipd;
	unsigned long timeout = ipng_path_timeout_jiffies(), used, sent = 0;
	u8 addr[IPNG_ADDR_LEN], payload[LIVE_PAYLOAD_LEN] = {};
	const union ib_gid *gid = (const void *)(addr + IPNG_GID_OFFSET);
	int i;

	memcpy(addr, live.ndev->dev_addr, sizeof(addr));
	cancel_delayed_work_sync(&ipd->path_gc);
	ipng_paths_flush(ipd);
	/* 1, 2: neighbour, path, its handle; 3: through the neighbour only */
	for (i = 0; i < 3; i++) {
		msleep(200);
		sent = jiffies;
		KUNIT_ASSERT_EQ(test, live_xmit(addr, ETH_P_ARP, payload,
						sizeof(payload)), 0);
		while (!ipng_path_last_used(ipd, gid) &&
		       jiffies_to_msecs(jiffies - sent) < LIVE_WAIT_MS)
			msleep(LIVE_POLL_MS);
	}
	used = ipng_path_last_used(ipd, gid);
	KUNIT_ASSERT_TRUE_MSG(test, used && time_before(used, sent),
			      "path used at %lu, third send at %lu", used, sent);
	ipng_paths_age(ipd, used + timeout + 1);
	used = ipng_path_last_used(ipd, gid);
	KUNIT_EXPECT_TRUE_MSG(test, used && !time_before(used, sent),
			      "the path of a neighbour in use went (%lu)", used);
	ipng_paths_age(ipd, jiffies + timeout + 1);
	KUNIT_EXPECT_EQ_MSG(test, ipng_path_last_used(ipd, gid), 0,
			    "a path idle at the pass's instant stayed");
}

/* While up, the lower device is in the broadcast MGID's IPv6 group. */
static void live_test_broadcast_joined(struct kunit *test)
{
	union ib_gid mgid;

	ipng_addr_gid(live.ndev->broadcast, &mgid);
	KUNIT_EXPECT_TRUE_MSG(test, live_wait_group(&mgid, true, LIVE_WAIT_MS),
			      "%s not in %pI6", live.lower->name, mgid.raw);
	KUNIT_EXPECT_TRUE_MSG(test, live_lower_has_mac(&mgid),
			      "%s filter lacks the MAC of %pI6",
			      live.lower->name, mgid.raw);
}

/*
 * A broadcast from another QP is received: the interface's QP is attached
 * to the broadcast group. The source address is the sender's QPN and GID,
 * the packet type is broadcast, and the reserved half of the IPoIB header
 * is ignored.
 */
static void live_test_broadcast_rx(struct kunit *test)
{
	u8 cookie[LIVE_COOKIE_LEN], want[IPNG_ADDR_LEN];
	u8 payload[LIVE_PAYLOAD_LEN];
	struct live_seen *seen;
	union ib_gid mgid;
	struct ib_ah *ah;

	seen = kunit_kzalloc(test, sizeof(*seen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	ipng_addr_gid(live.ndev->broadcast, &mgid);
	KUNIT_ASSERT_TRUE(test, live_wait_group(&mgid, true, LIVE_WAIT_MS));
	ah = live_injector_ah(test, &mgid);

	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	live_inject(test, ah, IPNG_MCAST_QPN, false, htons(ETH_P_ARP),
		    htons(0xbeef), payload, sizeof(payload));
	KUNIT_ASSERT_EQ_MSG(test, live_wait_rx(seen, LIVE_WAIT_MS), 1,
			    "broadcast from QP %u not received",
			    live.qp->qp_num);

	ipng_addr_build(want, 0, live.qp->qp_num, &live.gid);
	IPNG_EXPECT_MEMEQ_MSG(test, seen->hdr, want, IPNG_ADDR_LEN,
			      "source address in the link header");
	IPNG_EXPECT_MEMEQ_MSG(test, seen->parsed, want, IPNG_ADDR_LEN,
			      "address from header_ops->parse");
	KUNIT_EXPECT_EQ(test, seen->pkt_type, PACKET_BROADCAST);
	KUNIT_EXPECT_EQ(test, ntohs(seen->proto), ETH_P_ARP);
	KUNIT_EXPECT_EQ(test, seen->len, sizeof(payload));
	KUNIT_EXPECT_TRUE(test, !memcmp(seen->data, payload, sizeof(payload)));
}

/*
 * The interface's own broadcast comes back to its QP through the group
 * and is dropped as its own multicast, not passed up.
 */
static void live_test_own_broadcast_dropped(struct kunit *test)
{
	u64 own0 = live_stat(IPNG_STAT_RX_DROP_OWN_MCAST);
	u8 cookie[LIVE_COOKIE_LEN], payload[LIVE_PAYLOAD_LEN];
	u8 bcast[IPNG_ADDR_LEN];
	union ib_gid mgid;

	memcpy(bcast, live.ndev->broadcast, sizeof(bcast));
	ipng_addr_gid(bcast, &mgid);
	KUNIT_ASSERT_TRUE(test, live_wait_group(&mgid, true, LIVE_WAIT_MS));
	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	KUNIT_ASSERT_EQ(test, live_xmit(bcast, ETH_P_ARP, payload,
					sizeof(payload)), NET_XMIT_SUCCESS);
	KUNIT_EXPECT_GE_MSG(test, live_wait_stat(IPNG_STAT_RX_DROP_OWN_MCAST,
						 own0 + 1, LIVE_WAIT_MS),
			    own0 + 1, "own broadcast not seen and dropped");
	KUNIT_EXPECT_EQ_MSG(test, live_wait_rx(NULL, LIVE_QUIET_MS / 3), 0,
			    "own broadcast passed up");
}

/* A frame with an EtherType other than IPv4, ARP and IPv6 is dropped. */
static void live_test_unknown_type_dropped(struct kunit *test)
{
	u64 drop0 = live_stat(IPNG_STAT_RX_DROP_PROTO);
	u8 cookie[LIVE_COOKIE_LEN], payload[LIVE_PAYLOAD_LEN];
	union ib_gid mgid;
	struct ib_ah *ah;

	ipng_addr_gid(live.ndev->broadcast, &mgid);
	ah = live_injector_ah(test, &mgid);
	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	live_inject(test, ah, IPNG_MCAST_QPN, false, htons(ETH_P_802_EX1), 0,
		    payload, sizeof(payload));
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_RX_DROP_PROTO,
					     drop0 + 1, LIVE_WAIT_MS),
			drop0 + 1);
	KUNIT_EXPECT_EQ_MSG(test, live_wait_rx(NULL, LIVE_QUIET_MS / 3), 0,
			    "EtherType 0x%04x passed up", ETH_P_802_EX1);
}

/*
 * Frames too short for the GRH area and the IPoIB header (empty, two
 * bytes) are dropped and counted, and the ring keeps working.
 */
static void live_test_short_dropped(struct kunit *test)
{
	u64 short0 = live_stat(IPNG_STAT_RX_DROP_SHORT);
	u8 cookie[LIVE_COOKIE_LEN], payload[LIVE_PAYLOAD_LEN];
	static const u8 two[2] = { 0x08, 0x06 };
	union ib_gid mgid;
	struct ib_ah *ah;

	ipng_addr_gid(live.ndev->broadcast, &mgid);
	ah = live_injector_ah(test, &mgid);
	live_inject(test, ah, IPNG_MCAST_QPN, true, 0, 0, NULL, 0);
	live_inject(test, ah, IPNG_MCAST_QPN, true, 0, 0, two, sizeof(two));
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_RX_DROP_SHORT,
					     short0 + 2, LIVE_WAIT_MS),
			short0 + 2);

	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	live_inject(test, ah, IPNG_MCAST_QPN, false, htons(ETH_P_ARP), 0,
		    payload, sizeof(payload));
	KUNIT_EXPECT_EQ_MSG(test, live_wait_rx(NULL, LIVE_WAIT_MS), 1,
			    "no frame received after the short ones");
}

/*
 * A group joined through the fabric ops receives: the lower device joins
 * the IPv6 group and a datagram sent to it arrives as multicast. After
 * leaving, both are undone.
 */
static void live_test_extra_group(struct kunit *test)
{
	struct ipng_dev *ipd = live.ipd;
	u8 cookie[LIVE_COOKIE_LEN], payload[LIVE_PAYLOAD_LEN];
	struct live_seen *seen;
	struct ib_ah *ah;
	u16 low;
	int err;

	seen = kunit_kzalloc(test, sizeof(*seen), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, seen);
	/* An administratively scoped IPv4 group nothing else uses. */
	get_random_bytes(&low, sizeof(low));
	ipng_mgid_ipv4(&live.extra.mgid, ipd->scope, ipd->pkey,
		       htonl(0xeffe0000 | low));
	KUNIT_ASSERT_FALSE(test, live_lower_in_group(&live.extra.mgid));

	/* The fabric takes RTNL itself where it needs it. */
	live.extra.join = IPNG_MC_FULL;
	live.extra.broadcast = false;
	err = ipd->fabric->mcast_join(ipd, &live.extra);
	KUNIT_ASSERT_EQ_MSG(test, err, 0, "mcast_join(%pI6)",
			    live.extra.mgid.raw);
	live.extra_joined = true;
	KUNIT_EXPECT_TRUE(test, live_lower_in_group(&live.extra.mgid));
	KUNIT_EXPECT_TRUE(test, live_lower_has_mac(&live.extra.mgid));

	ah = live_injector_ah(test, &live.extra.mgid);
	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	live_inject(test, ah, IPNG_MCAST_QPN, false, htons(ETH_P_ARP), 0,
		    payload, sizeof(payload));
	KUNIT_ASSERT_EQ_MSG(test, live_wait_rx(seen, LIVE_WAIT_MS), 1,
			    "datagram to joined group %pI6 not received",
			    live.extra.mgid.raw);
	KUNIT_EXPECT_EQ(test, seen->pkt_type, PACKET_MULTICAST);
	KUNIT_EXPECT_EQ(test, seen->len, sizeof(payload));

	ipd->fabric->mcast_leave(ipd, &live.extra);
	live.extra_joined = false;
	KUNIT_EXPECT_FALSE(test, live_lower_in_group(&live.extra.mgid));

	live_arm(cookie);
	live_payload(payload, sizeof(payload), cookie);
	live_inject(test, ah, IPNG_MCAST_QPN, false, htons(ETH_P_ARP), 0,
		    payload, sizeof(payload));
	KUNIT_EXPECT_EQ_MSG(test, live_wait_rx(NULL, LIVE_QUIET_MS), 0,
			    "datagram to a group left was received");
}

/*
 * ndo_start_xmit drops frames without a whole link header and frames
 * larger than the MTU, and sends a frame of exactly the MTU.
 */
static void live_test_xmit_limits(struct kunit *test)
{
	u64 bad0 = live_stat(IPNG_STAT_TX_DROP_BAD_HEADER);
	u64 big0 = live_stat(IPNG_STAT_TX_DROP_TOO_BIG);
	u64 own0 = live_stat(IPNG_STAT_RX_DROP_OWN_MCAST);
	unsigned int mtu = READ_ONCE(live.ndev->mtu);
	u8 cookie[LIVE_COOKIE_LEN], bcast[IPNG_ADDR_LEN];
	u8 *payload;

	payload = kunit_kzalloc(test, mtu + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, payload);
	memcpy(bcast, live.ndev->broadcast, sizeof(bcast));

	KUNIT_EXPECT_EQ(test, live_xmit_raw(IPNG_HARD_LEN - 1),
			NET_XMIT_SUCCESS);
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_TX_DROP_BAD_HEADER,
					     bad0 + 1, LIVE_WAIT_MS), bad0 + 1);

	live_arm(cookie);
	live_payload(payload, mtu + 1, cookie);
	KUNIT_EXPECT_EQ(test, live_xmit(bcast, ETH_P_ARP, payload, mtu + 1),
			NET_XMIT_SUCCESS);
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_TX_DROP_TOO_BIG,
					     big0 + 1, LIVE_WAIT_MS), big0 + 1);

	/* Exactly the MTU goes out; it comes back as our own broadcast. */
	KUNIT_EXPECT_EQ(test, live_xmit(bcast, ETH_P_ARP, payload, mtu),
			NET_XMIT_SUCCESS);
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_RX_DROP_OWN_MCAST,
					     own0 + 1, LIVE_WAIT_MS), own0 + 1);
	KUNIT_EXPECT_EQ(test, live_stat(IPNG_STAT_TX_DROP_TOO_BIG), big0 + 1);
	KUNIT_EXPECT_EQ(test, live_hits(), 0);
}

static bool live_foreign_called;

static void live_foreign_done(struct ib_cq *cq, struct ib_wc *wc)
{
	WRITE_ONCE(live_foreign_called, true);
}

/* A zero-byte UD send on channel 0's QP to the injector, naming @cqe. */
static int live_post_foreign(struct ib_ah *ah, struct ib_cqe *cqe)
{
	struct ib_ud_wr wr = {
		.wr = {
			.wr_cqe		= cqe,
			.opcode		= IB_WR_SEND,
			.send_flags	= IB_SEND_SIGNALED,
		},
		.ah		= ah,
		.remote_qpn	= live.qp->qp_num,
		.remote_qkey	= LIVE_INJECT_QKEY,
	};
	struct ib_qp *qp;

	rtnl_lock();
	qp = ipng_chan(live.ipd, 0)->qp;
	rtnl_unlock();
	return ib_post_send(qp, &wr.wr, NULL);
}

/*
 * Completions on a channel's send CQ that name no send of its ring: one
 * with no wr_cqe at all (what rxe 6.1 delivered after a QP reset, read
 * from the send queue it was zeroing: a NULL dereference in the poll
 * loop, make soak) and one naming an entry that is not a slot (a ring
 * freed by a ring change). Both are counted and ignored; neither is
 * followed.
 */
static void live_test_foreign_completions(struct kunit *test)
{
	struct ipng_dev *ipd = live.ipd;
	struct rdma_ah_attr attr;
	struct ib_cqe *foreign;
	struct ipng_ah *ah;
	u64 err0 = live_stat(IPNG_STAT_TX_ERRORS);

	KUNIT_ASSERT_EQ(test, ipd->fabric->resolve_path(ipd, &live.gid, &attr),
			0);
	ah = ipng_ah_create(ipd, &attr);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, ah);
	live.ipng_ah = ah;
	foreign = kunit_kzalloc(test, sizeof(*foreign), GFP_KERNEL);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, foreign);
	foreign->done = live_foreign_done;
	WRITE_ONCE(live_foreign_called, false);

	KUNIT_ASSERT_EQ(test, live_post_foreign(ah->ah, NULL), 0);
	KUNIT_ASSERT_EQ(test, live_post_foreign(ah->ah, foreign), 0);
	KUNIT_EXPECT_GE(test, live_wait_stat(IPNG_STAT_TX_ERRORS, err0 + 2,
					     LIVE_WAIT_MS), err0 + 2);
	KUNIT_EXPECT_FALSE_MSG(test, READ_ONCE(live_foreign_called),
			       "a completion's own done was called");
	/* The ring still works: a datagram to ourselves goes and comes. */
	live_test_loopback(test);

	ipng_ah_put(ah);
	live.ipng_ah = NULL;
}

static struct kunit_case live_cases[] = {
	KUNIT_CASE(live_test_address),
	KUNIT_CASE(live_test_ah_own_gid),
	KUNIT_CASE(live_test_loopback),
	KUNIT_CASE(live_test_aging_one_instant),
	KUNIT_CASE(live_test_broadcast_joined),
	KUNIT_CASE(live_test_broadcast_rx),
	KUNIT_CASE(live_test_own_broadcast_dropped),
	KUNIT_CASE(live_test_unknown_type_dropped),
	KUNIT_CASE(live_test_short_dropped),
	KUNIT_CASE(live_test_extra_group),
	KUNIT_CASE(live_test_xmit_limits),
	KUNIT_CASE(live_test_foreign_completions),
	{}
};

static struct kunit_suite live_suite = {
	.name		= "ipoib_ng_live",
	.suite_init	= live_suite_init,
	.suite_exit	= live_suite_exit,
	.init		= live_case_init,
	.exit		= live_case_exit,
	.test_cases	= live_cases,
};

kunit_test_suite(live_suite);

MODULE_DESCRIPTION("KUnit tests of ipoib_ng on a live RDMA port");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(EXPORTED_FOR_KUNIT_TESTING);
