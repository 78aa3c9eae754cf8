// SPDX-License-Identifier: GPL-2.0
/*
 * Child interfaces of a port interface: one per partition, or several on
 * one P_Key for containers (ipoib-cni gives each pod a child with the
 * parent's P_Key). What a P_Key given by a user may be and what a child
 * made through sysfs is called; making a child (ip link add, sysfs
 * create_child) and removing it (ip link del, delete_child, its network
 * namespace going away, its port interface going away).
 *
 * A child is a whole interface of its own (ipoib_netdev.c's
 * ipng_dev_init(): UD QP and channels, link address with its own QPN,
 * broadcast group of its P_Key, connected mode, counters) on its parent's
 * port. Children are made and removed under RTNL; &ipng_ca.ports lists
 * them with the port interfaces (under &ipng_ca.lock).
 *
 * Also the sysfs attributes of every interface (ipng_sysfs_group: mode,
 * umcast and pkey everywhere, create_child and delete_child on port
 * interfaces, parent on children).
 *
 * Teardown of a child, in order:
 *  1. unregistration (under RTNL) stops it and calls ipng_child_uninit():
 *     no new port work, off the device's list;
 *  2. after RTNL is released, ipng_child_free() (its priv_destructor)
 *     waits for its works, which take RTNL, and frees its verbs objects
 *     and tables; the core then frees the netdev.
 */
#include <linux/kernel.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <kunit/visibility.h>

#include "ipoib.h"

/**
 * ipng_child_pkey() - the P_Key a child is made with
 * @val: the value a user gave (sysfs text already converted, or the
 *       netlink attribute)
 * @pkey: on success, @val with the full-membership bit set
 *
 * A child always joins as a full member, whatever the user wrote: the
 * bit is set, as the kernel's IPoIB does. The base value 0 (0x0000,
 * 0x8000) is the invalid P_Key of the IBA and more than 16 bits is no
 * P_Key at all.
 *
 * Return: 0, or -EINVAL for a value no child can have.
 */
int ipng_child_pkey(unsigned long val, u16 *pkey)
{
	if (val > U16_MAX || !ipng_pkey_valid(val))
		return -EINVAL;
	*pkey = val | IPNG_PKEY_FULL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_child_pkey);

/**
 * ipng_child_pkey_parse() - a P_Key written to create_child or delete_child
 * @buf: the text: one number in C notation (0x8001, 32769, 0100001), a
 *       trailing newline allowed (echo adds one), nothing else
 * @pkey: on success, the P_Key with the full-membership bit set
 *
 * Return: 0, -EINVAL for text that is not one number, or
 * ipng_child_pkey()'s error.
 */
int ipng_child_pkey_parse(const char *buf, u16 *pkey)
{
	unsigned long val;

	if (kstrtoul(buf, 0, &val))
		return -EINVAL;
	return ipng_child_pkey(val, pkey);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_child_pkey_parse);

/**
 * ipng_child_name() - the name of a child made through sysfs
 * @name: IFNAMSIZ bytes to fill
 * @parent: the parent's name
 * @pkey: the child's P_Key (full-membership bit set)
 *
 * "<parent>.<pkey as four hex digits>", the parent's name cut to its
 * first 10 characters so that the whole fits: ib0 and 0x8001 give
 * ib0.8001, what NetworkManager and the kernel's IPoIB expect.
 */
void ipng_child_name(char *name, const char *parent, u16 pkey)
{
	snprintf(name, IFNAMSIZ, "%.10s.%04x", parent, pkey);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_child_name);

/* ---- making and removing children ---- */

/*
 * The child of @parent with @pkey made through sysfs. Under RTNL, which
 * keeps the result: children go away only under it.
 */
static struct ipng_dev *ipng_child_find(struct ipng_dev *parent, u16 pkey)
{
	struct ipng_ca *ic = parent->ic;
	struct ipng_dev *ipd, *found = NULL;

	ASSERT_RTNL();
	mutex_lock(&ic->lock);
	list_for_each_entry(ipd, &ic->ports, list) {
		if (ipd->parent == parent && ipd->sysfs_child &&
		    ipd->pkey == pkey) {
			found = ipd;
			break;
		}
	}
	mutex_unlock(&ic->lock);
	return found;
}

/* Waits for the works (which take RTNL) and frees; RTNL not held. */
static void ipng_child_free(struct net_device *ndev)
{
	struct ipng_dev *ipd = ipng_priv(ndev);

	cancel_work_sync(&ipd->port_work);
	cancel_delayed_work_sync(&ipd->repair_work);
	cancel_work_sync(&ipd->notify_work);
	ipng_dev_uninit(ipd);
}

