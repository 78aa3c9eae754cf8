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
#include <rdma/ib_sa.h>
#include <rdma/ib_verbs.h>

#include "ipoib_cm_state.h"
#include "ipoib_moder.h"
#include "ipoib_stats.h"
#include "ipoib_wire.h"

#define IPNG_WC_BATCH	16	/* completions polled at once */
#define IPNG_REPAIR_TRIES	10	/* GID repairs after a port event */
#define IPNG_RING_MIN		64	/* ring entries, module params and -G */
#define IPNG_RING_MAX		8192
#define IPNG_MAX_CHANNELS	16	/* ethtool -L combined */

/* The link header the stack builds: destination address + IPoIB header. */
#define IPNG_HARD_LEN	(IPNG_ADDR_LEN + IPNG_HLEN)

#define DRV_NAME	"ipoib_ng"
#define DRV_VERSION	"0.1.0"

struct ipng_dev;
struct ipng_ca;
struct ipng_neigh;
struct ipng_fs_dev;
struct ipng_cm;

/**
 * enum ipng_mc_join - membership in a multicast group
 * @IPNG_MC_NONE: not a member
 * @IPNG_MC_SENDONLY: send-only member (InfiniBand: no receive)
 * @IPNG_MC_FULL: full member: receives the group's packets
 */
enum ipng_mc_join {
	IPNG_MC_NONE,
	IPNG_MC_SENDONLY,
	IPNG_MC_FULL,
};

/**
 * enum ipng_mc_state - state of one group in the join state machine
 * @IPNG_MC_IDLE: wanted but not (yet) joined, or about to be freed
 * @IPNG_MC_JOINING: a join is in flight
 * @IPNG_MC_JOINED: member as in &ipng_mcast_member.join
 * @IPNG_MC_BACKOFF: the last join failed; retried after a delay
 * @IPNG_MC_LEAVING: a leave is in flight
 */
enum ipng_mc_state {
	IPNG_MC_IDLE,
	IPNG_MC_JOINING,
	IPNG_MC_JOINED,
	IPNG_MC_BACKOFF,
	IPNG_MC_LEAVING,
};

/**
 * struct ipng_mcast_member - what the fabric sees of one group
 * @mgid: the group
 * @join: membership to ask for (join) or held (leave)
 * @broadcast: the interface's broadcast group (joined first)
 * @priv: fabric data from a successful join until the leave
 */
struct ipng_mcast_member {
	union ib_gid mgid;
	enum ipng_mc_join join;
	bool broadcast;
	void *priv;
};

/**
 * struct ipng_mcast_info - snapshot of one group (tests, dumps)
 * @state: state machine state
 * @join: membership held or being joined
 * @broadcast: the broadcast group
 * @backoff: current retry delay in jiffies, 0 after success
 * @error: result of the last join
 */
struct ipng_mcast_info {
	enum ipng_mc_state state;
	enum ipng_mc_join join;
	bool broadcast;
	unsigned long backoff;
	int error;
};

/**
 * struct ipng_mcast_ops - how the multicast state machine acts
 * @join: make @m a member as @m->join says; may sleep; 0 or an errno
 * @leave: undo a successful @join; may sleep
 * @ah_attr: address vector to send to a joined group (optional)
 * @kick: a pass of ipng_mcast_run() is needed; called under the state's
 *	lock, so it must only schedule one
 * @last_used: jiffies the datapath last sent to @mgid, 0 if never
 *	(optional): a send-only membership still in use does not expire,
 *	though packets going out on a resolved path ask for nothing
 */
struct ipng_mcast_ops {
	int (*join)(void *ctx, struct ipng_mcast_member *m);
	void (*leave)(void *ctx, struct ipng_mcast_member *m);
	int (*ah_attr)(void *ctx, struct ipng_mcast_member *m,
		       struct rdma_ah_attr *attr);
	void (*kick)(void *ctx);
	unsigned long (*last_used)(void *ctx, const union ib_gid *mgid);
};

/**
 * struct ipng_fabric_ops - what differs between InfiniBand and RoCE ports
 * @name: link layer name for logs and /proc ("infiniband", "ethernet")
 * @addr_gid_index: GID table index whose GID goes into the link address
 * @carried_by: whether @ndev is the network device under the port (RoCE);
 *	port changes made on it (its MTU) come without an IB event
 * @resolve_path: fill the address vector that reaches @dgid (unicast or
 *	multicast); may sleep; -EAGAIN: not yet, ask again shortly
 * @mcast_join: make the UD QP a member of @m->mgid as @m->join says; may
 *	sleep; fabric data for the leave goes into @m->priv
 * @mcast_leave: undo @mcast_join
 * @lower_gone: @ndev is unregistering or leaving its namespace, under
 *	RTNL: let go of anything held on it (NULL where nothing is)
 * @mcast_ah_attr: address vector of a joined group (NULL where sending
 *	needs no membership)
 * @repair_gids: called after the interface dropped its address handles
 *	following a port change; may sleep; -EAGAIN: try again later
 * @cm_path: fill the path record a connected-mode REQ to @dgid carries;
 *	may sleep; -EAGAIN: not yet, ask again shortly
 * @mcast_user_joined: true if another client of this port (user space
 *	through rdma_cm/ucma) joined @mgid through the SA; NULL where groups
 *	have no SA membership (RoCE). Used with umcast.
 * @cm_retry: transport and RNR retry counts of RC connections (a lossy
 *	Ethernet needs retries, InfiniBand IPoIB uses none)
 *
 * The rest of the driver never tests the link layer; it calls these.
 */
