// SPDX-License-Identifier: GPL-2.0
/*
 * Module entry points: module parameters and their validation, the IB
 * client that creates one interface per usable port of every RDMA device,
 * and routing of the devices' asynchronous events to those interfaces.
 */
#include <linux/ctype.h>
#include <linux/if_arp.h>
#include <linux/log2.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/visibility.h>

#include "ipoib.h"

MODULE_AUTHOR("The ipoib_ng developers");
MODULE_DESCRIPTION("IP over InfiniBand and RoCE (RFC 4391, RFC 4755)");
MODULE_LICENSE("GPL");
MODULE_VERSION(DRV_VERSION);

struct workqueue_struct *ipng_wq;
struct workqueue_struct *ipng_ah_wq;
/* Multicast passes may wait seconds for the SA: not on ipng_wq. */
struct workqueue_struct *ipng_mc_wq;
struct ib_sa_client ipng_sa_client;

static char ipng_ifname[IFNAMSIZ] = "ib%d";
unsigned int ipng_send_queue_size = 256;
unsigned int ipng_recv_queue_size = 512;

/**
 * ipng_ifname_template_valid() - check an interface name template
 * @tmpl: template such as "ib%d"
 *
 * A template must fit in IFNAMSIZ once the number is filled in, contain
 * exactly one "%d" and no other conversion, and none of the characters the
 * kernel refuses in interface names.
 *
 * Return: true if @tmpl can name interfaces.
 */
bool ipng_ifname_template_valid(const char *tmpl)
{
	const char *p;
	int conversions = 0;

	if (!*tmpl || strlen(tmpl) >= IFNAMSIZ - 1)
		return false;
	for (p = tmpl; *p; p++) {
		if (*p == '/' || *p == ':' || isspace(*p))
			return false;
		if (*p != '%')
			continue;
		if (p[1] != 'd')
			return false;
		conversions++;
		p++;
	}
	return conversions == 1;
}
EXPORT_SYMBOL_IF_KUNIT(ipng_ifname_template_valid);

/**
 * ipng_ring_size_valid() - check a send or receive ring size
 * @size: number of work requests
 *
 * Return: true for a power of two from 64 to 8192.
 */
bool ipng_ring_size_valid(unsigned int size)
{
	return size >= IPNG_RING_MIN && size <= IPNG_RING_MAX &&
	       is_power_of_2(size);
}
EXPORT_SYMBOL_IF_KUNIT(ipng_ring_size_valid);

static int ipng_param_set_ifname(const char *val, const struct kernel_param *kp)
{
	char tmpl[IFNAMSIZ];

	if (strscpy(tmpl, val, sizeof(tmpl)) < 0)
		return -EINVAL;
	strim(tmpl);
	if (!ipng_ifname_template_valid(tmpl)) {
		pr_err("%s: ifname '%s' is not a valid template (one %%d, under %d characters)\n",
		       DRV_NAME, val, IFNAMSIZ - 1);
		return -EINVAL;
	}
	strscpy(kp->str->string, tmpl, kp->str->maxlen);
	return 0;
}

static const struct kernel_param_ops ipng_ifname_ops = {
	.set = ipng_param_set_ifname,
	.get = param_get_string,
};

static struct kparam_string ipng_ifname_param = {
	.maxlen = sizeof(ipng_ifname),
	.string = ipng_ifname,
};

module_param_cb(ifname, &ipng_ifname_ops, &ipng_ifname_param, 0444);
MODULE_PARM_DESC(ifname, "Interface name template, one %d (default ib%d)");

static int ipng_param_set_ring(const char *val, const struct kernel_param *kp)
{
	unsigned int size;
	int err;

	err = kstrtouint(val, 0, &size);
	if (err)
		return err;
	if (!ipng_ring_size_valid(size)) {
		pr_err("%s: %s=%u: need a power of two from %u to %u\n",
		       DRV_NAME, kp->name, size, IPNG_RING_MIN, IPNG_RING_MAX);
		return -EINVAL;
	}
	*(unsigned int *)kp->arg = size;
	return 0;
}

static const struct kernel_param_ops ipng_ring_ops = {
	.set = ipng_param_set_ring,
	.get = param_get_uint,
};

