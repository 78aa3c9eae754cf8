// SPDX-License-Identifier: GPL-2.0
/*
 * softib: the subnet management agent of each port.
 *
 * Owns process_mad: the Get and Set methods of the subnet management
 * attributes a subnet manager reads and writes on a channel adapter
 * (NodeDescription, NodeInfo, GUIDInfo, PortInfo, P_KeyTable, SLtoVL,
 * VLArbitration, Notice's TrapRepress), the port state machine the SM
 * drives through PortInfo (INIT, ARMED, ACTIVE, DOWN) and the events a
 * change raises. Every MAD of another class, and SMInfo, is left to the
 * MAD layer's agents (OpenSM and the SA among them).
 *
 * Not modelled: M_Key checking (the key is kept, never enforced), traps
 * sent by the SMA, VL arbitration (one data VL), extended link speeds.
 */
#include <linux/string.h>
#include "softib.h"

#define SIB_STATUS_BAD_VERSION	cpu_to_be16(0x0004)
#define SIB_STATUS_BAD_METHOD	cpu_to_be16(0x0008)
#define SIB_STATUS_BAD_ATTR	cpu_to_be16(0x000c)
#define SIB_STATUS_BAD_FIELD	cpu_to_be16(0x001c)

#define SIB_LINK_SPEEDS		0x7	/* SDR, DDR, QDR */
#define SIB_LINK_SPEED_QDR	0x4
#define SIB_LINK_WIDTHS		0x3	/* 1X, 4X */
#define SIB_LINK_WIDTH_4X	0x2
#define SIB_PHYS_POLLING	2
#define SIB_PHYS_DISABLED	3
#define SIB_PKEYS_PER_BLOCK	32
#define SIB_GUIDS_PER_BLOCK	8

/**
 * sib_sma_init() - the port as it is when its link trains, before any SM
 * @port: the port (not yet registered)
 */
void sib_sma_init(struct sib_port *port)
{
	struct sib_port_attrs *a = &port->a;

	memset(a, 0, sizeof(*a));
	a->gid_prefix = 0xfe80000000000000ULL;
	a->state = IB_PORT_INIT;
	a->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	a->link_down_default = SIB_PHYS_POLLING;
	a->neighbor_mtu = IB_MTU_4096;
	a->op_vls = 1;
	a->resp_time = 8;
	a->width_enabled = SIB_LINK_WIDTHS;
	a->speed_enabled = SIB_LINK_SPEEDS;
	a->cap_mask = IB_PORT_SYS_IMAGE_GUID_SUP | IB_PORT_CLIENT_REG_SUP;
	a->pkeys[0] = 0xffff;
}

static void sib_get_node_info(struct sib_dev *sdev, struct ib_smp *smp)
{
	struct ib_node_info *ni = (struct ib_node_info *)smp->data;

	ni->base_version = IB_MGMT_BASE_VERSION;
	ni->class_version = 1;
	ni->node_type = RDMA_NODE_IB_CA;
	ni->num_ports = 1;
	ni->sys_guid = cpu_to_be64(sdev->node_guid);
	ni->node_guid = cpu_to_be64(sdev->node_guid);
	ni->port_guid = cpu_to_be64(sib_port_guid(sdev));
	ni->partition_cap = cpu_to_be16(SIB_PKEYS);
	ni->device_id = cpu_to_be16(1);
	ni->revision = cpu_to_be32(1);
	ni->local_port_num = 1;
	ni->vendor_id[0] = (SIB_VENDOR_ID >> 16) & 0xff;
	ni->vendor_id[1] = (SIB_VENDOR_ID >> 8) & 0xff;
	ni->vendor_id[2] = SIB_VENDOR_ID & 0xff;
}