/**
 * ipng_child_add() - make and register a child of a port interface
 * @parent: the port interface
 * @ndev: the child's netdev, set up by ipng_setup(), in the namespace it
 *	is to be registered in
 * @pkey: its P_Key, full-membership bit set (ipng_child_pkey())
 * @sysfs_child: made through create_child: its P_Key must be unique
 *	among those of @parent
 * @extack: where to say why not (netlink), or NULL
 *
 * Under RTNL. From here on the child follows port events like its parent
 * and is freed by unregistration.
 *
 * Return: 0; or -EOPNOTSUPP for a child of a child, -ENODEV while the
 * parent goes away, -ENOTUNIQ for a second sysfs child with one P_Key, or
 * the error of creation or registration, with @ndev unregistered and
 * holding nothing (the caller frees it).
 */
int ipng_child_add(struct ipng_dev *parent, struct net_device *ndev,
		   u16 pkey, bool sysfs_child, struct netlink_ext_ack *extack)
{
	struct ipng_dev *ipd = ipng_priv(ndev);
	struct ipng_ca *ic = parent->ic;
	int err;

	ASSERT_RTNL();
	if (parent->parent) {
		NL_SET_ERR_MSG(extack, "a child cannot have children");
		return -EOPNOTSUPP;
	}
	if (test_bit(IPNG_F_DYING, &parent->flags))
		return -ENODEV;
	if (sysfs_child && ipng_child_find(parent, pkey))
		return -ENOTUNIQ;
	err = ipng_dev_init(ndev, ic, parent->port, parent->fabric, parent,
			    pkey);
	if (err) {
		NL_SET_ERR_MSG(extack, "the child's queue pairs or tables could not be made");
		return err;
	}
	ipd->sysfs_child = sysfs_child;
	err = register_netdevice(ndev);
	if (err) {
		ipng_dev_uninit(ipd);
		return err;
	}
	/* Only now: a failed registration is undone above, not twice. */
	ndev->priv_destructor = ipng_child_free;
	ndev->needs_free_netdev = true;
	mutex_lock(&ic->lock);
	list_add_tail(&ipd->list, &ic->ports);
	mutex_unlock(&ic->lock);
	ipng_dev_refresh(ipd);
	netdev_info(ndev, "child of %s, P_Key 0x%04x (QPN 0x%06x)\n",
		    parent->ndev->name, ipd->pkey, ipd->qp->qp_num);
	return 0;
}

/**
 * ipng_child_uninit() - a child is being unregistered
 * @ipd: the child
 *
 * Its ndo_uninit, under RTNL: no port work is queued from here on and the
 * device's events no longer reach it. Also called when registration
 * fails, before the child was listed.
 */
void ipng_child_uninit(struct ipng_dev *ipd)
{
	ASSERT_RTNL();
	set_bit(IPNG_F_DYING, &ipd->flags);
	mutex_lock(&ipd->ic->lock);
	list_del_init(&ipd->list);
	mutex_unlock(&ipd->ic->lock);
}

/**
 * ipng_children_remove() - remove every child of a device's interfaces
 * @ic: the device, its event handler unregistered
 *
 * Takes RTNL. The port interfaces are marked dying first, so no child is
 * made meanwhile; the children are gone (and freed) on return.
 */
void ipng_children_remove(struct ipng_ca *ic)
{
	struct ipng_dev *ipd;
	LIST_HEAD(kill);

	rtnl_lock();
	mutex_lock(&ic->lock);
	list_for_each_entry(ipd, &ic->ports, list) {
		if (!ipd->parent)
			set_bit(IPNG_F_DYING, &ipd->flags);
		else
			unregister_netdevice_queue(ipd->ndev, &kill);
	}
	mutex_unlock(&ic->lock);
	/* Unlists each (ipng_child_uninit()); frees them in rtnl_unlock(). */
	unregister_netdevice_many(&kill);
	rtnl_unlock();
}

/*
 * A namespace that goes away takes its children with it, as it does its
 * other virtual interfaces (veth, macvlan): a pod's interface must not
 * outlive the pod with a QP and a group membership nobody tracks. Port
 * interfaces go back to init_net instead (rtnl_link_ops.netns_refund).
 * This runs before the core's own device exit, which does that refund.
 */
static void __net_exit ipng_children_exit_batch(struct list_head *net_list)
{
	struct net_device *ndev;
	struct net *net;
	LIST_HEAD(kill);

	rtnl_lock();
	list_for_each_entry(net, net_list, exit_list)
		for_each_netdev(net, ndev)
			if (ndev->rtnl_link_ops == &ipng_link_ops &&
			    ipng_priv(ndev)->parent)
				unregister_netdevice_queue(ndev, &kill);
	unregister_netdevice_many(&kill);
	rtnl_unlock();
}

static struct pernet_operations ipng_children_net_ops = {
	.exit_batch	= ipng_children_exit_batch,
};

/**
 * ipng_children_net_init() - remove children with their namespaces
 *
 * Return: 0 or the error of register_pernet_device().
 */
int ipng_children_net_init(void)
{
	return register_pernet_device(&ipng_children_net_ops);
}