module_param_cb(send_queue_size, &ipng_ring_ops, &ipng_send_queue_size, 0444);
MODULE_PARM_DESC(send_queue_size, "UD send ring entries, power of two 64-8192 (default 256)");
module_param_cb(recv_queue_size, &ipng_ring_ops, &ipng_recv_queue_size, 0444);
MODULE_PARM_DESC(recv_queue_size, "UD receive ring entries, power of two 64-8192 (default 512)");

static struct ib_client ipng_client;

/* Every device with interfaces (&ipng_ca.list). */
static LIST_HEAD(ipng_cas);
static DEFINE_MUTEX(ipng_cas_lock);

static bool ipng_is_port_event(enum ib_event_type type)
{
	switch (type) {
	case IB_EVENT_PORT_ACTIVE:
	case IB_EVENT_PORT_ERR:
	case IB_EVENT_GID_CHANGE:
	case IB_EVENT_LID_CHANGE:
	case IB_EVENT_PKEY_CHANGE:
	case IB_EVENT_SM_CHANGE:
	case IB_EVENT_CLIENT_REREGISTER:
		return true;
	default:
		return false;
	}
}

/* The device's events, in process context (ib_core's event work). */
static void ipng_event(struct ib_event_handler *handler, struct ib_event *event)
{
	struct ipng_ca *ic = container_of(handler, struct ipng_ca,
					  event_handler);
	struct ipng_dev *ipd;

	if (event->event != IB_EVENT_DEVICE_FATAL &&
	    !ipng_is_port_event(event->event))
		return;
	mutex_lock(&ic->lock);
	list_for_each_entry(ipd, &ic->ports, list)
		if (event->event == IB_EVENT_DEVICE_FATAL ||
		    ipd->port == event->element.port_num)
			ipng_dev_refresh(ipd);
	mutex_unlock(&ic->lock);
}

/*
 * Teardown of a device's interfaces, in order: the children (which
 * marks the port interfaces dying, so that no child is made meanwhile),
 * then each port interface, unlisted first.
 */
static void ipng_destroy_ports(struct ipng_ca *ic)
{
	struct ipng_dev *ipd;

	ipng_children_remove(ic);
	for (;;) {
		mutex_lock(&ic->lock);
		ipd = list_first_entry_or_null(&ic->ports, struct ipng_dev,
					       list);
		if (ipd)
			list_del_init(&ipd->list);
		mutex_unlock(&ic->lock);
		if (!ipd)
			break;
		ipng_dev_destroy(ipd);
	}
}

static int ipng_add_one(struct ib_device *ca)
{
	struct ipng_dev *ipd;
	struct ipng_ca *ic;
	u32 port;

	ic = kzalloc(sizeof(*ic), GFP_KERNEL);
	if (!ic)
		return -ENOMEM;
	ic->ca = ca;
	mutex_init(&ic->lock);
	INIT_LIST_HEAD(&ic->ports);

	rdma_for_each_port(ca, port) {
		ipd = ipng_dev_create(ic, port, ipng_ifname);
		if (IS_ERR(ipd))
			continue;
		/* A child may already have been made on it (ip link add). */
		mutex_lock(&ic->lock);
		list_add_tail(&ipd->list, &ic->ports);
		mutex_unlock(&ic->lock);
	}
	if (list_empty(&ic->ports)) {
		mutex_destroy(&ic->lock);
		kfree(ic);
		return -EOPNOTSUPP;
	}

	INIT_IB_EVENT_HANDLER(&ic->event_handler, ca, ipng_event);
	ib_register_event_handler(&ic->event_handler);
	/* An event that came before the handler was registered is lost. */
	mutex_lock(&ic->lock);
	list_for_each_entry(ipd, &ic->ports, list)
		ipng_dev_refresh(ipd);
	mutex_unlock(&ic->lock);

	mutex_lock(&ipng_cas_lock);
	list_add_tail(&ic->list, &ipng_cas);
	mutex_unlock(&ipng_cas_lock);
	ib_set_client_data(ca, &ipng_client, ic);
	return 0;
}

static void ipng_remove_one(struct ib_device *ca, void *client_data)
{
	struct ipng_ca *ic = client_data;

	mutex_lock(&ipng_cas_lock);
	list_del(&ic->list);
	mutex_unlock(&ipng_cas_lock);
	ib_unregister_event_handler(&ic->event_handler);
	ipng_destroy_ports(ic);
	mutex_destroy(&ic->lock);
	kfree(ic);
}

