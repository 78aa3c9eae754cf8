// SPDX-License-Identifier: GPL-2.0
/*
 * softib: the module, its devices and the cable between their ports.
 *
 * Owns module load and unload, device creation and registration, the
 * device and port queries ib_core asks (query_device, query_port,
 * query_gid, query_pkey, get_port_immutable, modify_port), the P_Key
 * table lookups of the datapath, the IB events the SMA's changes raise,
 * and the cable: devices 2k and 2k+1 have their ports joined back to
 * back, as two HCAs with a cable between them and no switch.
 */
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/utsname.h>
#include "softib.h"

static unsigned int pairs = 1;
module_param(pairs, uint, 0444);
MODULE_PARM_DESC(pairs, "pairs of HCAs, each pair joined by a cable (1-8, default 1)");

static struct sib_dev *sib_devs[16];
static unsigned int sib_ndevs;

/* NodeDescription is 64 bytes: the host name cut to leave room for ours. */
static const char sib_node_desc_fmt[] = "%.48s softib%d";

static int sib_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
			    struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ibdev);

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = 1;
	a->sys_image_guid = cpu_to_be64(sdev->node_guid);
	a->max_mr_size = ~0ULL;
	a->page_size_cap = PAGE_SIZE;
	a->vendor_id = SIB_VENDOR_ID;
	a->vendor_part_id = 1;
	a->hw_ver = 1;
	a->max_qp = SIB_MAX_QP;
	a->max_qp_wr = SIB_MAX_WR;
	a->device_cap_flags = IB_DEVICE_RC_RNR_NAK_GEN |
			      IB_DEVICE_SYS_IMAGE_GUID |
			      IB_DEVICE_PORT_ACTIVE_EVENT |
			      IB_DEVICE_SRQ_RESIZE |
			      IB_DEVICE_BAD_PKEY_CNTR |
			      IB_DEVICE_BAD_QKEY_CNTR;
	a->kernel_cap_flags = IBK_BLOCK_MULTICAST_LOOPBACK;
	a->max_send_sge = SIB_MAX_SGE;
	a->max_recv_sge = SIB_MAX_SGE;
	a->max_sge_rd = SIB_MAX_SGE;
	a->max_cq = SIB_MAX_QP * 2;
	a->max_cqe = SIB_MAX_CQE - 1;
	a->max_mr = SIB_MAX_QP;
	a->max_pd = SIB_MAX_QP;
	a->max_qp_rd_atom = 0;
	a->max_res_rd_atom = 0;
	a->max_qp_init_rd_atom = 0;
	a->atomic_cap = IB_ATOMIC_NONE;
	a->max_mcast_grp = SIB_MAX_MCAST;
	a->max_mcast_qp_attach = SIB_MAX_MCAST_QP;
	a->max_total_mcast_qp_attach = SIB_MAX_MCAST * SIB_MAX_MCAST_QP;
	a->max_ah = SIB_MAX_QP * 16;
	a->max_srq = SIB_MAX_SRQ;
	a->max_srq_wr = SIB_MAX_WR;
	a->max_srq_sge = SIB_MAX_SGE;
	a->max_pkeys = SIB_PKEYS;
	a->local_ca_ack_delay = 15;
	return 0;
}

static int sib_query_port(struct ib_device *ibdev, u32 port_num,
			  struct ib_port_attr *pa)
{
	struct sib_port *port = &to_sdev(ibdev)->port;
	struct sib_port_attrs *a = &port->a;

	unsigned long irqf;

	/* ib_core zeroes *pa before it asks */
	spin_lock_irqsave(&port->lock, irqf);
	pa->state = a->state;
	pa->phys_state = a->phys_state;
	pa->max_mtu = IB_MTU_4096;
	pa->active_mtu = a->neighbor_mtu;
	pa->gid_tbl_len = 1;
	pa->port_cap_flags = a->cap_mask;
	pa->max_msg_sz = SIB_MAX_MSG;
	pa->bad_pkey_cntr = a->pkey_violations;
	pa->qkey_viol_cntr = a->qkey_violations;
	pa->pkey_tbl_len = SIB_PKEYS;
	pa->lid = a->lid;
	pa->sm_lid = a->sm_lid;
	pa->lmc = a->lmc;
	pa->max_vl_num = 1;
	pa->sm_sl = a->sm_sl;
	pa->subnet_timeout = a->subnet_timeout;
	pa->init_type_reply = a->init_type_reply;
	pa->active_width = IB_WIDTH_4X;
	pa->active_speed = IB_SPEED_QDR;
	spin_unlock_irqrestore(&port->lock, irqf);
	return 0;
}