void ipng_children_net_exit(void)
{
	unregister_pernet_device(&ipng_children_net_ops);
}

/* ---- sysfs: mode (ipoib_mode.c), create_child, delete_child, pkey, parent ---- */

/* Make the child @pkey of @parent through sysfs; under RTNL. */
static int ipng_child_create_sysfs(struct ipng_dev *parent, u16 pkey)
{
	char name[IFNAMSIZ];
	struct net_device *ndev;
	int err;

	ipng_child_name(name, parent->ndev->name, pkey);
	ndev = alloc_netdev_mqs(sizeof(struct ipng_dev), name, NET_NAME_USER,
				ipng_setup, IPNG_MAX_CHANNELS,
				IPNG_MAX_CHANNELS);
	if (!ndev)
		return -ENOMEM;
	dev_net_set(ndev, dev_net(parent->ndev));
	err = ipng_child_add(parent, ndev, pkey, true, NULL);
	if (err)
		free_netdev(ndev);
	return err;
}

/*
 * RTNL is only tried, as in mode_store(): unregistration holds it while
 * it waits for this file's writers.
 */
static ssize_t ipng_child_store(struct device *dev, const char *buf,
				size_t len, bool create)
{
	struct net_device *ndev = to_net_dev(dev);
	struct ipng_dev *child;
	u16 pkey;
	int err;

	if (!ns_capable(dev_net(ndev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	err = ipng_child_pkey_parse(buf, &pkey);
	if (err)
		return err;
	if (!rtnl_trylock())
		return restart_syscall();
	if (ndev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
	} else if (create) {
		err = ipng_child_create_sysfs(ipng_priv(ndev), pkey);
	} else {
		child = ipng_child_find(ipng_priv(ndev), pkey);
		if (child)
			unregister_netdevice(child->ndev);
		else
			err = -ENODEV;
	}
	rtnl_unlock();
	return err ?: len;
}

static ssize_t create_child_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t len)
{
	return ipng_child_store(dev, buf, len, true);
}
static DEVICE_ATTR_WO(create_child);

static ssize_t delete_child_store(struct device *dev,
				  struct device_attribute *attr,
				  const char *buf, size_t len)
{
	return ipng_child_store(dev, buf, len, false);
}
static DEVICE_ATTR_WO(delete_child);

static ssize_t pkey_show(struct device *dev, struct device_attribute *attr,
			 char *buf)
{
	return sysfs_emit(buf, "0x%04x\n",
			  READ_ONCE(ipng_priv(to_net_dev(dev))->pkey));
}
static DEVICE_ATTR_RO(pkey);

/* The parent outlives its children: they go first (ipng_children_remove()). */
static ssize_t parent_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	struct ipng_dev *ipd = ipng_priv(to_net_dev(dev));

	return sysfs_emit(buf, "%s\n", ipd->parent->ndev->name);
}
static DEVICE_ATTR_RO(parent);

static ssize_t umcast_show(struct device *dev, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%d\n",
			  READ_ONCE(ipng_priv(to_net_dev(dev))->umcast));
}

/* Any number; not 0 turns it on, as with the kernel's IPoIB. */
static ssize_t umcast_store(struct device *dev, struct device_attribute *attr,
			    const char *buf, size_t len)
{
	struct net_device *ndev = to_net_dev(dev);
	unsigned int val;
	int err;

	if (!ns_capable(dev_net(ndev)->user_ns, CAP_NET_ADMIN))
		return -EPERM;
	err = kstrtouint(buf, 0, &val);
	if (err)
		return err;
	ipng_set_umcast(ipng_priv(ndev), val);
	return len;
}
static DEVICE_ATTR_RW(umcast);

static struct attribute *ipng_sysfs_attrs[] = {
	&ipng_attr_mode.attr,
	&dev_attr_umcast.attr,
	&dev_attr_create_child.attr,
	&dev_attr_delete_child.attr,
	&dev_attr_pkey.attr,
	&dev_attr_parent.attr,
	NULL
};

/* Port interfaces make and remove children; children name their parent. */
static umode_t ipng_sysfs_attr_visible(struct kobject *kobj,
				       struct attribute *attr, int n)
{
	struct ipng_dev *ipd = ipng_priv(to_net_dev(kobj_to_dev(kobj)));

	if (attr == &dev_attr_create_child.attr ||
	    attr == &dev_attr_delete_child.attr)
		return ipd->parent ? 0 : attr->mode;
	if (attr == &dev_attr_parent.attr)
		return ipd->parent ? attr->mode : 0;
	return attr->mode;
}

/*
 * The interface's own sysfs attributes, installed as ndev->sysfs_groups[0]
 * before the netdev is registered (net-sysfs uses the slots after the
 * first for its own groups).
 */
const struct attribute_group ipng_sysfs_group = {
	.attrs = ipng_sysfs_attrs,
	.is_visible = ipng_sysfs_attr_visible,
};
