/* sandbox-stub-net.h — the stub's network mode (sandbox-stub-net.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

/* The first argument that selects the network mode. */
#define STUB_NET_OPTION "keep-net"

/* Never returns: serves until the host closes its socket or kills it,
 * or exits 1 on failure. */
void stub_keep_net (int argc, char **argv) __attribute__ ((noreturn));