static int sib_query_gid(struct ib_device *ibdev, u32 port_num, int index,
			 union ib_gid *gid)
{
	struct sib_dev *sdev = to_sdev(ibdev);
	unsigned long irqf;

	if (index)
		return -EINVAL;
	spin_lock_irqsave(&sdev->port.lock, irqf);
	gid->global.subnet_prefix = cpu_to_be64(sdev->port.a.gid_prefix);
	spin_unlock_irqrestore(&sdev->port.lock, irqf);
	gid->global.interface_id = cpu_to_be64(sib_port_guid(sdev));
	return 0;
}

static int sib_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			  u16 *pkey)
{
	if (index >= SIB_PKEYS)
		return -EINVAL;
	*pkey = sib_pkey_at(&to_sdev(ibdev)->port, index);
	return 0;
}

static int sib_modify_port(struct ib_device *ibdev, u32 port_num, int mask,
			   struct ib_port_modify *pm)
{
	struct sib_port *port = &to_sdev(ibdev)->port;
	unsigned long irqf;

	spin_lock_irqsave(&port->lock, irqf);
	port->a.cap_mask |= pm->set_port_cap_mask;
	port->a.cap_mask &= ~pm->clr_port_cap_mask;
	if (mask & IB_PORT_RESET_QKEY_CNTR)
		port->a.qkey_violations = 0;
	spin_unlock_irqrestore(&port->lock, irqf);
	return 0;
}