static void sib_get_port_info(struct sib_port *port, struct ib_smp *smp)
{
	struct ib_port_info *pi = (struct ib_port_info *)smp->data;
	struct sib_port_attrs *a = &port->a;

	lockdep_assert_held(&port->lock);
	pi->mkey = cpu_to_be64(a->mkey);
	pi->gid_prefix = cpu_to_be64(a->gid_prefix);
	pi->lid = cpu_to_be16(a->lid);
	pi->sm_lid = cpu_to_be16(a->sm_lid);
	pi->cap_mask = cpu_to_be32(a->cap_mask);
	pi->mkey_lease_period = cpu_to_be16(a->mkey_lease);
	pi->local_port_num = 1;
	pi->link_width_enabled = a->width_enabled;
	pi->link_width_supported = SIB_LINK_WIDTHS;
	pi->link_width_active = SIB_LINK_WIDTH_4X;
	pi->linkspeed_portstate = SIB_LINK_SPEEDS << 4 | a->state;
	pi->portphysstate_linkdown = a->phys_state << 4 | a->link_down_default;
	pi->mkeyprot_resv_lmc = a->mkey_prot << 6 | a->lmc;
	pi->linkspeedactive_enabled = SIB_LINK_SPEED_QDR << 4 | a->speed_enabled;
	pi->neighbormtu_mastersmsl = a->neighbor_mtu << 4 | a->sm_sl;
	pi->vlcap_inittype = 1 << 4;	/* VL0 only */
	pi->vl_high_limit = a->vl_high_limit;
	pi->inittypereply_mtucap = a->init_type_reply << 4 | IB_MTU_4096;
	pi->vlstallcnt_hoqlife = a->hoq_life;
	pi->operationalvl_pei_peo_fpi_fpo = a->op_vls << 4 | a->pe_flags;
	pi->pkey_violations = cpu_to_be16(a->pkey_violations);
	pi->qkey_violations = cpu_to_be16(a->qkey_violations);
	pi->guid_cap = 1;
	pi->clientrereg_resv_subnetto = a->subnet_timeout;
	pi->resv_resptimevalue = a->resp_time;
}

/*
 * A PortState a Set asks for: 0 keeps the state; DOWN is taken from any
 * state (the link then trains again, so the port comes back in INIT);
 * ARMED only from INIT and ACTIVE only from ARMED (IBA 14.2.5.6). Asking
 * for the state the port is in is accepted as no change.
 */
static int sib_port_state_set(struct sib_port_attrs *a, u8 want, u32 *ev)
{
	u8 old = a->state;

	if (!want || want == old)
		return 0;
	switch (want) {
	case IB_PORT_DOWN:
		a->state = IB_PORT_INIT;
		break;
	case IB_PORT_ARMED:
		if (old != IB_PORT_INIT)
			return -EINVAL;
		a->state = IB_PORT_ARMED;
		break;
	case IB_PORT_ACTIVE:
		if (old != IB_PORT_ARMED)
			return -EINVAL;
		a->state = IB_PORT_ACTIVE;
		*ev |= BIT(IB_EVENT_PORT_ACTIVE);
		break;
	default:
		return -EINVAL;
	}
	if (old == IB_PORT_ACTIVE)
		*ev |= BIT(IB_EVENT_PORT_ERR);
	return 0;
}

static int sib_phys_state_set(struct sib_port_attrs *a, u8 want, u32 *ev)
{
	switch (want) {
	case 0:
		return 0;
	case SIB_PHYS_POLLING:
		if (a->phys_state == SIB_PHYS_DISABLED) {
			a->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
			a->state = IB_PORT_INIT;
		}
		return 0;
	case SIB_PHYS_DISABLED:
		if (a->state == IB_PORT_ACTIVE)
			*ev |= BIT(IB_EVENT_PORT_ERR);
		a->phys_state = SIB_PHYS_DISABLED;
		a->state = IB_PORT_DOWN;
		return 0;
	default:
		return -EINVAL;
	}
}

/* PortInfo Set: every writable field, then the state (IBA 14.2.5.6). */
static int sib_set_port_info(struct sib_port *port, const struct ib_smp *smp,
			     u32 *ev)
{
	const struct ib_port_info *pi = (const struct ib_port_info *)smp->data;
	struct sib_port_attrs *a = &port->a;
	struct sib_port_attrs old = *a;
	u8 mtu = pi->neighbormtu_mastersmsl >> 4;
	u8 vls = pi->operationalvl_pei_peo_fpi_fpo >> 4;
	u16 lid = be16_to_cpu(pi->lid);
	int err;

	lockdep_assert_held(&port->lock);
	if (lid >= be16_to_cpu(IB_MULTICAST_LID_BASE) ||
	    (mtu && (mtu < IB_MTU_256 || mtu > IB_MTU_4096)) || vls > 1)
		return -EINVAL;
	a->mkey = be64_to_cpu(pi->mkey);
	a->gid_prefix = be64_to_cpu(pi->gid_prefix);
	a->lid = lid;
	a->sm_lid = be16_to_cpu(pi->sm_lid);
	a->mkey_lease = be16_to_cpu(pi->mkey_lease_period);
	if (pi->link_width_enabled == 0xff)
		a->width_enabled = SIB_LINK_WIDTHS;
	else if (pi->link_width_enabled)
		a->width_enabled = pi->link_width_enabled & SIB_LINK_WIDTHS;
	if ((pi->linkspeedactive_enabled & 0xf) == 0xf)
		a->speed_enabled = SIB_LINK_SPEEDS;
	else if (pi->linkspeedactive_enabled & 0xf)
		a->speed_enabled = pi->linkspeedactive_enabled & SIB_LINK_SPEEDS;
	if (pi->portphysstate_linkdown & 0xf)
		a->link_down_default = pi->portphysstate_linkdown & 0xf;
	a->mkey_prot = pi->mkeyprot_resv_lmc >> 6;
	a->lmc = pi->mkeyprot_resv_lmc & 0x7;
	if (mtu)
		a->neighbor_mtu = mtu;
	a->sm_sl = pi->neighbormtu_mastersmsl & 0xf;
	a->vl_high_limit = pi->vl_high_limit;
	a->hoq_life = pi->vlstallcnt_hoqlife;
	if (vls)
		a->op_vls = vls;
	a->pe_flags = pi->operationalvl_pei_peo_fpi_fpo & 0xf;
	/* writing a violation counter resets it */
	a->pkey_violations = 0;
	a->qkey_violations = 0;
	a->subnet_timeout = pi->clientrereg_resv_subnetto & 0x1f;

	err = sib_phys_state_set(a, pi->portphysstate_linkdown >> 4, ev);
	if (!err)
		err = sib_port_state_set(a, pi->linkspeed_portstate & 0xf, ev);
	if (err) {
		*a = old;
		return err;
	}
	if (a->lid != old.lid || a->lmc != old.lmc)
		*ev |= BIT(IB_EVENT_LID_CHANGE);
	if (a->sm_lid != old.sm_lid || a->sm_sl != old.sm_sl)
		*ev |= BIT(IB_EVENT_SM_CHANGE);
	if (a->gid_prefix != old.gid_prefix)
		*ev |= BIT(IB_EVENT_GID_CHANGE);
	if (pi->clientrereg_resv_subnetto & 0x80)
		*ev |= BIT(IB_EVENT_CLIENT_REREGISTER);
	return 0;
}