/*
 * Events of the network devices under our RoCE ports, under RTNL:
 *  - a port's MTU follows its Ethernet device, and drivers such as rxe
 *    change it without an IB event (only queues work);
 *  - a device that unregisters or leaves its namespace is let go by every
 *    interface holding something on it (fabric ops lower_gone).
 */
static void ipng_netdev_changed(struct net_device *ndev, unsigned long event)
{
	struct ipng_dev *ipd;
	struct ipng_ca *ic;

	mutex_lock(&ipng_cas_lock);
	list_for_each_entry(ic, &ipng_cas, list) {
		mutex_lock(&ic->lock);
		list_for_each_entry(ipd, &ic->ports, list) {
			if (event == NETDEV_UNREGISTER) {
				if (ipd->fabric->lower_gone)
					ipd->fabric->lower_gone(ipd, ndev);
			} else if (ipd->fabric->carried_by(ipd, ndev)) {
				ipng_dev_refresh(ipd);
			}
		}
		mutex_unlock(&ic->lock);
	}
	mutex_unlock(&ipng_cas_lock);
}

static int ipng_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	if (ndev->type == ARPHRD_INFINIBAND)
		return NOTIFY_DONE;
	if (event == NETDEV_CHANGEMTU || event == NETDEV_UNREGISTER)
		ipng_netdev_changed(ndev, event);
	return NOTIFY_DONE;
}

static struct notifier_block ipng_netdev_notifier = {
	.notifier_call = ipng_netdev_event,
};

static struct ib_client ipng_client = {
	.name	= DRV_NAME,
	.add	= ipng_add_one,
	.remove	= ipng_remove_one,
};

static int __init ipng_init(void)
{
	int err;

	ipng_wq = alloc_ordered_workqueue("%s", WQ_MEM_RECLAIM, DRV_NAME);
	if (!ipng_wq)
		return -ENOMEM;
	ipng_ah_wq = alloc_workqueue("%s_ah", WQ_MEM_RECLAIM, 0, DRV_NAME);
	if (!ipng_ah_wq) {
		err = -ENOMEM;
		goto err_wq;
	}

	ipng_mc_wq = alloc_workqueue("%s_mc", WQ_MEM_RECLAIM, 0, DRV_NAME);
	if (!ipng_mc_wq) {
		err = -ENOMEM;
		goto err_ah_wq;
	}
	ib_sa_register_client(&ipng_sa_client);

	err = ipng_netlink_init();
	if (err == -EEXIST) {
		pr_err("%s: the rtnl link kind 'ipoib' is taken, most likely by ib_ipoib; unload it first (modprobe -r ib_ipoib)\n",
		       DRV_NAME);
		err = -EBUSY;
	}
	if (err)
		goto err_sa;

	err = register_netdevice_notifier(&ipng_netdev_notifier);
	if (err)
		goto err_netlink;
	/* Before the first interface: its /proc and debugfs entries. */
	err = ipng_fs_init();
	if (err)
		goto err_notifier;
	err = ipng_children_net_init();
	if (err)
		goto err_fs;
	err = ib_register_client(&ipng_client);
	if (err)
		goto err_children;
	return 0;

err_children:
	ipng_children_net_exit();
err_fs:
	ipng_fs_exit();
err_notifier:
	unregister_netdevice_notifier(&ipng_netdev_notifier);
err_netlink:
	ipng_netlink_exit();
err_sa:
	ib_sa_unregister_client(&ipng_sa_client);
	destroy_workqueue(ipng_mc_wq);
err_ah_wq:
	destroy_workqueue(ipng_ah_wq);
err_wq:
	destroy_workqueue(ipng_wq);
	return err;
}

static void __exit ipng_exit(void)
{
	ib_unregister_client(&ipng_client);
	ipng_children_net_exit();
	ipng_fs_exit();
	unregister_netdevice_notifier(&ipng_netdev_notifier);
	ipng_netlink_exit();
	ib_sa_unregister_client(&ipng_sa_client);
	destroy_workqueue(ipng_mc_wq);
	destroy_workqueue(ipng_ah_wq);
	destroy_workqueue(ipng_wq);
}

module_init(ipng_init);
module_exit(ipng_exit);
