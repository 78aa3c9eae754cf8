// SPDX-License-Identifier: GPL-2.0
/*
 * Observability files: /proc/net/ipoib/<if>/stats in the interface's
 * network namespace and <debugfs>/ipoib_ng/<if>/ (the dumps
 * ipng_debugfs_files[] lists, and in test builds the tx_stall, qp_error
 * and fail_start fault knobs).
 *
 * A netdevice notifier creates an interface's entries when it appears in a
 * namespace (registration, or arrival after a namespace move) and removes
 * them when it leaves one (unregistration, or departure); a rename
 * recreates them under the new name. The notifier runs under RTNL, which
 * therefore protects &ipng_dev.fs. The show functions take neither RTNL
 * nor any lock held around removal, which waits for running readers.
 *
 * The per-namespace "ipoib" directory belongs to a pernet subsystem. When
 * a namespace dies, the core's device exit (which runs before any
 * subsystem exit) has already moved our interfaces back to the initial
 * namespace, and with them their entries.
 */
#include <linux/debugfs.h>
#include <linux/netdevice.h>
#include <linux/proc_fs.h>
#include <linux/rtnetlink.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>

#include "ipoib.h"

/**
 * struct ipng_debugfs_file - one file of an interface's debugfs directory
 * @name: file name
 * @show: seq_file show function; m->private is the struct ipng_dev
 */
struct ipng_debugfs_file {
	const char *name;
	int (*show)(struct seq_file *m, void *v);
};

static int ipng_fs_paths_show(struct seq_file *m, void *v)
{
	ipng_paths_dump(m->private, m);
	return 0;
}

static int ipng_fs_neigh_show(struct seq_file *m, void *v)
{
	ipng_neighs_dump(m->private, m);
	return 0;
}

static int ipng_fs_mcast_show(struct seq_file *m, void *v)
{
	ipng_mcast_dump(m->private, m);
	return 0;
}

static int ipng_fs_cm_show(struct seq_file *m, void *v)
{
	ipng_cm_dump(m->private, m);
	return 0;
}

/* Every interface directory holds one file per entry. */
static const struct ipng_debugfs_file ipng_debugfs_files[] = {
	{ "paths", ipng_fs_paths_show },
	{ "neigh", ipng_fs_neigh_show },
	{ "mcast", ipng_fs_mcast_show },
	{ "cm", ipng_fs_cm_show },
};

/**
 * struct ipng_fs_file - private data of one debugfs file
 * @ipd: the interface
 * @desc: what the file shows
 */
struct ipng_fs_file {
	struct ipng_dev *ipd;
	const struct ipng_debugfs_file *desc;
};

/**
 * struct ipng_fs_dev - the entries of one interface
 * @proc: /proc/net/ipoib/<if> (NULL if it could not be made)
 * @debugfs: <debugfs>/ipoib_ng/<if> (NULL or an ERR_PTR without debugfs)
 * @files: private data of the files in @debugfs
 */
struct ipng_fs_dev {
	struct proc_dir_entry *proc;
	struct dentry *debugfs;
	struct ipng_fs_file files[ARRAY_SIZE(ipng_debugfs_files)];
};

/**
 * struct ipng_fs_net - per-namespace state
 * @root: /proc/net/ipoib of the namespace (NULL if it could not be made)
 */
struct ipng_fs_net {
	struct proc_dir_entry *root;
};

static unsigned int ipng_fs_net_id;
static struct dentry *ipng_debugfs_root;

/* ---- /proc/net/ipoib/<if>/stats ---- */

#define IPNG_FS_TOTAL(field) \
	{ #field, offsetof(struct rtnl_link_stats64, field) }

/* The netdev's own totals, as dev_get_stats() (ip -s link) reports them. */
static const struct {
	const char *name;
	size_t offset;
} ipng_fs_totals[] = {
	IPNG_FS_TOTAL(rx_packets),
	IPNG_FS_TOTAL(tx_packets),
	IPNG_FS_TOTAL(rx_bytes),
	IPNG_FS_TOTAL(tx_bytes),
	IPNG_FS_TOTAL(rx_dropped),
	IPNG_FS_TOTAL(tx_dropped),
	IPNG_FS_TOTAL(rx_errors),
	IPNG_FS_TOTAL(tx_errors),
};

static bool ipng_fs_is_total(const char *name)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ipng_fs_totals); i++)
		if (!strcmp(name, ipng_fs_totals[i].name))
			return true;
	return false;
}

