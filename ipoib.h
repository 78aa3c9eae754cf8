/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared types of ipoib_ng: the per-port interface, the per-device client
 * state and the link-layer (fabric) ops table, plus the entry points each
 * file offers the others.
 */
#ifndef IPNG_H
#define IPNG_H

#include <linux/if_ether.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rhashtable-types.h>
#include <linux/seq_file.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ipoib_stats.h"
#include "ipoib_wire.h"

#define IPNG_WC_BATCH	16	/* completions polled at once */

/* The link header the stack builds: destination address + IPoIB header. */
#define IPNG_HARD_LEN	(IPNG_ADDR_LEN + IPNG_HLEN)

#define DRV_NAME	"ipoib_ng"
#define DRV_VERSION	"0.1.0"

struct ipng_dev;
struct ipng_fs_dev;

/**
 * struct ipng_fabric_ops - what differs between InfiniBand and RoCE ports
 * @name: link layer name for logs and /proc ("infiniband", "ethernet")
 * @addr_gid_index: GID table index whose GID goes into the link address
 * @carried_by: whether @ndev is the network device under the port (RoCE);
 *	port changes made on it (its MTU) come without an IB event
 * @resolve_path: fill the address vector that reaches @dgid (unicast or
 *	multicast); may sleep
 * @mcast_join: make the UD QP receive group @mgid; may sleep; @cookie
 *	is handed back to @mcast_leave
 * @mcast_leave: undo @mcast_join
 * @repair_gids: called after the interface dropped its address handles
 *	following a port change; may sleep
 *
 * The rest of the driver never tests the link layer; it calls these.
 */
struct ipng_fabric_ops {
	const char *name;
	int (*addr_gid_index)(struct ipng_dev *ipd);
	bool (*carried_by)(struct ipng_dev *ipd, struct net_device *ndev);
	int (*resolve_path)(struct ipng_dev *ipd, const union ib_gid *dgid,
			    struct rdma_ah_attr *attr);
	int (*mcast_join)(struct ipng_dev *ipd, const union ib_gid *mgid,
			  int *cookie);
	void (*mcast_leave)(struct ipng_dev *ipd, const union ib_gid *mgid,
			    int cookie);
	void (*repair_gids)(struct ipng_dev *ipd);
};

/**
 * struct ipng_ah - a reference-counted address handle
 * @ref: one per path or group holding it and one per packet in flight
 * @ah: the verbs address handle
 * @free_work: destroys @ah in process context after the last put
 * @type: address type (InfiniBand or RoCE) the handle was created with
 * @dmac: RoCE: destination MAC given to the device (zero when the driver
 *	resolves it itself, as rxe does for RoCE v2)
 * @dlid: InfiniBand: destination LID
 * @sl: service level
 *
 * @type, @dmac, @dlid and @sl are a copy of the address vector for the
 * debugfs paths file; they never change after creation.
 */
struct ipng_ah {
	struct kref ref;
	struct ib_ah *ah;
	struct work_struct free_work;
	enum rdma_ah_attr_type type;
	u8 dmac[ETH_ALEN];
	u32 dlid;
	u8 sl;
};

/**
 * struct ipng_slot - one entry of a send or receive ring
 * @skb: the buffer posted (NULL when the slot is empty)
 * @dma: its DMA address
 * @len: mapped length
 * @ah: send only: address handle held while the packet is in flight
 */
struct ipng_slot {
	struct sk_buff *skb;
	u64 dma;
	u32 len;
	struct ipng_ah *ah;
};

/**
 * struct ipng_tx_ring - UD send ring
 * @slots: @size entries
 * @size: power of two
 * @head: next slot to post; written by the transmit path only
 * @tail: next slot to complete; written by NAPI only
 * @cqe: completion entry of every send
 */
struct ipng_tx_ring {
	struct ipng_slot *slots;
	u32 size;
	u32 head;
	u32 tail;
	struct ib_cqe cqe;
};

