/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softib: a software InfiniBand HCA for tests, not part of ipoib_ng.ko.
 *
 * This header owns the objects every part shares: the device and its one
 * port (with the port's SMA-visible attributes and their lock), queue
 * pairs, completion queues, shared receive queues, address handles and
 * the packets that cross the in-kernel cable between two ports.
 *
 * Files: softib_main.c (module, devices, cable, port queries and events),
 * softib_sma.c (the subnet management agent in process_mad), softib_verbs.c
 * (PD, MR, AH, CQ, SRQ, QP objects and the QP state machine),
 * softib_wire.c (posting work, routing and delivering packets).
 */
#ifndef _SOFTIB_H
#define _SOFTIB_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_smi.h>
#include "softib_compat_gen.h"

#define SIB_PKEYS		64	/* two P_KeyTable blocks */
#define SIB_MAX_QP		4096
#define SIB_MAX_WR		8192
#define SIB_MAX_SGE		16
#define SIB_MAX_CQE		65536
#define SIB_MAX_SRQ		256
#define SIB_MAX_MCAST		1024
#define SIB_MAX_MCAST_QP	64	/* QPs attached to one group */
#define SIB_MAX_MSG		BIT(20)		/* largest message */
#define SIB_PSN_MASK		0xffffff
#define SIB_MAX_INLINE		512
#define SIB_QPN_MAX		0xffffff
#define SIB_RX_QUEUE_MAX	4096	/* packets waiting on one port */
#define SIB_GRH			40
#define SIB_VENDOR_ID		0x00aa5e

/* PortInfo values the SMA keeps (Set writes them, Get reads them). */
struct sib_port_attrs {
	u64 mkey;
	u64 gid_prefix;		/* host order */
	u16 lid;
	u16 sm_lid;
	u16 mkey_lease;
	u8 mkey_prot;
	u8 lmc;
	u8 sm_sl;
	u8 state;		/* enum ib_port_state */
	u8 phys_state;		/* enum ib_port_phys_state */
	u8 link_down_default;
	u8 neighbor_mtu;	/* enum ib_mtu */
	u8 op_vls;
	u8 subnet_timeout;
	u8 resp_time;
	u8 width_enabled;
	u8 speed_enabled;
	u8 vl_high_limit;
	u8 hoq_life;
	u8 init_type_reply;
	u8 pe_flags;		/* partition enforcement and filter bits */
	u16 pkey_violations;
	u16 qkey_violations;
	u32 cap_mask;
	u16 pkeys[SIB_PKEYS];
	u8 sl2vl[8];
	u8 vlarb[4][IB_SMP_DATA_SIZE];
};

struct sib_dev;

/* What the wire counts per port: packets sent and received, and drops. */
enum sib_count {
	SIB_TX,			/* packets that left the port */
	SIB_RX,			/* packets delivered to a QP */
	SIB_DROP_LINK,		/* cable unplugged or port physically down */
	SIB_DROP_STATE,		/* port state does not pass this packet */
	SIB_DROP_QFULL,		/* receive queue of the port full */
	SIB_DROP_NOMEM,		/* no memory for a multicast copy */
	SIB_DROP_DLID,		/* DLID is not the port's */
	SIB_DROP_NOQP,		/* no QP of that number, or not receiving */
	SIB_DROP_PKEY,		/* P_Key does not match */
	SIB_DROP_QKEY,		/* Q_Key does not match */
	SIB_DROP_NORECV,	/* no receive posted */
	SIB_DROP_MCAST,		/* multicast group with no QP attached */
	SIB_DROP_LEN,		/* receive buffer too short */
	SIB_DROP_SEQ,		/* RC message out of sequence */
	SIB_DROP_RNR,		/* RC message with no receive, no RNR retry */
	SIB_RC_ACK,		/* RC messages acknowledged to their sender */
	SIB_RC_HELD,		/* RC messages that waited for a receive */
	SIB_NCOUNTS
};

/**
 * struct sib_port - the one port of a softib device
 * @dev: its device
 * @peer: the port at the other end of the cable, or NULL (fixed while
 *	the devices are registered)
 * @lock: protects @a, @qp0 and @qp1; taken with interrupts off, as
 *	post_send may be called with them off (the MAD layer does)
 * @a: the attributes the SMA reads and writes
 * @qp0: the SMI QP of the port, or NULL
 * @qp1: the GSI QP of the port, or NULL
 * @rx_lock: protects @rx_queue and @rx_len
 * @rx_queue: packets that arrived and wait for @rx_work
 * @rx_len: packets on @rx_queue
 * @rx_work: delivers @rx_queue to the port's QPs
 * @retry: RC QPs whose held messages may now find receives (under
 *	@rx_lock; each holds a reference)
 * @link_up: the cable is plugged in (a test can unplug it)
 * @count: what the wire counted, by enum sib_count
 * @debugfs: the port's debugfs directory
 */
struct sib_port {
	struct sib_dev *dev;
	struct sib_port *peer;
	spinlock_t lock;	/* @a, @qp0, @qp1; irqs off */
	struct sib_port_attrs a;
	struct sib_qp *qp0;
	struct sib_qp *qp1;
	spinlock_t rx_lock;	/* @rx_queue, @rx_len */
	struct list_head rx_queue;
	unsigned int rx_len;
	struct work_struct rx_work;
	struct list_head retry;
	bool link_up;
	atomic_long_t count[SIB_NCOUNTS];
	struct dentry *debugfs;
};

/**
 * struct sib_mcg - a multicast group some QPs of the device are attached to
 * @mgid: the group's GID
 * @mlid: the group's LID
 * @nqp: entries used in @qpn
 * @qpn: the QPs attached
 */
struct sib_mcg {
	struct list_head list;
	union ib_gid mgid;
	u16 mlid;
	unsigned int nqp;
	u32 qpn[SIB_MAX_MCAST_QP];
};

/**
 * struct sib_dev - one soft HCA
 * @ibdev: the ib_core device
 * @index: its number (softib<index>)
 * @node_guid: node GUID (host order); the port GUID is @node_guid + 1
 * @port: its port (number 1)
 * @qps: QP number to &struct sib_qp, for QPs other than 0 and 1 (its
 *	lock, taken with interrupts off, orders lookups against destroy)
 * @next_qpn: where the next QP number search starts
 * @mcast_lock: protects @mcast
 * @mcast: multicast groups with attached QPs
 * @nmcast: entries in @mcast
 */
struct sib_dev {
	struct ib_device ibdev;
	int index;
	u64 node_guid;
	struct sib_port port;
	struct xarray qps;
	u32 next_qpn;
	spinlock_t mcast_lock;	/* @mcast, @nmcast */
	struct list_head mcast;
	unsigned int nmcast;
};

struct sib_pd {
	struct ib_pd ibpd;
};

struct sib_mr {
	struct ib_mr ibmr;
};

struct sib_ah {
	struct ib_ah ibah;
	u16 dlid;
	u8 sl;
	u8 path_bits;
	bool has_grh;
	u8 sgid_index;
	u8 hop_limit;
	u8 tclass;
	u32 flow_label;
	union ib_gid dgid;
};

/**
 * struct sib_cq - a completion queue: a ring of work completions
 * @lock: protects the ring and @armed
 * @wc: @size entries
 * @head: next entry to poll
 * @count: entries held
 * @armed: IB_CQ_NEXT_COMP or IB_CQ_SOLICITED while armed, else 0
 * @notify_work: calls the consumer's completion handler
 * @overflowed: a completion was lost to a full ring (reported once)
 */
struct sib_cq {
	struct ib_cq ibcq;
	spinlock_t lock;	/* the ring, @armed */
	struct ib_wc *wc;
	unsigned int size;
	unsigned int head;
	unsigned int count;
	unsigned int armed;
	struct work_struct notify_work;
	bool overflowed;
};

/* A posted receive, on a QP's receive queue or an SRQ. */
struct sib_rwqe {
	u64 wr_id;		/* or the wr_cqe that shares its place */
	unsigned int nsge;
	struct ib_sge sge[SIB_MAX_SGE];
};

/* A ring of posted receives; head is the oldest. */
struct sib_rq {
	spinlock_t lock;	/* the ring */
	struct sib_rwqe *wqe;
	unsigned int size;
	unsigned int head;
	unsigned int count;
	unsigned int max_sge;
	bool waiting;		/* an RC QP waits for the next post */
};

/* A posted RC send, waiting for its acknowledgment. */
struct sib_swqe {
	u64 wr_id;
	u32 psn;
	u32 len;
	bool signaled;
	u8 opcode;		/* enum ib_wc_opcode */
};

/**
 * struct sib_srq - a shared receive queue
 * @rq: its receives; @rq.lock also protects @limit and @waiters
 * @limit: the limit event's threshold, 0 when disarmed
 * @waiters: RC QPs holding messages until a receive is posted
 */
struct sib_srq {
	struct ib_srq ibsrq;
	struct sib_rq rq;
	u32 limit;
	struct list_head waiters;
};

/**
 * struct sib_qp - a queue pair
 * @ibqp: the ib_core QP
 * @dev: its device
 * @lock: protects the attributes and @state
 * @state: enum ib_qp_state
 * @rq: its receive queue (unused with an SRQ)
 * @srq: the SRQ it receives from, or NULL
 * @sq_size: the send queue's size
 * @ref: held by its number's table entry and by lookups (sib_qp_lookup)
 * @freed: completed when @ref drops to zero (destroy waits for it)
 * @port: its port
 * @serial: unique for the module's lifetime: an acknowledgment for a
 *	QP since destroyed does not reach a new QP given the same number
 * @sq_psn: PSN of the next RC message sent (under @lock)
 * @rq_psn: PSN of the next RC message expected (under @lock)
 * @swqe: RC sends posted and not yet acknowledged, @sq_size entries
 *	from @sq_head, @sq_count of them (under @lock)
 * @held: RC messages that found no receive posted, in order (under
 *	@lock; the sender's send queue bounds them)
 * @srq_node: on the SRQ's waiters while @held is not empty (under the
 *	SRQ's lock)
 * @retry_node: on the port's retry list (under the port's rx_lock)
 * @comm_est: IB_EVENT_COMM_EST was raised
 */
struct sib_qp {
	struct ib_qp ibqp;
	struct sib_dev *dev;
	spinlock_t lock;	/* the attributes, @state */
	u8 state;
	u8 sq_sig_all;
	u8 block_mc_lb;
	u16 pkey_index;
	u32 qkey;
	u32 dest_qpn;
	u16 dlid;
	u8 sl;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 timeout;
	u32 mtu;
	struct sib_rq rq;
	struct sib_srq *srq;
	unsigned int sq_size;
	unsigned int sq_max_sge;
	refcount_t ref;
	struct completion freed;
	struct sib_port *port;
	u64 serial;
	u32 sq_psn;
	u32 rq_psn;
	struct sib_swqe *swqe;
	unsigned int sq_head;
	unsigned int sq_count;
	struct list_head held;
	struct list_head srq_node;
	struct list_head retry_node;
	bool comm_est;
};

/**
 * struct sib_pkt - a packet on the cable
 * @list: on the destination port's rx_queue
 * @slid: source LID
 * @dlid: destination LID
 * @sl: service level
 * @src_qpn: sending QP
 * @dst_qpn: receiving QP (0xffffff: multicast)
 * @qkey: UD Q_Key
 * @pkey: the packet's P_Key
 * @opcode: what the receiver completes (IB_WC_RECV, IB_WC_RECV_RDMA_WITH_IMM)
 * @has_imm: @imm is valid
 * @imm: immediate data
 * @solicited: the sender asked for a solicited event
 * @has_grh: @grh is valid
 * @grh: global route header
 * @from: the port that sent it
 * @rc: a reliable-connected message: the sender waits for its
 *	acknowledgment (sib_rc_ack())
 * @rnr_retry: the sender's RNR retry count (RC)
 * @psn: the message's sequence number (RC)
 * @src_serial: the sending QP's serial (RC; see &struct sib_qp)
 * @len: bytes of payload
 * @npages: pages in @page
 * @page: the payload, PAGE_SIZE bytes a page (order-0 pages, so that a
 *	64 KiB message needs no high-order allocation in atomic context)
 */
struct sib_pkt {
	struct list_head list;
	u16 slid;
	u16 dlid;
	u8 sl;
	u32 src_qpn;
	u32 dst_qpn;
	u32 qkey;
	u16 pkey;
	u8 opcode;
	bool has_imm;
	__be32 imm;
	bool solicited;
	bool has_grh;
	struct ib_grh grh;
	struct sib_port *from;
	bool rc;
	u8 rnr_retry;
	u32 psn;
	u64 src_serial;
	u32 len;
	unsigned int npages;
	void *page[];
};

static inline struct sib_dev *to_sdev(struct ib_device *d)
{
	return container_of(d, struct sib_dev, ibdev);
}

static inline struct sib_qp *to_sqp(struct ib_qp *q)
{
	return container_of(q, struct sib_qp, ibqp);
}

static inline struct sib_cq *to_scq(struct ib_cq *c)
{
	return container_of(c, struct sib_cq, ibcq);
}

static inline struct sib_srq *to_ssrq(struct ib_srq *s)
{
	return s ? container_of(s, struct sib_srq, ibsrq) : NULL;
}

static inline struct sib_ah *to_sah(struct ib_ah *a)
{
	return container_of(a, struct sib_ah, ibah);
}

static inline u64 sib_port_guid(const struct sib_dev *sdev)
{
	return sdev->node_guid + 1;
}

static inline void sib_count(struct sib_port *port, enum sib_count what)
{
	atomic_long_inc(&port->count[what]);
}

/* softib_debugfs.c */
void sib_debugfs_init(void);
void sib_debugfs_exit(void);
void sib_debugfs_add(struct sib_port *port);
void sib_debugfs_del(struct sib_port *port);

/* softib_main.c */
void sib_port_set_link(struct sib_port *port, bool up);
void sib_port_events(struct sib_port *port, u32 events);
u16 sib_pkey_at(struct sib_port *port, u16 index);
bool sib_pkey_find(struct sib_port *port, u16 pkey, u16 *index);
bool sib_pkey_match(u16 a, u16 b);

/* softib_sma.c */
int sib_process_mad(struct ib_device *ibdev, int flags, u32 port_num,
		    const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		    const struct ib_mad *in, struct ib_mad *out,
		    size_t *out_size, u16 *out_pkey_index);
void sib_sma_init(struct sib_port *port);

/* softib_verbs.c */
extern const struct ib_device_ops sib_verbs_ops;
void sib_cq_add(struct sib_cq *cq, const struct ib_wc *wc, bool solicited);
int sib_rq_pop(struct sib_rq *rq, struct sib_rwqe *wqe);
int sib_srq_pop(struct sib_srq *srq, struct sib_rwqe *wqe);
u8 sib_qp_state(struct sib_qp *qp);
void sib_qp_to_error(struct sib_qp *qp, bool fatal);
void sib_flush_rq(struct sib_qp *qp);
void sib_qp_error_flush(struct sib_qp *qp, bool fatal);
int sib_recv_take(struct sib_qp *qp, struct sib_rwqe *wqe);
void sib_srq_forget(struct sib_srq *srq, struct sib_qp *qp);
struct sib_qp *sib_qp_lookup(struct sib_port *port, u32 qpn);
void sib_qp_put(struct sib_qp *qp);

/* softib_pkt.c */
struct sib_pkt *sib_pkt_alloc(u32 len);
void sib_pkt_free(struct sib_pkt *pkt);
struct sib_pkt *sib_pkt_clone(const struct sib_pkt *pkt);
void sib_pkt_gather(struct sib_pkt *pkt, const struct ib_sge *sge, int n);
u32 sib_pkt_scatter(const struct sib_pkt *pkt, const struct sib_rwqe *wqe,
		    u32 off);

/* softib_rc.c */
int sib_rc_send(struct sib_qp *qp, const struct ib_send_wr *wr);
void sib_rc_deliver(struct sib_port *port, struct sib_qp *qp,
		    struct sib_pkt *pkt);
void sib_rc_answer(struct sib_pkt *pkt, enum ib_wc_status status);
void sib_rc_retry(struct sib_port *port);
void sib_rc_kick(struct sib_qp *qp);
void sib_rc_srq_kick(struct sib_srq *srq);
void sib_rc_flush_held(struct sib_qp *qp);
void sib_flush_sq(struct sib_qp *qp);
void sib_sq_discard(struct sib_qp *qp);

/* softib_wire.c */
void sib_route(struct sib_port *from, struct sib_pkt *pkt);
int sib_gather(const struct ib_send_wr *wr, u32 max, struct sib_pkt **out);
u64 sib_rwqe_len(const struct sib_rwqe *wqe);
void sib_drop(struct sib_port *port, struct sib_pkt *pkt, enum sib_count why);
int sib_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad);
void sib_rx_work(struct work_struct *work);
void sib_rx_discard(struct sib_port *port);
void sib_complete_send(struct sib_qp *qp, u64 wr_id, enum ib_wc_status status,
		       u32 len);
int sib_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
int sib_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid);
void sib_mcast_detach_qp(struct sib_qp *qp);

#endif /* _SOFTIB_H */