/* Packets the driver holds for a path or a connection to come up. */
static unsigned int ipng_tx_backlog(struct ipng_dev *ipd)
{
	return ipng_paths_backlog(ipd) + ipng_cm_backlog(ipd);
}

/*
 * One "name: value" per line. Lock-free: every value is read once and may
 * be a moment old; nothing here waits for RTNL (removal of this file runs
 * under it and waits for readers).
 */
static int ipng_fs_stats_show(struct seq_file *m, void *v)
{
	struct ipng_dev *ipd = m->private;
	struct net_device *ndev = ipd->ndev;
	struct rtnl_link_stats64 st;
	u64 cnt[IPNG_STAT_MAX];
	union ib_gid gid;
	unsigned int i;

	ipng_addr_gid(ndev->dev_addr, &gid);

	seq_printf(m, "mode: %s\n",
		   ipng_connected(ipd) ? "connected" : "datagram");
	seq_printf(m, "link_layer: %s\n", ipd->fabric->name);
	seq_printf(m, "mtu: %u\n", READ_ONCE(ndev->mtu));
	seq_printf(m, "qpn: 0x%06x\n", ipd->qp->qp_num);
	seq_printf(m, "gid: %pI6\n", gid.raw);
	seq_printf(m, "pkey: 0x%04x\n", READ_ONCE(ipd->pkey));
	seq_printf(m, "channels: %u\n", READ_ONCE(ipd->nchans));
	seq_printf(m, "send_queue_size: %u\n", READ_ONCE(ipd->tx_ring_size));
	seq_printf(m, "send_queue_depth: %u\n", ipng_chans_tx_depth(ipd));
	seq_printf(m, "send_queue_backlog: %u\n", ipng_tx_backlog(ipd));
	seq_printf(m, "recv_queue_size: %u\n", READ_ONCE(ipd->rx_ring_size));

	dev_get_stats(ndev, &st);
	for (i = 0; i < ARRAY_SIZE(ipng_fs_totals); i++)
		seq_printf(m, "%s: %llu\n", ipng_fs_totals[i].name,
			   *(u64 *)((u8 *)&st + ipng_fs_totals[i].offset));

	/* Counters already printed as netdev totals are not repeated. */
	ipng_stats_read(ipd, cnt);
	for (i = 0; i < IPNG_STAT_MAX; i++)
		if (!ipng_fs_is_total(ipng_stat_names[i]))
			seq_printf(m, "%s: %llu\n", ipng_stat_names[i], cnt[i]);

	seq_printf(m, "paths: %u\n", ipng_paths_count(ipd));
	seq_printf(m, "neighbours: %u\n", ipng_neighs_count(ipd));
	seq_printf(m, "mcast_groups: %u\n", ipng_mcast_count(ipd));
	seq_printf(m, "connections: %u\n", ipng_cm_count(ipd));
	return 0;
}

static void ipng_fs_proc_add(struct ipng_dev *ipd, struct ipng_fs_dev *fs)
{
	struct net_device *ndev = ipd->ndev;
	struct ipng_fs_net *fn = net_generic(dev_net(ndev), ipng_fs_net_id);

	if (!fn->root)
		return;
	fs->proc = proc_mkdir(ndev->name, fn->root);
	if (!fs->proc)
		goto err;
	if (!proc_create_single_data("stats", 0444, fs->proc,
				     ipng_fs_stats_show, ipd))
		goto err_dir;
	return;

err_dir:
	proc_remove(fs->proc);
	fs->proc = NULL;
err:
	netdev_warn(ndev, "no /proc/net/ipoib/%s\n", ndev->name);
}

/* ---- <debugfs>/ipoib_ng/<if>/ ---- */

static int ipng_debugfs_open(struct inode *inode, struct file *file)
{
	const struct ipng_fs_file *f = inode->i_private;

	return single_open(file, f->desc->show, f->ipd);
}

static const struct file_operations ipng_debugfs_fops = {
	.owner		= THIS_MODULE,
	.open		= ipng_debugfs_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= single_release,
};