/**
 * struct ipng_rx_ring - UD receive ring; used by NAPI only once started
 * @slots: @size entries
 * @size: power of two
 * @head: receives posted so far
 * @tail: receives completed so far
 * @buf_len: bytes per buffer: GRH area + header + MTU
 * @cqe: completion entry of every receive
 */
struct ipng_rx_ring {
	struct ipng_slot *slots;
	u32 size;
	u32 head;
	u32 tail;
	u32 buf_len;
	struct ib_cqe cqe;
};

/**
 * enum ipng_flags - bits in &ipng_dev.flags
 * @IPNG_F_OPEN: ndo_open ran and ndo_stop has not; the QP is in RTS
 * @IPNG_F_DYING: the port is being removed; no new port work is queued
 */
enum ipng_flags {
	IPNG_F_OPEN,
	IPNG_F_DYING,
};

/**
 * struct ipng_dev - one IPoIB interface, bound to one port of an IB device
 * @ndev: the network device (its private area holds this struct)
 * @ca: the RDMA device
 * @port: port number on @ca (1-based)
 * @fabric: link-layer ops of the port
 * @pd: protection domain of all verbs objects of the interface
 * @send_cq: completion queue of the UD send queue
 * @recv_cq: completion queue of the UD receive queue
 * @qp: the UD queue pair whose number is in the link address
 * @pkey: P_Key of the interface, full-membership bit set
 * @pkey_index: index of @pkey in the port's P_Key table
 * @qkey: Q_Key the UD QP accepts
 * @scope: scope nibble of the multicast GIDs
 * @flags: IPNG_F_* bits
 * @port_work: refreshes carrier and link address after a port event
 * @repair_work: runs fabric repair_gids once released handles are gone
 * @notify_work: announces the interface's address after it comes up
 * @list: entry in &ipng_ca.ports
 * @napi: polls both CQs
 * @wcs: completion batch of @napi
 * @stats: per-CPU counters
 * @tx: send ring
 * @rx: receive ring
 * @paths: path cache, struct ipng_path keyed by destination GID
 * @paths_walk_lock: serializes walks that remove paths (aging, flush)
 * @path_gc: ages paths out
 * @mcast: multicast state (ipoib_multicast.c)
 * @fs: its /proc and debugfs entries (ipoib_fs.c; changed under RTNL)
 *
 * Verbs objects are created before the netdev is registered and destroyed
 * after it is unregistered, so they are valid whenever netdev ops run.
 * @pkey, @pkey_index, @qkey, @scope and the link address change only under
 * RTNL.
 */
struct ipng_dev {
	struct net_device *ndev;
	struct ib_device *ca;
	u32 port;
	const struct ipng_fabric_ops *fabric;

	struct ib_pd *pd;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ib_qp *qp;

	u16 pkey;
	u16 pkey_index;
	u32 qkey;
	u8 scope;

	unsigned long flags;
	struct work_struct port_work;
	struct work_struct repair_work;
	struct work_struct notify_work;
	struct list_head list;

	struct napi_struct napi;
	struct ib_wc wcs[IPNG_WC_BATCH];
	struct ipng_pcpu_stats __percpu *stats;
	struct ipng_tx_ring tx;
	struct ipng_rx_ring rx;

	struct rhashtable paths;
	struct mutex paths_walk_lock;	/* one remover of paths at a time */
	struct delayed_work path_gc;
	struct ipng_mcast *mcast;
	struct ipng_fs_dev *fs;
};

/**
 * struct ipng_ca - client data of one RDMA device
 * @ca: the device
 * @ports: interfaces created on its ports (&ipng_dev.list)
 * @event_handler: receives the device's asynchronous events
 * @list: entry in the module's list of devices (under ipng_cas_lock)
 *
 * @ports is filled before @event_handler is registered and before @list is
 * linked, and emptied after both are undone, so the event path and the
 * netdevice notifier read it without a lock of its own.
 */