static int sib_pkey_block(const struct ib_smp *smp, unsigned int *first)
{
	u32 block = be32_to_cpu(smp->attr_mod) & 0xffff;

	if (block >= SIB_PKEYS / SIB_PKEYS_PER_BLOCK)
		return -EINVAL;
	*first = block * SIB_PKEYS_PER_BLOCK;
	return 0;
}

static int sib_get_pkeys(struct sib_port *port, struct ib_smp *smp)
{
	__be16 *out = (__be16 *)smp->data;
	unsigned int first, i;

	lockdep_assert_held(&port->lock);
	if (sib_pkey_block(smp, &first))
		return -EINVAL;
	for (i = 0; i < SIB_PKEYS_PER_BLOCK; i++)
		out[i] = cpu_to_be16(port->a.pkeys[first + i]);
	return 0;
}

static int sib_set_pkeys(struct sib_port *port, const struct ib_smp *smp,
			 u32 *ev)
{
	const __be16 *in = (const __be16 *)smp->data;
	unsigned int first, i;
	u16 pkey;

	lockdep_assert_held(&port->lock);
	if (sib_pkey_block(smp, &first))
		return -EINVAL;
	for (i = 0; i < SIB_PKEYS_PER_BLOCK; i++) {
		pkey = be16_to_cpu(in[i]);
		if (port->a.pkeys[first + i] == pkey)
			continue;
		port->a.pkeys[first + i] = pkey;
		*ev |= BIT(IB_EVENT_PKEY_CHANGE);
	}
	return 0;
}

static int sib_vlarb_block(const struct ib_smp *smp, unsigned int *block)
{
	u32 b = be32_to_cpu(smp->attr_mod) >> 16;

	if (b < 1 || b > 4)
		return -EINVAL;
	*block = b - 1;
	return 0;
}