struct ipng_fabric_ops {
	const char *name;
	int (*addr_gid_index)(struct ipng_dev *ipd);
	bool (*carried_by)(struct ipng_dev *ipd, struct net_device *ndev);
	int (*resolve_path)(struct ipng_dev *ipd, const union ib_gid *dgid,
			    struct rdma_ah_attr *attr);
	int (*mcast_join)(struct ipng_dev *ipd, struct ipng_mcast_member *m);
	void (*mcast_leave)(struct ipng_dev *ipd, struct ipng_mcast_member *m);
	void (*lower_gone)(struct ipng_dev *ipd, struct net_device *ndev);
	int (*mcast_ah_attr)(struct ipng_dev *ipd, struct ipng_mcast_member *m,
			     struct rdma_ah_attr *attr);
	int (*repair_gids)(struct ipng_dev *ipd);
	int (*cm_path)(struct ipng_dev *ipd, const union ib_gid *dgid,
		       struct sa_path_rec *rec);
	bool (*mcast_user_joined)(struct ipng_dev *ipd,
				  const union ib_gid *mgid);
	u8 cm_retry;
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

/*
 * A UD ring names its slots in completions with one of two entries per
 * slot, chosen by the ring's start count: a completion that a device
 * delivers late, after the QP was reset and the ring started again from
 * slot 0 (rxe 6.1 completes UD sends on two CPUs at once while the QP
 * goes to ERROR), names an entry of the other start and is ignored
 * instead of freeing a packet the device is still reading.
 */
#define IPNG_SLOT_GENS	2

/**
 * struct ipng_slot - one entry of a send or receive ring
 * @skb: the buffer posted (NULL when the slot is empty)
 * @dma: its DMA address
 * @len: mapped length
 * @ah: send only: address handle held while the packet is in flight
 * @cqe: UD rings: completion entries naming this slot, one per start
 *	parity (see IPNG_SLOT_GENS)
 * @posted: UD rings: the buffer is posted to the QP and its completion
 *	not yet seen
 */
struct ipng_slot {
	struct sk_buff *skb;
	u64 dma;
	u32 len;
	struct ipng_ah *ah;
	struct ib_cqe cqe[IPNG_SLOT_GENS];
	bool posted;
};

/**
 * struct ipng_tx_ring - UD send ring
 * @slots: @size entries
 * @size: power of two
 * @head: next slot to post; written by the transmit path only
 * @tail: next slot to complete; written by NAPI only
 * @gen: starts of this ring; its parity picks the slots' cqe entry
 * @seen_tail: @tail at the stall detector's last look
 * @seen_at: jiffies when @tail was last seen moving (or the ring empty)
 */
struct ipng_tx_ring {
	struct ipng_slot *slots;
	u32 size;
	u32 head;
	u32 tail;
	u32 gen;
	u32 seen_tail;
	unsigned long seen_at;
};

/**
 * struct ipng_rx_ring - UD receive ring; used by NAPI only once started
 * @slots: @size entries; a completion finds its slot by its own cqe
 * @size: power of two
 * @posted: slots whose buffer is posted to the QP
 * @refill: where the search for unposted slots goes on
 * @buf_len: bytes per buffer: GRH area + header + MTU
 * @gen: starts of this ring; its parity picks the slots' cqe entry
 */
struct ipng_rx_ring {
	struct ipng_slot *slots;
	u32 size;
	u32 posted;
	u32 refill;
	u32 buf_len;
	u32 gen;
};

/**
 * struct ipng_chan_stats - counters of one channel
 * @syncp: makes 64-bit reads consistent on 32-bit hosts
 * @rx_packets: packets this channel passed up the stack
 * @rx_bytes: their bytes, IPoIB header excluded
 * @tx_packets: sends completed successfully on this channel's CQs
 * @tx_bytes: their bytes, IPoIB header excluded
 * @polls: NAPI polls
 *
 * Written only by the channel's NAPI context.
 */
struct ipng_chan_stats {
	struct u64_stats_sync syncp;
	u64_stats_t rx_packets;
	u64_stats_t rx_bytes;
	u64_stats_t tx_packets;
	u64_stats_t tx_bytes;
	u64_stats_t polls;
};

/**
 * struct ipng_chan_counters - a snapshot of channel counters
 * @rx_packets: see &struct ipng_chan_stats
 * @rx_bytes: see &struct ipng_chan_stats
 * @tx_packets: see &struct ipng_chan_stats
 * @tx_bytes: see &struct ipng_chan_stats
 * @polls: see &struct ipng_chan_stats
 * @events: completion events (CQ interrupts) of the channel's CQs
 * @holdoffs: software moderation hold-offs
 */
struct ipng_chan_counters {
	u64 rx_packets;
	u64 rx_bytes;
	u64 tx_packets;
	u64 tx_bytes;
	u64 polls;
	u64 events;
	u64 holdoffs;
};

/**
 * struct ipng_chan - one channel: a send queue, its CQs and a NAPI context
 * @ipd: the interface
 * @index: channel number, also its transmit queue
 * @cpu: the CPU whose softirq runs receives steered to this channel
 * @napi: polls the channel's CQs and its backlog
 * @qp: UD QP; channel 0's is the interface's QP (the one in the link
 *	address, which also receives), the others only send
 * @send_cq: completions of @qp's sends
 * @recv_cq: channel 0 only: completions of the UD receives
 * @tx: UD send ring
 * @rx: channel 0 only: UD receive ring
 * @backlog: received packets channel 0 steered to this channel
 * @csd: schedules @napi on @cpu
 * @kick_pending: @csd is in flight
 * @steered: NAPI of channel 0: channels given packets during this poll
 * @moder: interrupt moderation
 * @stats: counters written by @napi
 * @events: completion events of the channel's CQs (any context)
 * @rcu: frees the channel after counter readers are done with it
 * @wcs: completion batch of @napi
 *
 * Channels are created and destroyed under RTNL with the datapath
 * stopped; &ipng_dev.chans is RCU-protected for counter readers.
 */
struct ipng_chan {
	struct ipng_dev *ipd;
	unsigned int index;
	int cpu;
	struct napi_struct napi;
	struct ib_qp *qp;
	struct ib_cq *send_cq;
	struct ib_cq *recv_cq;
	struct ipng_tx_ring tx;
	struct ipng_rx_ring rx;
	struct sk_buff_head backlog;
	call_single_data_t csd;
	unsigned long kick_pending;
	unsigned long steered;
	struct ipng_moder moder;
	struct ipng_chan_stats stats;
	atomic64_t events;
	struct rcu_head rcu;
	struct ib_wc wcs[IPNG_WC_BATCH];
};

/**
 * enum ipng_flags - bits in &ipng_dev.flags
 * @IPNG_F_OPEN: ndo_open ran and ndo_stop has not; the QP is in RTS
 * @IPNG_F_DYING: the port is being removed; no new port work is queued
 * @IPNG_F_CONNECTED: connected mode: unicast to RC-capable peers goes over
 *	RC connections (changed under RTNL, read anywhere)
 * @IPNG_F_TX_STALL: fault injection (debugfs tx_stall): NAPI leaves send
 *	completions alone until the stall detector resets the channels
 * @IPNG_F_QUIESCED: the channels are being reset or rebuilt: completions
 *	must not wake the transmit queues
 * @IPNG_F_WATCHDOG: the netdev watchdog found a transmit queue stopped for
 *	too long: the stall detector resets the channels on its next run
 * @IPNG_F_RUNNING: the channels are started (NAPI enabled, QPs in RTS);
 *	set and cleared under RTNL only, so a failed restart leaves it clear
 *	and nothing halts the channels twice
 * @IPNG_F_RECOVER: a QP error was seen: the channel watchdog resets the
 *	channels on its next run (set from any context)
 * @IPNG_F_NO_PKEY: the last start found the interface's P_Key missing from
 *	the port's table: the channels stay halted and carrier off until a
 *	port event finds it there (the channel watchdog does not retry);
 *	under RTNL
 */
enum ipng_flags {
	IPNG_F_OPEN,
	IPNG_F_DYING,
	IPNG_F_CONNECTED,
	IPNG_F_TX_STALL,
	IPNG_F_QUIESCED,
	IPNG_F_WATCHDOG,
	IPNG_F_RUNNING,
	IPNG_F_RECOVER,
	IPNG_F_NO_PKEY,
};

/**
 * struct ipng_tx_budget - sends in flight on a completion queue that every
 *	transmit queue feeds (the RC connections' send CQ)
 * @inflight: posted and not yet completed
 * @size: at most this many; 0 while nothing uses it (no connected mode)
 *
 * Taken and put without a lock (ipoib_tx.c); @size changes only while no
 * send is in flight.
 */
struct ipng_tx_budget {
	atomic_t inflight;
	u32 size;
};

/**
 * struct ipng_dev - one IPoIB interface, bound to one port of an IB device
 * @ndev: the network device (its private area holds this struct)
 * @ca: the RDMA device
 * @port: port number on @ca (1-based)
 * @fabric: link-layer ops of the port
 * @pd: protection domain of all verbs objects of the interface
 * @qp: the UD queue pair whose number is in the link address (channel
 *	0's; it never changes while the interface exists)
 * @pkey: P_Key of the interface, full-membership bit set
 * @pkey_index: index of @pkey in the port's P_Key table
 * @qkey: Q_Key the UD QP accepts
 * @scope: scope nibble of the multicast GIDs
 * @flags: IPNG_F_* bits
 * @port_work: refreshes carrier and link address after a port event
 * @repair_work: runs fabric repair_gids once released handles are gone
 * @repair_tries: repair attempts since the last port event
 * @notify_work: announces the interface's address after it comes up
 * @list: entry in &ipng_ca.ports
 * @parent: a child's port interface; NULL for a port interface
 * @ic: the device's client data, whose @ports lists this interface
 * @sysfs_child: made through create_child (its P_Key unique among those,
 *	removed by delete_child)
 * @umcast: user multicast (IFLA_IPOIB_UMCAST, sysfs umcast): groups of
 *	the multicast list that user space joined through the SA are left
 *	to it (ipng_mcast_work()); written by ipng_set_umcast()
 * @chans: channels 0 .. @max_chans - 1 (NULL where not in use)
 * @nchans: channels in use (ethtool -L combined)
 * @max_chans: channels the device's completion vectors and CPUs allow
 * @tx_ring_size: UD send ring entries per channel (ethtool -G tx)
 * @rx_ring_size: UD receive ring entries (ethtool -G rx)
 * @tx_ring_max: send queue capacity of the UD QPs
 * @rx_ring_max: receive queue capacity of the UD QP
 * @coal: moderation settings of every channel (ethtool -C)
 * @chan_seq: readers of @chans and @retired retry across a change
 * @retired: counters of channels removed by ethtool -L
 * @stall_work: the channel watchdog: stuck send queues, QP errors and
 *	failed restarts, every second while open (ipoib_chan.c)
 * @fail_starts: fault knob (test builds): channel starts left to fail
 * @stats: per-CPU counters
 * @paths: path cache, struct ipng_path keyed by destination GID
 * @neighs: neighbour table, struct ipng_neigh keyed by QPN + GID
 * @path_gen: bumped by every flush; older neighbour entries are stale
 * @paths_walk_lock: serializes walks that remove paths or neighbours
 * @path_gc: ages paths out
 * @mcast: multicast state (ipoib_multicast.c)
 * @mcast_work: runs passes of the multicast state machine
 * @port_mtu: active IB MTU of the port (enum ib_mtu), read with the port
 * @speed: port speed in Mb/s (width x lane speed), 0 if unknown; read
 *	with the port, for ethtool (which runs under RTNL, where RoCE ports
 *	cannot be queried)
 * @bcast_mtu: datagram MTU allowed by the broadcast group, 0 if unknown
 * @bcast_rec: InfiniBand: the broadcast group's MCMemberRecord; other
 *	groups are created with its parameters
 * @ud_mtu: datagram-mode MTU limit: port MTU capped by the broadcast
 *	group (changed under RTNL, read anywhere)
 * @cm: connected-mode state (ipoib_cm.c), NULL where the device has no
 *	RC support
 * @cm_send_cq: completion queue of the RC connections' sends
 * @rc_budget: in-flight budget of @cm_send_cq, shared by every transmit
 *	queue (ipoib_tx.c)
 * @cm_recv_cq: completion queue of RC receives (SRQ or per connection)
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
	struct ib_qp *qp;

	u16 pkey;
	u16 pkey_index;
	u32 qkey;
	u8 scope;

	unsigned long flags;
	struct work_struct port_work;
	struct delayed_work repair_work;
	int repair_tries;
	struct work_struct notify_work;
	struct list_head list;
	struct ipng_dev *parent;
	struct ipng_ca *ic;
	bool sysfs_child;
	bool umcast;

	struct ipng_chan __rcu *chans[IPNG_MAX_CHANNELS];
	unsigned int nchans;
	unsigned int max_chans;
	u32 tx_ring_size;
	u32 rx_ring_size;
	u32 tx_ring_max;
	u32 rx_ring_max;
	struct ipng_coal coal;
	seqcount_t chan_seq;
	struct ipng_chan_counters retired;
	struct delayed_work stall_work;
	atomic_t fail_starts;
	struct ipng_pcpu_stats __percpu *stats;

	struct rhashtable paths;
	struct rhashtable neighs;
	atomic_t path_gen;
	struct mutex paths_walk_lock;	/* one walker removing at a time */
	struct delayed_work path_gc;
	struct ipng_mcast *mcast;
	struct delayed_work mcast_work;

