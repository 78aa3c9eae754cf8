#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Guest script of `make ib-shell`: the fabric up (fabric.sh up), before
# the shell starts.
exec "$(dirname "$0")/fabric.sh" up