/*
 * tx_stall (fault injection): 1 makes NAPI leave send completions alone,
 * so the send queues fill and the stall detector has to reset them; it
 * reads 0 again once it did.
 */
static int ipng_tx_stall_get(void *data, u64 *val)
{
	struct ipng_dev *ipd = data;

	*val = test_bit(IPNG_F_TX_STALL, &ipd->flags);
	return 0;
}

static int ipng_tx_stall_set(void *data, u64 val)
{
	struct ipng_dev *ipd = data;

	if (val > 1)
		return -EINVAL;
	if (val)
		set_bit(IPNG_F_TX_STALL, &ipd->flags);
	else
		clear_bit(IPNG_F_TX_STALL, &ipd->flags);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ipng_tx_stall_fops, ipng_tx_stall_get,
			 ipng_tx_stall_set, "%llu\n");

/*
 * qp_error (fault injection): writing N moves channel N's UD QP to ERROR
 * behind the driver's back, as a device fault would; the flushed work
 * requests must bring the channels through recovery. Reads the number of
 * recoveries so far. RTNL is only tried: removal of this file waits for
 * writers and runs under RTNL.
 */
static int ipng_qp_error_get(void *data, u64 *val)
{
	struct ipng_dev *ipd = data;
	u64 c[IPNG_STAT_MAX];

	ipng_stats_read(ipd, c);
	*val = c[IPNG_STAT_RECOVERIES];
	return 0;
}

static int ipng_qp_error_set(void *data, u64 val)
{
	struct ipng_dev *ipd = data;
	int err = 0;

	if (!rtnl_trylock())
		return restart_syscall();
	if (!test_bit(IPNG_F_RUNNING, &ipd->flags))
		err = -ENETDOWN;
	else if (val >= ipd->nchans)
		err = -EINVAL;
	else
		ipng_ib_qp_error(ipd, ipng_chan(ipd, val)->qp);
	rtnl_unlock();
	return err;
}

DEFINE_DEBUGFS_ATTRIBUTE(ipng_qp_error_fops, ipng_qp_error_get,
			 ipng_qp_error_set, "%llu\n");

/*
 * fail_start (fault injection): the next N starts of the channels (open,
 * ethtool -L/-G, recovery) fail with -EIO after every step succeeded, so
 * the whole unwind runs; reads how many are left.
 */
static int ipng_fail_start_get(void *data, u64 *val)
{
	struct ipng_dev *ipd = data;

	*val = atomic_read(&ipd->fail_starts);
	return 0;
}

