/* sandbox-stub-overlay.h — what the host and the stub's overlay step share
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

/* The overlay's options after lowerdir, upperdir and workdir: xattrs in
 * the user.* namespace (the only ones a user namespace may set), no
 * redirects followed or made, no metacopy (both would trust xattrs the
 * guest controls in its upper layer), no index, no xino. The backend's
 * probe mounts with the same (sandbox-bubblewrap-layering.c). */
#define SANDBOX_STUB_OVERLAY_OPTIONS \
  "userxattr,redirect_dir=nofollow,metacopy=off,index=off,xino=off"
