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

/* The longest lower= taken: the lower layers' paths relative to the
 * session's layers/, joined by ':' (a template's data under up to 32
 * snapshots' is some 2,900 bytes); with the rest, the options fit in a
 * page. */
#define STUB_KEEPER_MAX_LOWER 3200

/* In a layered session's layers/, beside upper/ and mount/: the upper
 * layer and the mount point of its writable runtime's overlay, whose
 * work directory is work/NAME-runtime (NAME the keeper's own). */
#define STUB_KEEPER_RUNTIME_UPPER "runtime-upper"
#define STUB_KEEPER_RUNTIME_MOUNT "runtime-mount"
#define STUB_KEEPER_RUNTIME_WORK_SUFFIX "-runtime"

/* The first argument that selects the keeper mode: keep-overlay=NAME. */
#define STUB_KEEPER_OPTION "keep-overlay="

/* Never returns: runs until killed, or exits 1 on failure. */
void stub_keep_overlay (int argc, char **argv) __attribute__ ((noreturn));

/* Sends "E" and "@what: strerror (errno)" on the answer socket (1) and
 * exits 1: the failure of a helper mode (keeper, network keeper). */
void stub_helper_fail (const char *what) __attribute__ ((noreturn));

/* unshare() of a user namespace that maps this process's uid and gid to
 * themselves and nothing else, with @flags' other namespaces, which it
 * then owns. Returns 0, or -1 with errno set. */
int stub_enter_own_user_namespace (int flags);

/* sandbox-stub.c: every capability dropped, no_new_privs set. */
void stub_drop_capabilities (void);