	enum ib_mtu port_mtu;
	u32 speed;
	int bcast_mtu;
	struct ib_sa_mcmember_rec bcast_rec;
	int ud_mtu;
	struct ipng_cm *cm;
	struct ib_cq *cm_send_cq;
	struct ib_cq *cm_recv_cq;
	struct ipng_tx_budget rc_budget;
	struct ipng_fs_dev *fs;
};

/**
 * struct ipng_ca - client data of one RDMA device
 * @ca: the device
 * @lock: guards @ports
 * @ports: every interface on the device's ports (&ipng_dev.list): the
 *	port interfaces, each followed by none or more children later
 * @event_handler: receives the device's asynchronous events
 * @list: entry in the module's list of devices (under ipng_cas_lock)
 *
 * The port interfaces are linked before @event_handler is registered and
 * before @list is linked, and unlinked after both are undone; children
 * come and go at any time in between (under RTNL, and @lock). @lock is
 * the innermost lock: held, nothing is registered, unregistered or
 * waited for.
 */
struct ipng_ca {
	struct ib_device *ca;
	struct mutex lock;	/* guards ports */
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
extern struct workqueue_struct *ipng_mc_wq;
extern struct ib_sa_client ipng_sa_client;
extern unsigned int ipng_send_queue_size;
extern unsigned int ipng_recv_queue_size;

/* ipoib_main.c; exported to ipoib_ng_test.ko when the kernel has KUnit */
bool ipng_ifname_template_valid(const char *tmpl);
bool ipng_ring_size_valid(unsigned int size);

/* ipoib_child.c */
int ipng_child_pkey(unsigned long val, u16 *pkey);
int ipng_child_pkey_parse(const char *buf, u16 *pkey);
void ipng_child_name(char *name, const char *parent, u16 pkey);
int ipng_child_add(struct ipng_dev *parent, struct net_device *ndev,
		   u16 pkey, bool sysfs_child, struct netlink_ext_ack *extack);
void ipng_child_uninit(struct ipng_dev *ipd);
void ipng_children_remove(struct ipng_ca *ic);
int ipng_children_net_init(void);
void ipng_children_net_exit(void);
extern const struct attribute_group ipng_sysfs_group;

/* ipoib_netdev.c */
void ipng_setup(struct net_device *ndev);
int ipng_dev_init(struct net_device *ndev, struct ipng_ca *ic, u32 port,
		  const struct ipng_fabric_ops *fabric,
		  struct ipng_dev *parent, u16 pkey);
void ipng_dev_uninit(struct ipng_dev *ipd);
struct ipng_dev *ipng_dev_create(struct ipng_ca *ic, u32 port,
				 const char *name_template);
void ipng_dev_destroy(struct ipng_dev *ipd);
void ipng_dev_refresh(struct ipng_dev *ipd);
void ipng_dev_set_bcast_mtu(struct ipng_dev *ipd, int mtu);
void ipng_stats_read(struct ipng_dev *ipd, u64 c[IPNG_STAT_MAX]);

/* ipoib_tx.c: the transmit layer under UD and RC sends */
struct sk_buff *ipng_take_slot(struct ipng_dev *ipd, struct ipng_slot *slot,
			       enum dma_data_direction dir);
int ipng_tx_map(struct ipng_dev *ipd, struct sk_buff *skb,
		struct ipng_slot *slot, struct ib_sge *sge);
struct ipng_chan *ipng_tx_chan(struct ipng_dev *ipd, struct sk_buff *skb);
void ipng_tx_maybe_stop(struct ipng_chan *c);
void ipng_tx_wake(struct ipng_chan *c);
void ipng_tx_wake_all(struct ipng_dev *ipd);
void ipng_tx_budget_init(struct ipng_tx_budget *b, u32 size);
bool ipng_tx_budget_room(const struct ipng_tx_budget *b);
bool ipng_tx_budget_take(struct ipng_tx_budget *b);
void ipng_tx_budget_put(struct ipng_tx_budget *b);
u32 ipng_tx_depth(struct ipng_chan *c);
void ipng_too_big(struct ipng_dev *ipd, struct sk_buff *skb,
		  unsigned int mtu);
struct ib_cqe *ipng_slot_cqe(struct ipng_slot *slot, u32 gen);
struct ipng_slot *ipng_slot_of(struct ipng_slot *slots, u32 size, u32 gen,
			       struct ib_cqe *cqe);
struct ipng_slot *ipng_tx_slot(struct ipng_chan *c);
struct ib_cqe *ipng_tx_claim(struct ipng_chan *c, struct ipng_slot *slot);
void ipng_tx_unclaim(struct ipng_chan *c, struct ipng_slot *slot);
u32 ipng_tx_retire(struct ipng_tx_ring *tx, struct ib_cqe *cqe);
struct ipng_slot *ipng_ring_alloc(u32 size);
void ipng_tx_ring_set(struct ipng_chan *c, struct ipng_slot *slots, u32 size);
void ipng_tx_ring_reset(struct ipng_chan *c);
void ipng_ring_drain(struct ipng_dev *ipd, struct ipng_slot *slots, u32 size,
		     enum dma_data_direction dir);

/* ipoib_ud.c; the ring lookups are exported to KUnit */
extern const struct header_ops ipng_header_ops;
void ipng_ud_send(struct ipng_dev *ipd, struct sk_buff *skb,
		  struct ipng_ah *ah, u32 qpn);
struct ipng_slot *ipng_rx_slot(struct ipng_rx_ring *rx, struct ib_cqe *cqe);
struct ipng_slot *ipng_rx_refill_next(struct ipng_rx_ring *rx);
int ipng_ud_refill(struct ipng_chan *c, int max, gfp_t gfp);
void ipng_rx_ring_set(struct ipng_chan *c, struct ipng_slot *slots, u32 size);
u32 ipng_rx_buf_len(struct ipng_dev *ipd);
int ipng_ud_rings_alloc(struct ipng_chan *c, u32 send_size, u32 recv_size);
void ipng_ud_rings_free(struct ipng_chan *c);
int ipng_ud_fill(struct ipng_chan *c);
void ipng_ud_drain(struct ipng_chan *c);

/* ipoib_chan.c: channels, their NAPI contexts and receive steering */
extern unsigned int ipng_num_channels;
int ipng_chans_init(struct ipng_dev *ipd);
void ipng_chans_cleanup(struct ipng_dev *ipd);
int ipng_chans_open(struct ipng_dev *ipd);
void ipng_chans_stop(struct ipng_dev *ipd);
struct ipng_chan *ipng_chan_create(struct ipng_dev *ipd, unsigned int index,
				   u32 tx_size, u32 rx_size);
void ipng_chan_destroy(struct ipng_chan *c);
void ipng_chan_read(struct ipng_chan *c, struct ipng_chan_counters *r);
void ipng_counters_add(struct ipng_chan_counters *sum,
		       const struct ipng_chan_counters *r);
int ipng_chans_restart(struct ipng_dev *ipd,
		       void (*change)(struct ipng_dev *ipd, void *arg),
		       void *arg);

/* ipoib_chan_change.c: ethtool -L, -G and -C on a live interface */
int ipng_chans_set(struct ipng_dev *ipd, unsigned int n, u32 tx_size,
		   u32 rx_size, struct netlink_ext_ack *extack);
void ipng_chans_set_coal(struct ipng_dev *ipd, const struct ipng_coal *c);
int ipng_chans_recover(struct ipng_dev *ipd);
void ipng_chans_error(struct ipng_dev *ipd, struct ipng_chan *c,
		      const char *why);
int ipng_chans_mtu_changed(struct ipng_dev *ipd);
bool ipng_pkey_must_restart(bool running, bool waiting, bool found,
			    bool moved);
void ipng_chans_follow_pkey(struct ipng_dev *ipd);
void ipng_dev_cq_event(struct ib_cq *cq, void *context);
void ipng_chan_rx(struct ipng_chan *c, struct sk_buff *skb, int target);
void ipng_ud_send_done(struct ib_cq *cq, struct ib_wc *wc);
void ipng_ud_recv_done(struct ib_cq *cq, struct ib_wc *wc);
int ipng_poll_cq(struct ipng_chan *c, struct ib_cq *cq, int budget,
		 void (*done)(struct ib_cq *cq, struct ib_wc *wc));
typedef int (*ipng_rx_poll_fn)(void *ctx, void *queue, int budget);
int ipng_rx_poll_shared(int budget, ipng_rx_poll_fn poll, void *ctx,
			void *ud, void *cm);
bool ipng_own_qpn(struct ipng_dev *ipd, u32 qpn);
void ipng_chans_read(struct ipng_dev *ipd,
		     struct ipng_chan_counters per[IPNG_MAX_CHANNELS],
		     struct ipng_chan_counters *total);
u32 ipng_chans_tx_depth(struct ipng_dev *ipd);

/**
 * ipng_chan0() - channel 0, which exists as long as the interface
 * @ipd: interface
 *
 * Return: channel 0; its QP is @ipd->qp.
 */
static inline struct ipng_chan *ipng_chan0(struct ipng_dev *ipd)
{
	return rcu_dereference_protected(ipd->chans[0], true);
}

/**
 * ipng_chan() - channel @i of an interface
 * @ipd: interface
 * @i: channel number
 *
 * Channels change only under RTNL with the datapath stopped, so NAPI,
 * transmit and RTNL holders may use them as long as they run.
 *
 * Return: the channel, NULL past the channels in use.
 */
static inline struct ipng_chan *ipng_chan(struct ipng_dev *ipd,
					  unsigned int i)
{
	return rcu_dereference_check(ipd->chans[i], rcu_read_lock_bh_held() ||
				     lockdep_rtnl_is_held());
}

static inline void ipng_chan_stat_add(struct ipng_chan *c, u64_stats_t *cnt,
				      u64 val)
{
	u64_stats_update_begin(&c->stats.syncp);
	u64_stats_add(cnt, val);
	u64_stats_update_end(&c->stats.syncp);
}

/* ipoib_arp.c; the pure decisions are exported to KUnit */
#define IPNG_PATH_QUEUE_LEN	8	/* packets waiting for resolution */
#define IPNG_PATH_RETRY		HZ	/* a failed path is retried after */
#define IPNG_PATH_TIMEOUT_MAX	86400	/* path_timeout upper bound, s */

/**
 * enum ipng_path_state - life of a path
 * @IPNG_PATH_RESOLVING: resolution queued or running; packets wait
 * @IPNG_PATH_VALID: the address handle is set and never changes again
 * @IPNG_PATH_FAILED: resolution failed; packets are dropped until a retry
 * @IPNG_PATH_DEAD: being removed: no packet is queued on it and its
 *	resolution is never started again
 */
enum ipng_path_state {
	IPNG_PATH_RESOLVING,
	IPNG_PATH_VALID,
	IPNG_PATH_FAILED,
	IPNG_PATH_DEAD,
};

/**
 * enum ipng_path_act - what happens to a packet on the slow path
 * @IPNG_PATH_ACT_SEND: the path is valid: send with its handle
 * @IPNG_PATH_ACT_QUEUE: wait for the resolution under way
 * @IPNG_PATH_ACT_RETRY: resolve a failed path again, and wait for it
 * @IPNG_PATH_ACT_DROP: failed recently: drop, counted as the path says
 * @IPNG_PATH_ACT_DROP_FULL: resolve queue full: tx_drop_resolve_queue_full
 * @IPNG_PATH_ACT_DROP_DEAD: path being removed: tx_drop_no_path
 */
enum ipng_path_act {
	IPNG_PATH_ACT_SEND,
	IPNG_PATH_ACT_QUEUE,
	IPNG_PATH_ACT_RETRY,
	IPNG_PATH_ACT_DROP,
	IPNG_PATH_ACT_DROP_FULL,
	IPNG_PATH_ACT_DROP_DEAD,
};

bool ipng_path_timeout_valid(unsigned int secs);
unsigned long ipng_path_timeout_jiffies(void);
enum ipng_path_act ipng_path_decide(enum ipng_path_state state,
				    unsigned int qlen, unsigned long failed_at,
				    unsigned long now);
unsigned long ipng_path_last_used(struct ipng_dev *ipd,
				  const union ib_gid *dgid);
int ipng_paths_init(struct ipng_dev *ipd);
void ipng_paths_cleanup(struct ipng_dev *ipd);
void ipng_paths_flush(struct ipng_dev *ipd);
void ipng_paths_start(struct ipng_dev *ipd);
void ipng_paths_age(struct ipng_dev *ipd, unsigned long now);
void ipng_paths_stop(struct ipng_dev *ipd);
void ipng_path_xmit(struct ipng_dev *ipd, struct sk_buff *skb,
		    struct ipng_neigh *n);
void ipng_path_touch(struct ipng_dev *ipd, const union ib_gid *dgid,
		     unsigned long used);
unsigned int ipng_paths_count(struct ipng_dev *ipd);
unsigned int ipng_paths_backlog(struct ipng_dev *ipd);
void ipng_paths_dump(struct ipng_dev *ipd, struct seq_file *m);
extern unsigned int ipng_path_timeout;

/* ipoib_neigh.c */
int ipng_neighs_init(struct ipng_dev *ipd);
void ipng_neighs_cleanup(struct ipng_dev *ipd);
void ipng_neighs_flush(struct ipng_dev *ipd);
void ipng_neighs_age(struct ipng_dev *ipd, unsigned long now);
void ipng_neigh_xmit(struct ipng_dev *ipd, struct sk_buff *skb);
void ipng_neigh_set_ah(struct ipng_neigh *n, struct ipng_ah *ah);
void ipng_send_resolved(struct ipng_dev *ipd, struct sk_buff *skb,
			struct ipng_ah *ah);
unsigned int ipng_neighs_count(struct ipng_dev *ipd);
void ipng_neighs_dump(struct ipng_dev *ipd, struct seq_file *m);

/* ipoib_multicast.c: the state machine (exported to KUnit) ... */
struct ipng_mcast *ipng_mcast_alloc(const struct ipng_mcast_ops *ops,
				    void *ctx);
void ipng_mcast_free(struct ipng_mcast *mc);
void ipng_mcast_set_running(struct ipng_mcast *mc, bool running);
int ipng_mcast_set_wanted(struct ipng_mcast *mc, const union ib_gid *mgids,
			  int n);
int ipng_mcast_sendonly(struct ipng_mcast *mc, const union ib_gid *mgid,
			struct rdma_ah_attr *attr);
void ipng_mcast_rejoin(struct ipng_mcast *mc);
int ipng_mcast_forget(struct ipng_mcast *mc, const void *priv);
unsigned long ipng_mcast_run(struct ipng_mcast *mc, unsigned long now);
int ipng_mcast_group_info(struct ipng_mcast *mc, const union ib_gid *mgid,
			  struct ipng_mcast_info *info);
void ipng_mcast_set_sendonly_timeout(struct ipng_mcast *mc,
				     unsigned long timeout);
/* ... and the interface's side */
int ipng_mcast_init(struct ipng_dev *ipd);
void ipng_mcast_cleanup(struct ipng_dev *ipd);
void ipng_mcast_start(struct ipng_dev *ipd);
void ipng_mcast_stop(struct ipng_dev *ipd);
int ipng_mcast_leave_to_user(struct ipng_mcast *mc, union ib_gid *gids, int n,
			     bool (*user_joined)(void *ctx,
						 const union ib_gid *mgid),
			     void *ctx);
void ipng_set_umcast(struct ipng_dev *ipd, bool on);
void ipng_mcast_rx_mode(struct ipng_dev *ipd);
void ipng_mcast_dump(struct ipng_dev *ipd, struct seq_file *m);
unsigned int ipng_mcast_count(struct ipng_dev *ipd);
unsigned long ipng_mcast_rejoins(struct ipng_mcast *mc);

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
int ipng_ib_find_pkey(struct ipng_dev *ipd, u16 *index);
void ipng_ib_stop(struct ipng_dev *ipd);
int ipng_ib_qp_to_rts(struct ipng_dev *ipd, struct ib_qp *qp);
void ipng_ib_qp_error(struct ipng_dev *ipd, struct ib_qp *qp);
void ipng_ib_qp_reset(struct ipng_dev *ipd, struct ib_qp *qp);
int ipng_ib_query_port(struct ipng_dev *ipd, struct ib_port_attr *attr);
int ipng_ib_set_qkey(struct ipng_dev *ipd, u32 qkey);

/**
 * struct ipng_sa_join_query - what an MCMemberRecord join asks for
 * @mgid: the group
 * @port_gid: our port GID
 * @join: full or send-only membership
 * @tmpl: group parameters to create the group with, or NULL to join only
 *	an existing group
 */
struct ipng_sa_join_query {
	union ib_gid mgid;
	union ib_gid port_gid;
	enum ipng_mc_join join;
	const struct ib_sa_mcmember_rec *tmpl;
};

/* ipoib_sa.c; the record builders are exported to KUnit */
extern const struct ipng_fabric_ops ipng_fabric_ib;
ib_sa_comp_mask ipng_sa_path_query(struct sa_path_rec *rec,
				   const union ib_gid *sgid,
				   const union ib_gid *dgid, u16 pkey);
int ipng_sa_path_to_ah(const struct sa_path_rec *rec, u32 port,
		       u8 sgid_index, struct rdma_ah_attr *attr);
ib_sa_comp_mask ipng_sa_join_query(struct ib_sa_mcmember_rec *rec,
				   const struct ipng_sa_join_query *q);
void ipng_sa_bcast_defaults(struct ib_sa_mcmember_rec *tmpl, u16 pkey,
			    enum ib_mtu mtu);

/* ipoib_fabric.c */
const struct ipng_fabric_ops *ipng_fabric_for_port(struct ib_device *ca,
						   u32 port);

/* ipoib_cm.c: connected mode */
int ipng_cm_init(struct ipng_dev *ipd);
void ipng_cm_cleanup(struct ipng_dev *ipd);
int ipng_cm_open(struct ipng_dev *ipd);
void ipng_cm_stop(struct ipng_dev *ipd);
bool ipng_cm_xmit(struct ipng_dev *ipd, struct sk_buff *skb, u32 qpn,
		  const union ib_gid *dgid);
void ipng_cm_flush_tx(struct ipng_dev *ipd);
int ipng_cm_max_mtu(struct ipng_dev *ipd);
unsigned int ipng_cm_count(struct ipng_dev *ipd);
unsigned int ipng_cm_backlog(struct ipng_dev *ipd);
void ipng_cm_dump(struct ipng_dev *ipd, struct seq_file *m);

/* ipoib_mode.c: datagram/connected mode and the MTU rules; the pure
 * functions are exported to KUnit
 */
int ipng_mtu_limit(bool connected, int ud_mtu, int cm_mtu);
int ipng_mtu_after_ud_change(bool connected, int mtu, int old_ud, int new_ud,
			     int cm_mtu);
int ipng_mode_parse(const char *buf, bool *connected);
int ipng_set_mode(struct ipng_dev *ipd, bool connected,
		  struct netlink_ext_ack *extack);
int ipng_change_mtu(struct net_device *ndev, int new_mtu);
extern struct device_attribute ipng_attr_mode;

static inline bool ipng_connected(const struct ipng_dev *ipd)
{
	return test_bit(IPNG_F_CONNECTED, &ipd->flags);
}

/* ipoib_netlink.c */
extern struct rtnl_link_ops ipng_link_ops;
int ipng_netlink_init(void);
void ipng_netlink_exit(void);

/* ipoib_ethtool.c; the pure functions are exported to KUnit */
extern const struct ethtool_ops ipng_ethtool_ops;
u32 ipng_port_speed(u8 speed, u8 width);
int ipng_ring_size_round(u32 req, u32 max, u32 *size);

/* ipoib_trace.c */
void ipng_drop(struct ipng_dev *ipd, enum ipng_stat why, unsigned int n);

/* ipoib_fs.c */
int ipng_fs_init(void);
void ipng_fs_exit(void);

#endif /* IPNG_H */