static int ipng_fail_start_set(void *data, u64 val)
{
	struct ipng_dev *ipd = data;

	if (val > 100)
		return -EINVAL;
	atomic_set(&ipd->fail_starts, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(ipng_fail_start_fops, ipng_fail_start_get,
			 ipng_fail_start_set, "%llu\n");

/*
 * debugfs is one tree for all namespaces: an interface whose name is
 * taken there (by one of the same name in another namespace) gets the
 * directory "<name>@<namespace inode number>" instead.
 */
static void ipng_fs_debugfs_add(struct ipng_dev *ipd, struct ipng_fs_dev *fs)
{
	struct net_device *ndev = ipd->ndev;
	char name[IFNAMSIZ + 12];
	struct dentry *taken;
	unsigned int i;

	if (IS_ERR_OR_NULL(ipng_debugfs_root))
		return;
	strscpy(name, ndev->name, sizeof(name));
	taken = debugfs_lookup(name, ipng_debugfs_root);
	if (taken) {
		dput(taken);
		snprintf(name, sizeof(name), "%s@%u", ndev->name,
			 dev_net(ndev)->ns.inum);
	}
	fs->debugfs = debugfs_create_dir(name, ipng_debugfs_root);
	for (i = 0; i < ARRAY_SIZE(ipng_debugfs_files); i++) {
		fs->files[i].ipd = ipd;
		fs->files[i].desc = &ipng_debugfs_files[i];
		debugfs_create_file(ipng_debugfs_files[i].name, 0400,
				    fs->debugfs, &fs->files[i],
				    &ipng_debugfs_fops);
	}
	if (!IS_ENABLED(CONFIG_INFINIBAND_IPOIB_NG_FAULT_KNOBS))
		return;
	debugfs_create_file_unsafe("tx_stall", 0600, fs->debugfs, ipd,
				   &ipng_tx_stall_fops);
	debugfs_create_file_unsafe("qp_error", 0600, fs->debugfs, ipd,
				   &ipng_qp_error_fops);
	debugfs_create_file_unsafe("fail_start", 0600, fs->debugfs, ipd,
				   &ipng_fail_start_fops);
}

/* ---- following the interface ---- */

static void ipng_fs_del(struct ipng_dev *ipd)
{
	struct ipng_fs_dev *fs = ipd->fs;

	ASSERT_RTNL();
	if (!fs)
		return;
	ipd->fs = NULL;
	/* Both wait for readers that are inside a show function. */
	debugfs_remove(fs->debugfs);
	proc_remove(fs->proc);
	kfree(fs);
}

static void ipng_fs_add(struct ipng_dev *ipd)
{
	struct ipng_fs_dev *fs;

	ASSERT_RTNL();
	ipng_fs_del(ipd);
	fs = kzalloc(sizeof(*fs), GFP_KERNEL);
	if (!fs) {
		netdev_warn(ipd->ndev, "no /proc or debugfs entries\n");
		return;
	}
	ipng_fs_proc_add(ipd, fs);
	ipng_fs_debugfs_add(ipd, fs);
	ipd->fs = fs;
}

/*
 * NETDEV_REGISTER and NETDEV_UNREGISTER come with registration and
 * unregistration and also around a namespace move (unregister in the old
 * namespace, register in the new one); NETDEV_CHANGENAME follows a rename.
 */
static int ipng_fs_netdev_event(struct notifier_block *nb,
				unsigned long event, void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);

	if (ndev->rtnl_link_ops != &ipng_link_ops)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_REGISTER:
	case NETDEV_CHANGENAME:
		ipng_fs_add(ipng_priv(ndev));
		break;
	case NETDEV_UNREGISTER:
		ipng_fs_del(ipng_priv(ndev));
		break;
	}
	return NOTIFY_DONE;
}

static struct notifier_block ipng_fs_notifier = {
	.notifier_call = ipng_fs_netdev_event,
};

/* ---- namespaces ---- */

/* A namespace without the directory still works, just without entries. */
static int __net_init ipng_fs_net_init(struct net *net)
{
	struct ipng_fs_net *fn = net_generic(net, ipng_fs_net_id);

	fn->root = proc_net_mkdir(net, "ipoib", net->proc_net);
	return 0;
}

static void __net_exit ipng_fs_net_exit(struct net *net)
{
	struct ipng_fs_net *fn = net_generic(net, ipng_fs_net_id);

	proc_remove(fn->root);
}

static struct pernet_operations ipng_fs_net_ops = {
	.init	= ipng_fs_net_init,
	.exit	= ipng_fs_net_exit,
	.id	= &ipng_fs_net_id,
	.size	= sizeof(struct ipng_fs_net),
};

/**
 * ipng_fs_init() - set up /proc/net/ipoib and <debugfs>/ipoib_ng
 *
 * Call before any interface is registered: entries are made as
 * interfaces register.
 *
 * Return: 0 or a negative errno (nothing is left registered).
 */
int ipng_fs_init(void)
{
	int err;

	ipng_debugfs_root = debugfs_create_dir(DRV_NAME, NULL);
	err = register_pernet_subsys(&ipng_fs_net_ops);
	if (err)
		goto err_debugfs;
	err = register_netdevice_notifier(&ipng_fs_notifier);
	if (err)
		goto err_pernet;
	return 0;

err_pernet:
	unregister_pernet_subsys(&ipng_fs_net_ops);
err_debugfs:
	debugfs_remove(ipng_debugfs_root);
	ipng_debugfs_root = NULL;
	return err;
}

/**
 * ipng_fs_exit() - undo ipng_fs_init(); every interface is unregistered
 */
void ipng_fs_exit(void)
{
	unregister_netdevice_notifier(&ipng_fs_notifier);
	unregister_pernet_subsys(&ipng_fs_net_ops);
	debugfs_remove(ipng_debugfs_root);
	ipng_debugfs_root = NULL;
}
