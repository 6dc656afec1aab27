/* sandbox-stub-overlay.c — the stub's overlay step: a layered /workspace
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * For a layered session the driver binds the template's data read-only at
 * DIR/lower and the session's layers (upper/ and overlayfs' work/, one
 * mount) at DIR/layers, makes /workspace an empty directory, gives the
 * stub the capabilities of SANDBOX_BUBBLEWRAP_OVERLAY_CAPABILITIES in the
 * sandbox's user namespace, and passes `overlay-work=NAME overlay=DIR`:
 * NAME is this sandbox's own empty directory in layers/work/, overlayfs'
 * work directory (overlayfs empties its work directory when it mounts, so
 * sandboxes of one session running side by side cannot share one). This
 * step then:
 *
 *  1. makes itself a mount namespace: bwrap's --disable-userns leaves the
 *     stub in a user namespace nested in the one that owns bwrap's mount
 *     namespace, where CAP_SYS_ADMIN does not allow mounting; in a mount
 *     namespace of its own it does (bwrap's mounts come along, locked
 *     together as the kernel does for a less privileged namespace);
 *  2. mounts the overlay on /workspace, nosuid and nodev, with
 *     SANDBOX_STUB_OVERLAY_OPTIONS (userxattr, no redirects, no metacopy,
 *     no index): overlayfs keeps the stub's credentials of this moment as
 *     the mounter's, so its copy-ups and whiteouts act as the guest's ids
 *     with those capabilities, which hold only over what the guest owns;
 *  3. covers DIR with an empty read-only tmpfs, so the guest reaches the
 *     layers only through the overlay (overlayfs holds its own references
 *     to them).
 *
 * The stub then drops every capability, the bounding set included, and
 * installs the seccomp filter before the guest exists (sandbox-stub.c).
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>

#include "sandbox-stub-overlay.h"
#include "sandbox-stub-steps.h"

/* The name overlay-work= gave, which runs first. */
static const char *work_name;

int
stub_step_overlay_work (const char *value)
{
  /* One name in layers/work/: no slash, no comma, not "." or "..". */
  if (value[0] == '\0' || strchr (value, '/') != NULL || strchr (value, ',') != NULL ||
      strcmp (value, ".") == 0 || strcmp (value, "..") == 0 || strlen (value) > 64)
    {
      errno = EINVAL;
      return -1;
    }
  work_name = value;
  return 0;
}

int
stub_step_overlay (const char *value)
{
  char options[3 * 256 + sizeof SANDBOX_STUB_OVERLAY_OPTIONS + 64];
  int length;

  /* The driver's fixed directory: an absolute path, no commas (they would
   * split the options), short. */
  if (value[0] != '/' || strchr (value, ',') != NULL || strlen (value) > 200 ||
      work_name == NULL)
    {
      errno = EINVAL;
      return -1;
    }
  length = snprintf (options, sizeof options,
                     "lowerdir=%s/lower,upperdir=%s/layers/upper,workdir=%s/layers/work/%s,%s",
                     value, value, value, work_name, SANDBOX_STUB_OVERLAY_OPTIONS);
  if (length < 0 || (size_t) length >= sizeof options)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  if (unshare (CLONE_NEWNS) < 0 ||
      mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
      mount ("overlay", "/workspace", "overlay", MS_NOSUID | MS_NODEV, options) < 0 ||
      mount ("tmpfs", value, "tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
             "size=4k,nr_inodes=2,mode=0555") < 0)
    return -1;
  return 0;
}