/* One attribute, under the port lock; Set leaves the value to read back. */
static int sib_sma_attr(struct sib_port *port, struct ib_smp *smp, bool set,
			u32 *ev)
{
	struct sib_port_attrs *a = &port->a;
	unsigned int b;
	int err;

	lockdep_assert_held(&port->lock);
	switch (smp->attr_id) {
	case IB_SMP_ATTR_NODE_DESC:
		if (set)
			return -EOPNOTSUPP;
		memcpy(smp->data, port->dev->ibdev.node_desc, IB_DEVICE_NODE_DESC_MAX);
		return 0;
	case IB_SMP_ATTR_NODE_INFO:
		if (set)
			return -EOPNOTSUPP;
		sib_get_node_info(port->dev, smp);
		return 0;
	case IB_SMP_ATTR_GUID_INFO:
		/* one GUID (GUIDCap 1), read-only: a Set reads it back */
		if (be32_to_cpu(smp->attr_mod))
			return -EINVAL;
		memset(smp->data, 0, IB_SMP_DATA_SIZE);
		*(__be64 *)smp->data = cpu_to_be64(sib_port_guid(port->dev));
		return 0;
	case IB_SMP_ATTR_PORT_INFO:
		/* a CA's port 0 is the port the SMP came in on */
		if (be32_to_cpu(smp->attr_mod) > 1)
			return -EINVAL;
		if (set) {
			err = sib_set_port_info(port, smp, ev);
			if (err)
				return err;
		}
		memset(smp->data, 0, IB_SMP_DATA_SIZE);
		sib_get_port_info(port, smp);
		return 0;
	case IB_SMP_ATTR_PKEY_TABLE:
		if (set) {
			err = sib_set_pkeys(port, smp, ev);
			if (err)
				return err;
		}
		return sib_get_pkeys(port, smp);
	case IB_SMP_ATTR_SL_TO_VL_TABLE:
		if (set)
			memcpy(a->sl2vl, smp->data, sizeof(a->sl2vl));
		memset(smp->data, 0, IB_SMP_DATA_SIZE);
		memcpy(smp->data, a->sl2vl, sizeof(a->sl2vl));
		return 0;
	case IB_SMP_ATTR_VL_ARB_TABLE:
		if (sib_vlarb_block(smp, &b))
			return -EINVAL;
		if (set)
			memcpy(a->vlarb[b], smp->data, IB_SMP_DATA_SIZE);
		memcpy(smp->data, a->vlarb[b], IB_SMP_DATA_SIZE);
		return 0;
	default:
		return -EOPNOTSUPP;
	}
}

static bool sib_is_smp(const struct ib_mad *in)
{
	return in->mad_hdr.mgmt_class == IB_MGMT_CLASS_SUBN_LID_ROUTED ||
	       in->mad_hdr.mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE;
}

static int sib_reply(struct ib_smp *smp, __be16 status)
{
	smp->method = IB_MGMT_METHOD_GET_RESP;
	smp->status |= status;
	if (smp->mgmt_class == IB_MGMT_CLASS_SUBN_DIRECTED_ROUTE)
		smp->status |= IB_SMP_DIRECTION;
	return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY;
}

/**
 * sib_process_mad() - the SMA: answer the SMPs that reach a port
 * @ibdev: the device
 * @flags: process_mad flags (unused)
 * @port_num: the port (1)
 * @in_wc: the receive completion, NULL for some local MADs
 * @in_grh: its GRH, or NULL
 * @in: the MAD
 * @out: the reply, if there is one
 * @out_size: the reply's size
 * @out_pkey_index: the P_Key index of the reply (unused: IB MADs)
 *
 * Called by the MAD layer for every MAD the port receives and for the
 * directed-route SMPs the local SM sends to its own port, in atomic
 * context.
 *
 * Return: IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_REPLY with @out filled,
 * IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED for a MAD taken here
 * with no reply (TrapRepress), or IB_MAD_RESULT_SUCCESS to leave the MAD
 * to the agents.
 */
int sib_process_mad(struct ib_device *ibdev, int flags, u32 port_num,
		    const struct ib_wc *in_wc, const struct ib_grh *in_grh,
		    const struct ib_mad *in, struct ib_mad *out,
		    size_t *out_size, u16 *out_pkey_index)
{
	struct sib_port *port = &to_sdev(ibdev)->port;
	struct ib_smp *smp = (struct ib_smp *)out;
	unsigned long irqf;
	bool set;
	u32 ev = 0;
	int err;

	if (!sib_is_smp(in) || in->mad_hdr.attr_id == IB_SMP_ATTR_SM_INFO)
		return IB_MAD_RESULT_SUCCESS;
	if (in->mad_hdr.method == IB_MGMT_METHOD_TRAP_REPRESS)
		return IB_MAD_RESULT_SUCCESS | IB_MAD_RESULT_CONSUMED;
	if (in->mad_hdr.method != IB_MGMT_METHOD_GET &&
	    in->mad_hdr.method != IB_MGMT_METHOD_SET)
		return IB_MAD_RESULT_SUCCESS;

	memcpy(out, in, sizeof(*out));
	*out_size = sizeof(*out);
	if (smp->base_version != IB_MGMT_BASE_VERSION || smp->class_version != 1)
		return sib_reply(smp, SIB_STATUS_BAD_VERSION);
	set = smp->method == IB_MGMT_METHOD_SET;

	spin_lock_irqsave(&port->lock, irqf);
	err = sib_sma_attr(port, smp, set, &ev);
	spin_unlock_irqrestore(&port->lock, irqf);
	if (ev)
		sib_port_events(port, ev);
	if (err == -EOPNOTSUPP)
		return sib_reply(smp, set ? SIB_STATUS_BAD_METHOD :
					    SIB_STATUS_BAD_ATTR);
	if (err)
		return sib_reply(smp, SIB_STATUS_BAD_FIELD);
	return sib_reply(smp, 0);
}