struct ipng_ca {
	struct ib_device *ca;
	struct list_head ports;
	struct ib_event_handler event_handler;
	struct list_head list;
};

static inline struct ipng_dev *ipng_priv(const struct net_device *ndev)
{
	return netdev_priv(ndev);
}

extern struct workqueue_struct *ipng_wq;
extern struct workqueue_struct *ipng_ah_wq;
extern unsigned int ipng_send_queue_size;
extern unsigned int ipng_recv_queue_size;

/* ipoib_main.c; exported to ipoib_ng_test.ko when the kernel has KUnit */
bool ipng_ifname_template_valid(const char *tmpl);
bool ipng_ring_size_valid(unsigned int size);

/* ipoib_netdev.c */
struct ipng_dev *ipng_dev_create(struct ib_device *ca, u32 port,
				 const char *name_template);
void ipng_dev_destroy(struct ipng_dev *ipd);
void ipng_dev_refresh(struct ipng_dev *ipd);

/* ipoib_ud.c */
extern const struct header_ops ipng_header_ops;
void ipng_ud_send(struct ipng_dev *ipd, struct sk_buff *skb,
		  struct ipng_ah *ah, u32 qpn);
void ipng_ud_cq_event(struct ib_cq *cq, void *context);
int ipng_ud_init(struct ipng_dev *ipd, u32 send_size, u32 recv_size);
void ipng_ud_cleanup(struct ipng_dev *ipd);
int ipng_ud_start(struct ipng_dev *ipd);
void ipng_ud_stop(struct ipng_dev *ipd);

/* ipoib_arp.c */
int ipng_paths_init(struct ipng_dev *ipd);
void ipng_paths_cleanup(struct ipng_dev *ipd);
void ipng_paths_flush(struct ipng_dev *ipd);
void ipng_paths_start(struct ipng_dev *ipd);
void ipng_paths_stop(struct ipng_dev *ipd);
void ipng_path_xmit(struct ipng_dev *ipd, struct sk_buff *skb);
unsigned int ipng_paths_count(struct ipng_dev *ipd);
void ipng_paths_dump(struct ipng_dev *ipd, struct seq_file *m);
extern unsigned int ipng_path_timeout;

/* ipoib_multicast.c */
int ipng_mcast_init(struct ipng_dev *ipd);
void ipng_mcast_cleanup(struct ipng_dev *ipd);
void ipng_mcast_start(struct ipng_dev *ipd);
void ipng_mcast_stop(struct ipng_dev *ipd);
void ipng_mcast_rx_mode(struct ipng_dev *ipd);
unsigned int ipng_mcast_count(struct ipng_dev *ipd);

/* ipoib_ib.c */
struct ipng_ah *ipng_ah_create(struct ipng_dev *ipd,
			       struct rdma_ah_attr *attr);
void ipng_ah_put(struct ipng_ah *ah);
void ipng_ah_flush(void);

static inline struct ipng_ah *ipng_ah_get(struct ipng_ah *ah)
{
	kref_get(&ah->ref);
	return ah;
}

int ipng_ib_init(struct ipng_dev *ipd);
void ipng_ib_cleanup(struct ipng_dev *ipd);
int ipng_ib_open(struct ipng_dev *ipd);
void ipng_ib_stop(struct ipng_dev *ipd);
int ipng_ib_query_port(struct ipng_dev *ipd, struct ib_port_attr *attr);

/* ipoib_fabric.c */
const struct ipng_fabric_ops *ipng_fabric_for_port(struct ib_device *ca,
						   u32 port);

/* ipoib_netlink.c */
extern struct rtnl_link_ops ipng_link_ops;
int ipng_netlink_init(void);
void ipng_netlink_exit(void);

/* ipoib_ethtool.c */
extern const struct ethtool_ops ipng_ethtool_ops;

/* ipoib_fs.c */
int ipng_fs_init(void);
void ipng_fs_exit(void);

#endif /* IPNG_H */
