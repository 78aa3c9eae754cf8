/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared types of ipoib_ng: the per-port interface, the per-device client
 * state and the link-layer (fabric) ops table, plus the entry points each
 * file offers the others.
 */
#ifndef IPNG_H
#define IPNG_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

#include "ipoib_wire.h"

#define DRV_NAME	"ipoib_ng"
#define DRV_VERSION	"0.1.0"

struct ipng_dev;

/**
 * struct ipng_fabric_ops - what differs between InfiniBand and RoCE ports
 * @name: link layer name for logs and /proc ("infiniband", "ethernet")
 * @addr_gid_index: GID table index whose GID goes into the link address
 * @carried_by: whether @ndev is the network device under the port (RoCE);
 *	port changes made on it (its MTU) come without an IB event
 *
 * The rest of the driver never tests the link layer; it calls these.
 */
struct ipng_fabric_ops {
	const char *name;
	int (*addr_gid_index)(struct ipng_dev *ipd);
	bool (*carried_by)(struct ipng_dev *ipd, struct net_device *ndev);
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
 * @list: entry in &ipng_ca.ports
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
	struct list_head list;
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
extern unsigned int ipng_send_queue_size;
extern unsigned int ipng_recv_queue_size;

/* ipoib_main.c; exported to ipoib_ng_test.ko when the kernel has KUnit */
bool ipng_ifname_template_valid(const char *tmpl);
bool ipng_ring_size_valid(unsigned int size);

/* ipoib_netdev.c */
struct ipng_dev *ipng_dev_create(struct ib_device *ca, u32 port,
				 const char *name_template);
void ipng_dev_destroy(struct ipng_dev *ipd);
void ipng_dev_port_event(struct ipng_dev *ipd, enum ib_event_type event);

/* ipoib_ib.c */
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

#endif /* IPNG_H */
