/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the connected-mode files share and nothing else includes: the
 * connection structures, the interface's connected-mode state, and the few
 * calls between connection management (ipoib_cm.c: caps, table, walks,
 * open/stop; ipoib_cm_conn.c: the CM exchanges of each connection) and
 * the datapath (ipoib_cm_data.c: RC sends, receives and their buffers).
 */
#ifndef IPNG_CM_PRIV_H
#define IPNG_CM_PRIV_H

#include <linux/hashtable.h>
#include <linux/rhashtable.h>
#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <rdma/ib_cm.h>

#include "ipoib.h"

#define IPNG_CM_FRAGS		DIV_ROUND_UP(IPNG_CM_BUF_LEN, PAGE_SIZE)
#define IPNG_CM_RETRY		(10 * HZ) /* UD only after a failed connect */
#define IPNG_CM_DRAIN_TIMEOUT	(5 * HZ)	/* with the channels running */
#define IPNG_CM_DRAIN_MAX	(60 * HZ)	/* halted channels included */
#define IPNG_CM_DRAIN_TICK	(HZ / 10)
#define IPNG_CM_CQ_SPARE	64	/* drain markers and slack */
#define IPNG_CM_PEER_BITS	8	/* 256 buckets of per-peer counts */

/* Bits of &ipng_cm.flags. */
enum {
	IPNG_CM_F_OPEN,		/* ipng_cm_open() succeeded, no stop since */
};

/**
 * struct ipng_cm_key - a peer: its UD QPN and port GID
 * @qpn: UD QPN from its link address
 * @gid: port GID from its link address
 */
struct ipng_cm_key {
	u32 qpn;
	union ib_gid gid;
};

struct ipng_cm_rx;

/**
 * struct ipng_cm_rxbuf - one receive buffer: pages, one SGE each
 * @cqe: completion entry of its receive
 * @rx: the connection it is posted to, NULL when posted to the SRQ
 * @pages: the pages
 * @dma: their DMA addresses
 */
struct ipng_cm_rxbuf {
	struct ib_cqe cqe;
	struct ipng_cm_rx *rx;
	struct page *pages[IPNG_CM_FRAGS];
	u64 dma[IPNG_CM_FRAGS];
};

/**
 * struct ipng_cm_ring - receive buffers of the SRQ or of one connection
 * @bufs: @size buffers
 * @size: number of buffers
 * @posted: buffers currently posted
 */
struct ipng_cm_ring {
	struct ipng_cm_rxbuf *bufs;
	u32 size;
	atomic_t posted;
};

/**
 * struct ipng_cm_peer - connections held with one remote GID
 * @node: in &ipng_cm.peers
 * @gid: the GID
 * @count: connections and failed markers holding a slot with it (at most
 *	IPNG_CM_PER_PEER)
 */
struct ipng_cm_peer {
	struct hlist_node node;
	union ib_gid gid;
	unsigned int count;
};

/**
 * struct ipng_cm_hold - what one connection counts against the caps
 * @peer: its entry in the per-peer counts, NULL once given back
 * @slot: holds a max_connections slot
 * @setup: counted in &ipng_cm.setup
 * @own_ring: counted in &ipng_cm.own_rings
 *
 * Taken by ipng_cm_hold_take() and given back by ipng_cm_hold_put(),
 * both under &ipng_cm.lock.
 */
struct ipng_cm_hold {
	struct ipng_cm_peer *peer;
	bool slot;
	bool setup;
	bool own_ring;
};

