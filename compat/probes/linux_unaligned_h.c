// SPDX-License-Identifier: GPL-2.0
/* <linux/unaligned.h> exists (it was <asm/unaligned.h> before 6.12). */
#include <linux/unaligned.h>
