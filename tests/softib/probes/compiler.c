// SPDX-License-Identifier: GPL-2.0
/*
 * Sanity probe: the compiler builds against this kernel's headers with the
 * module's flags at all. conftest.sh stops the build if this one fails.
 */
#include <linux/module.h>