/**
 * struct ipng_cm - connected-mode state of an interface
 * @ipd: the interface
 * @wq: ordered: connects, releases, the reaper and close walks
 * @listen: CM ID listening on our service ID while open
 * @srq: shared receive queue while open, NULL without one
 * @srq_ring: buffers of @srq
 * @srq_qps: QPs attached to @srq and not destroyed yet
 * @nfrags: pages per receive buffer
 * @buf_len: bytes per receive buffer, as advertised to peers
 * @mtu: largest connected-mode MTU (@buf_len less the header)
 * @tx_size: send ring entries per connection; also the cap on sends in
 *	flight over all connections, which the send CQ is sized for
 * @rx_max: incoming connections with rings of their own (no SRQ) that the
 *	receive CQ has room for, at most IPNG_CM_OWN_RING_MAX
 * @queued: truesize of the packets waiting for connections, all of them
 * @txs: outgoing connections by peer (struct ipng_cm_tx)
 * @lock: protects @tx_list and @rx_list (writers; readers use RCU),
 *	@running, the rx states, @peers, @setup, @own_rings and @markers
 * @tx_list: every outgoing connection
 * @rx_list: every incoming connection
 * @peers: struct ipng_cm_peer by GID
 * @setup: connections being made, both directions
 * @own_rings: incoming connections with a receive ring of their own
 * @markers: failed outgoing entries kept as markers
 * @rx_seq: spreads incoming connections over the channels
 * @running: open: new connections are made and accepted
 * @flags: IPNG_CM_F_* bits
 * @req_busy: REQ handlers running (stop waits for them)
 * @budget: the max_connections cap
 * @reap_work: closes idle connections and expired markers
 * @close_work: closes every connection (stop)
 * @flush_work: closes the outgoing ones (mode change, port event)
 * @drain_wq: woken when a closing connection's sends or receives return
 */
struct ipng_cm {
	struct ipng_dev *ipd;
	struct workqueue_struct *wq;
	struct ib_cm_id *listen;
	struct ib_srq *srq;
	struct ipng_cm_ring srq_ring;
	atomic_t srq_qps;
	unsigned int nfrags;
	u32 buf_len;
	int mtu;
	u32 tx_size;
	unsigned int rx_max;
	atomic_t queued;

	struct rhashtable txs;
	spinlock_t lock;		/* see above */
	struct list_head tx_list;
	struct list_head rx_list;
	DECLARE_HASHTABLE(peers, IPNG_CM_PEER_BITS);
	unsigned int setup;
	unsigned int own_rings;
	unsigned int markers;
	atomic_t rx_seq;
	bool running;
	unsigned long flags;
	atomic_t req_busy;
	struct ipng_cm_budget budget;

	struct delayed_work reap_work;
	struct work_struct close_work;
	struct work_struct flush_work;
	wait_queue_head_t drain_wq;
};

/**
 * struct ipng_cm_tx - an outgoing connection
 * @node: in &ipng_cm.txs
 * @key: the peer
 * @cm: connected-mode state of the interface
 * @state: state machine; changed under every transmit queue's lock
 * @send_lock: orders transmit queues sending to this peer: taken around
 *	@queue, @queued, @head and the ring by the transmit path
 * @queue: packets waiting for the connection
 * @queued: their truesize
 * @id: CM ID while connecting or connected
 * @qp: the RC QP (valid for the release work and the CM handlers only)
 * @qpn: number of @qp, kept for dumps after @qp is gone
 * @mtu: the largest packet the peer receives
 * @hold: what it counts against the caps (@cm->lock)
 * @marker: counted in &ipng_cm.markers (@cm->lock)
 * @created: jiffies of creation
 * @last_used: jiffies of the last packet, for reaping
 * @retry_at: failed: jiffies after which a new connect is tried
 * @slots: send ring of @cm->tx_size entries
 * @head: next slot to post (@send_lock)
 * @tail: next slot to complete (NAPI)
 * @cqe: completion entry of every send
 * @connect_work: sets the connection up
 * @release_work: destroys its verbs objects; frees it once closing
 * @error_work: feeds a QP error to the state machine
 * @retry_work: closes a failed entry whose retry time has come
 * @list: in &ipng_cm.tx_list (RCU)
 * @walk: in the list of a walk on the workqueue
 * @rcu: frees it after transmitters and dumps are done with it
 */