static int sib_port_immutable(struct ib_device *ibdev, u32 port_num,
			      struct ib_port_immutable *im)
{
	im->pkey_tbl_len = SIB_PKEYS;
	im->gid_tbl_len = 1;
	im->core_cap_flags = RDMA_CORE_PORT_IBA_IB;
	im->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sib_link_layer(struct ib_device *ibdev, u32 port)
{
	return IB_LINK_LAYER_INFINIBAND;
}

/**
 * sib_pkey_at() - the P_Key at a table index
 * @port: the port
 * @index: the index (below SIB_PKEYS)
 *
 * Return: the P_Key, 0 for an empty entry.
 */
u16 sib_pkey_at(struct sib_port *port, u16 index)
{
	unsigned long irqf;
	u16 pkey;

	spin_lock_irqsave(&port->lock, irqf);
	pkey = port->a.pkeys[index];
	spin_unlock_irqrestore(&port->lock, irqf);
	return pkey;
}

/**
 * sib_pkey_match() - whether two P_Keys let their holders talk
 * @a: one P_Key
 * @b: the other
 *
 * They match when their low 15 bits are equal, not zero, and at least
 * one of them is a full member (IBA 10.9.3).
 *
 * Return: true if they match.
 */
bool sib_pkey_match(u16 a, u16 b)
{
	if (!(a & 0x7fff) || (a & 0x7fff) != (b & 0x7fff))
		return false;
	return (a | b) & 0x8000;
}

/**
 * sib_pkey_find() - the port's table entry a packet's P_Key matches
 * @port: the receiving port
 * @pkey: the packet's P_Key
 * @index: the matching entry, if found
 *
 * Return: true if an entry matched.
 */
bool sib_pkey_find(struct sib_port *port, u16 pkey, u16 *index)
{
	unsigned long irqf;
	bool found = false;
	u16 i;

	spin_lock_irqsave(&port->lock, irqf);
	for (i = 0; i < SIB_PKEYS; i++) {
		if (!sib_pkey_match(port->a.pkeys[i], pkey))
			continue;
		*index = i;
		found = true;
		break;
	}
	spin_unlock_irqrestore(&port->lock, irqf);
	return found;
}

/**
 * sib_port_events() - raise the IB events a change of the port made
 * @port: the port
 * @events: a bit per enum ib_event_type
 *
 * Called without the port lock: ib_core's handlers query the port.
 */
void sib_port_events(struct sib_port *port, u32 events)
{
	struct ib_event ev = {
		.device = &port->dev->ibdev,
		.element.port_num = 1,
	};
	static const enum ib_event_type order[] = {
		IB_EVENT_PORT_ERR, IB_EVENT_LID_CHANGE, IB_EVENT_PKEY_CHANGE,
		IB_EVENT_GID_CHANGE, IB_EVENT_SM_CHANGE, IB_EVENT_PORT_ACTIVE,
		IB_EVENT_CLIENT_REREGISTER,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(order); i++) {
		if (!(events & BIT(order[i])))
			continue;
		ev.event = order[i];
		ib_dispatch_event(&ev);
	}
}

/* One end of a cable going down or up; the port's lock held. */
static void sib_port_link(struct sib_port *port, bool up, u32 *ev)
{
	struct sib_port_attrs *a = &port->a;

	lockdep_assert_held(&port->lock);
	if (port->link_up == up)
		return;
	port->link_up = up;
	if (a->phys_state == IB_PORT_PHYS_STATE_DISABLED)
		return;
	if (up) {
		/* the link trains; the SM takes the port on from INIT */
		a->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
		a->state = IB_PORT_INIT;
		return;
	}
	if (a->state == IB_PORT_ACTIVE)
		*ev |= BIT(IB_EVENT_PORT_ERR);
	a->phys_state = IB_PORT_PHYS_STATE_POLLING;
	a->state = IB_PORT_DOWN;
}

/**
 * sib_port_set_link() - plug or unplug the cable of a port
 * @port: one end of the cable
 * @up: plug it in (true) or pull it (false)
 *
 * Both ends change, as with a real cable, and each raises the events a
 * real port raises: PORT_ERR when an ACTIVE port loses its link; a port
 * whose link comes back waits in INIT for the SM.
 */
void sib_port_set_link(struct sib_port *port, bool up)
{
	struct sib_port *end[2] = { port, port->peer };
	u32 ev[2] = {};
	unsigned long irqf;
	int i;

	for (i = 0; i < 2; i++) {
		if (!end[i])
			continue;
		spin_lock_irqsave(&end[i]->lock, irqf);
		sib_port_link(end[i], up, &ev[i]);
		spin_unlock_irqrestore(&end[i]->lock, irqf);
	}
	for (i = 0; i < 2; i++)
		if (end[i] && ev[i])
			sib_port_events(end[i], ev[i]);
}

/*
 * softib makes no user contexts (no alloc_ucontext), so there is nothing
 * to disassociate; ib_core moves a device to another network namespace
 * (rdma dev set ... netns, exclusive mode) only if it has this op.
 */
static void sib_disassociate_ucontext(struct ib_ucontext *uctx)
{
}

static const struct ib_device_ops sib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = 1,
	.query_device = sib_query_device,
	.query_port = sib_query_port,
	.query_gid = sib_query_gid,
	.query_pkey = sib_query_pkey,
	.modify_port = sib_modify_port,
	.get_port_immutable = sib_port_immutable,
	.get_link_layer = sib_link_layer,
	.process_mad = sib_process_mad,
	.disassociate_ucontext = sib_disassociate_ucontext,
};

static struct sib_dev *sib_dev_create(int index)
{
	struct sib_dev *sdev;
	struct sib_port *port;

	sdev = ib_alloc_device(sib_dev, ibdev);
	if (!sdev)
		return NULL;
	sdev->index = index;
	sdev->node_guid = 0x02aa5e0000000000ULL | ((u64)index << 8);
	xa_init_flags(&sdev->qps, XA_FLAGS_ALLOC | XA_FLAGS_LOCK_IRQ);
	sdev->next_qpn = 0x10 + index * 0x100;
	spin_lock_init(&sdev->mcast_lock);
	INIT_LIST_HEAD(&sdev->mcast);

