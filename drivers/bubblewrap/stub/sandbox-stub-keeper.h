/* sandbox-stub-keeper.h — the stub's keeper mode (sandbox-stub-keeper.c)
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

/* The overlay's options after lowerdir, upperdir and workdir: xattrs in
 * the user.* namespace (the only ones a user namespace may set), no
 * redirects followed or made, no metacopy (both would trust xattrs the
 * guest controls in its upper layer), no index, no xino. */
#define SANDBOX_STUB_OVERLAY_OPTIONS \
  "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"

/* The first argument that selects the keeper mode: keep-overlay=NAME. */
#define STUB_KEEPER_OPTION "keep-overlay="

/* Never returns: runs until killed, or exits 1 on failure. */
void stub_keep_overlay (int argc, char **argv) __attribute__ ((noreturn));

/* sandbox-stub.c: every capability dropped, no_new_privs set. */
void stub_drop_capabilities (void);
