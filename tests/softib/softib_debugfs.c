// SPDX-License-Identifier: GPL-2.0
/*
 * softib: debugfs, the knobs and readings a test uses.
 *
 * Owns /sys/kernel/debug/softib/<device>/: "counters" (what the wire
 * counted on the port: packets sent and delivered, drops by reason) and
 * "link" (1 while the cable is plugged in; writing 0 or 1 unplugs or
 * plugs it, taking both ends of the cable down or up as a real cable
 * pull does).
 */
#include <linux/debugfs.h>
#include <linux/kstrtox.h>
#include <linux/seq_file.h>
#include "softib.h"

static struct dentry *sib_debugfs_root;

static const char * const sib_count_names[] = {
	[SIB_TX] = "tx_packets",
	[SIB_RX] = "rx_packets",
	[SIB_DROP_LINK] = "drop_link",
	[SIB_DROP_STATE] = "drop_port_state",
	[SIB_DROP_QFULL] = "drop_queue_full",
	[SIB_DROP_NOMEM] = "drop_no_memory",
	[SIB_DROP_DLID] = "drop_dlid",
	[SIB_DROP_NOQP] = "drop_no_qp",
	[SIB_DROP_PKEY] = "drop_pkey",
	[SIB_DROP_QKEY] = "drop_qkey",
	[SIB_DROP_NORECV] = "drop_no_receive",
	[SIB_DROP_MCAST] = "drop_mcast_no_member",
	[SIB_DROP_LEN] = "drop_length",
	[SIB_DROP_SEQ] = "drop_rc_sequence",
	[SIB_DROP_RNR] = "drop_rc_no_receive",
	[SIB_RC_ACK] = "rc_acked",
	[SIB_RC_HELD] = "rc_held",
};

static_assert(ARRAY_SIZE(sib_count_names) == SIB_NCOUNTS);

static int sib_counters_show(struct seq_file *m, void *unused)
{
	struct sib_port *port = m->private;
	int i;

	for (i = 0; i < SIB_NCOUNTS; i++)
		seq_printf(m, "%s %ld\n", sib_count_names[i],
			   atomic_long_read(&port->count[i]));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sib_counters);

static int sib_link_show(struct seq_file *m, void *unused)
{
	struct sib_port *port = m->private;

	seq_printf(m, "%d\n", READ_ONCE(port->link_up));
	return 0;
}

static int sib_link_open(struct inode *inode, struct file *file)
{
	return single_open(file, sib_link_show, inode->i_private);
}

static ssize_t sib_link_write(struct file *file, const char __user *ubuf,
			      size_t len, loff_t *ppos)
{
	struct sib_port *port = file_inode(file)->i_private;
	bool up;
	int err;

	err = kstrtobool_from_user(ubuf, len, &up);
	if (err)
		return err;
	sib_port_set_link(port, up);
	return len;
}

static const struct file_operations sib_link_fops = {
	.owner = THIS_MODULE,
	.open = sib_link_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = sib_link_write,
	.release = single_release,
};

/**
 * sib_debugfs_add() - create a port's debugfs directory
 * @port: the port, its device named
 *
 * debugfs failures are not errors: the device works without it.
 */
void sib_debugfs_add(struct sib_port *port)
{
	port->debugfs = debugfs_create_dir(dev_name(&port->dev->ibdev.dev),
					   sib_debugfs_root);
	debugfs_create_file("counters", 0444, port->debugfs, port,
			    &sib_counters_fops);
	debugfs_create_file("link", 0644, port->debugfs, port, &sib_link_fops);
}

/**
 * sib_debugfs_del() - remove a port's debugfs directory
 * @port: the port
 *
 * Waits for readers and writers of its files to leave.
 */
void sib_debugfs_del(struct sib_port *port)
{
	debugfs_remove_recursive(port->debugfs);
	port->debugfs = NULL;
}

void sib_debugfs_init(void)
{
	sib_debugfs_root = debugfs_create_dir("softib", NULL);
}

void sib_debugfs_exit(void)
{
	debugfs_remove_recursive(sib_debugfs_root);
}