	port = &sdev->port;
	port->dev = sdev;
	spin_lock_init(&port->lock);
	spin_lock_init(&port->rx_lock);
	INIT_LIST_HEAD(&port->rx_queue);
	INIT_LIST_HEAD(&port->retry);
	INIT_WORK(&port->rx_work, sib_rx_work);
	port->link_up = true;
	sib_sma_init(port);

	sdev->ibdev.node_type = RDMA_NODE_IB_CA;
	sdev->ibdev.phys_port_cnt = 1;
	sdev->ibdev.num_comp_vectors = num_online_cpus();
	sdev->ibdev.node_guid = cpu_to_be64(sdev->node_guid);
	snprintf(sdev->ibdev.node_desc, sizeof(sdev->ibdev.node_desc),
		 sib_node_desc_fmt, init_utsname()->nodename, index);
	ib_set_device_ops(&sdev->ibdev, &sib_dev_ops);
	ib_set_device_ops(&sdev->ibdev, &sib_verbs_ops);
	return sdev;
}

static void sib_dev_free(struct sib_dev *sdev)
{
	xa_destroy(&sdev->qps);
	ib_dealloc_device(&sdev->ibdev);
}

/*
 * Unload, in order: 1. remove the debugfs knobs (no cable pulls after
 * it); 2. unregister every device (ib_core's clients, the MAD layer
 * among them, destroy their QPs, so no packet is sent after it); 3. stop
 * the ports' receive work and free the packets still queued for it;
 * 4. free the devices.
 */
static void sib_remove_all(void)
{
	unsigned int i;

	for (i = 0; i < sib_ndevs; i++)
		sib_debugfs_del(&sib_devs[i]->port);
	for (i = 0; i < sib_ndevs; i++)
		ib_unregister_device(&sib_devs[i]->ibdev);
	for (i = 0; i < sib_ndevs; i++) {
		cancel_work_sync(&sib_devs[i]->port.rx_work);
		sib_rx_discard(&sib_devs[i]->port);
	}
	for (i = 0; i < sib_ndevs; i++) {
		sib_dev_free(sib_devs[i]);
		sib_devs[i] = NULL;
	}
	sib_ndevs = 0;
}

static int __init sib_init(void)
{
	unsigned int i, n;
	int err;

	if (!pairs || pairs > ARRAY_SIZE(sib_devs) / 2) {
		pr_err("softib: pairs=%u: 1 to %zu\n", pairs, ARRAY_SIZE(sib_devs) / 2);
		return -EINVAL;
	}
	n = pairs * 2;
	sib_debugfs_init();
	for (i = 0; i < n; i++) {
		sib_devs[i] = sib_dev_create(i);
		if (!sib_devs[i]) {
			err = -ENOMEM;
			goto err_free;
		}
	}
	for (i = 0; i < n; i++)
		sib_devs[i]->port.peer = &sib_devs[i ^ 1]->port;
	for (i = 0; i < n; i++) {
		err = ib_register_device(&sib_devs[i]->ibdev, "softib%d", NULL);
		if (err)
			goto err_unregister;
		sib_ndevs = i + 1;
		sib_debugfs_add(&sib_devs[i]->port);
	}
	pr_info("softib: %u HCAs, %u cables\n", n, pairs);
	return 0;

err_unregister:
	/* sib_remove_all() frees the registered ones, then the rest */
	i = sib_ndevs;
	sib_remove_all();
	for (; i < n; i++) {
		sib_dev_free(sib_devs[i]);
		sib_devs[i] = NULL;
	}
	sib_debugfs_exit();
	return err;
err_free:
	while (i--) {
		sib_dev_free(sib_devs[i]);
		sib_devs[i] = NULL;
	}
	sib_debugfs_exit();
	return err;
}

static void __exit sib_exit(void)
{
	sib_remove_all();
	sib_debugfs_exit();
}

module_init(sib_init);
module_exit(sib_exit);
MODULE_DESCRIPTION("softib: software InfiniBand HCAs joined by cables, for tests");
MODULE_LICENSE("GPL");