struct ipng_cm_tx {
	struct rhash_head node;
	struct ipng_cm_key key;
	struct ipng_cm *cm;
	enum ipng_cm_state state;
	spinlock_t send_lock;		/* see above */
	struct sk_buff_head queue;
	unsigned int queued;
	struct ib_cm_id *id;
	struct ib_qp *qp;
	u32 qpn;
	u32 mtu;
	struct ipng_cm_hold hold;
	bool marker;
	unsigned long created;
	unsigned long last_used;
	unsigned long retry_at;
	struct ipng_slot *slots;
	u32 head;
	u32 tail;
	struct ib_cqe cqe;
	struct work_struct connect_work;
	struct work_struct release_work;
	struct work_struct error_work;
	struct work_struct retry_work;
	struct list_head list;
	struct list_head walk;
	struct rcu_head rcu;
};

/**
 * struct ipng_cm_rx - an incoming connection
 * @cm: connected-mode state of the interface
 * @id: its CM ID
 * @qp: the RC QP (valid for the release work and the CM handlers only)
 * @qpn: number of @qp, kept for dumps
 * @state: state machine, under &ipng_cm.lock
 * @chan: the channel whose NAPI context passes its packets up
 * @addr: the peer's link address, source of every packet received
 * @hold: what it counts against the caps (@cm->lock)
 * @created: jiffies of creation
 * @last_rx: jiffies of the last packet, for reaping
 * @ring: its receive buffers when there is no SRQ
 * @drain_cqe: completion entry of the marker that ends a drain
 * @drained: set (release) when that marker is back
 * @release_work: drains, destroys and frees it
 * @list: in &ipng_cm.rx_list (RCU)
 * @walk: in the list of a walk on the workqueue
 * @rcu: frees it after dumps are done with it
 */
struct ipng_cm_rx {
	struct ipng_cm *cm;
	struct ib_cm_id *id;
	struct ib_qp *qp;
	u32 qpn;
	enum ipng_cm_state state;
	unsigned int chan;
	u8 addr[IPNG_ADDR_LEN];
	struct ipng_cm_hold hold;
	unsigned long created;
	unsigned long last_rx;
	struct ipng_cm_ring ring;
	struct ib_cqe drain_cqe;
	bool drained;
	struct work_struct release_work;
	struct list_head list;
	struct list_head walk;
	struct rcu_head rcu;
};

/* ipoib_cm.c: caps, walks, open/stop */
enum ipng_cm_verdict ipng_cm_hold_take(struct ipng_cm *cm,
				       const union ib_gid *gid, bool own_ring,
				       struct ipng_cm_hold *hold);
void ipng_cm_hold_put_marker(struct ipng_cm *cm, struct ipng_cm_hold *hold);
void ipng_cm_hold_put(struct ipng_cm *cm, struct ipng_cm_hold *hold);
void ipng_cm_hold_setup_done(struct ipng_cm *cm, struct ipng_cm_hold *hold);
void ipng_cm_count_refusal(struct ipng_cm *cm, enum ipng_cm_verdict v,
			   bool bh);

/* ipoib_cm_conn.c: the connections */
int ipng_cm_table_init(struct ipng_cm *cm);
void ipng_cm_table_destroy(struct ipng_cm *cm);
struct ipng_cm_tx *ipng_cm_tx_get(struct ipng_cm *cm,
				  const struct ipng_cm_key *key);
void ipng_cm_tx_event(struct ipng_cm_tx *tx, enum ipng_cm_event event);
void ipng_cm_rx_event(struct ipng_cm_rx *rx, enum ipng_cm_event event);
int ipng_cm_rx_handler(struct ib_cm_id *id, const struct ib_cm_event *ev);

/* ipoib_cm_data.c: the datapath */
int ipng_cm_ring_init(struct ipng_dev *ipd, struct ipng_cm_ring *ring,
		      u32 size, struct ipng_cm_rx *rx);
void ipng_cm_ring_free(struct ipng_dev *ipd, struct ipng_cm_ring *ring);
void ipng_cm_tx_done(struct ib_cq *cq, struct ib_wc *wc);
void ipng_cm_tx_flush_queue(struct ipng_cm_tx *tx);
unsigned int ipng_cm_tx_unqueue(struct ipng_cm_tx *tx,
				struct sk_buff_head *list);

#endif /* IPNG_CM_PRIV_H */
