/* sandbox-stub-keeper.h — the stub's keeper mode (sandbox-stub-keeper.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

/* The first argument that selects the keeper mode: keep-overlay=NAME. */
#define STUB_KEEPER_OPTION "keep-overlay="

/* Never returns: exits 0 once the host closes its pipe, 1 on failure. */
void stub_keep_overlay (int argc, char **argv) __attribute__ ((noreturn));

/* sandbox-stub.c: every capability dropped, no_new_privs set. */
void stub_drop_capabilities (void);
