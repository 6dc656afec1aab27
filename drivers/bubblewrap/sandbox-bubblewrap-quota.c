/* sandbox-bubblewrap-quota.c — a disk quota per session, on btrfs
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/btrfs.h>
#include <linux/capability.h>
#include <linux/magic.h>

#include "sandbox-bubblewrap-quota-private.h"
#include "sandbox-bubblewrap-private.h"

/*
 * With workspace-quota-bytes set, each new session's workspace/ (new
 * sessions are copied then: an overlay's work directories would have to
 * share the upper layer's subvolume and so its full quota) is a btrfs
 * subvolume of its own whose qgroup limits the bytes it references: a guest, or the host's file API, writing past it
 * gets EDQUOT, and no other session or the host's other writes on that
 * filesystem are touched. The session's lease and state.json stay outside
 * it, so a full session can still be resumed and deleted. The limit is on
 * disk with the subvolume, so a stopped and resumed session keeps it;
 * deleting the session's tree removes the subvolume (rmdir of an empty
 * subvolume deletes it, Linux 4.18).
 *
 * Why btrfs: ext4 and XFS project quotas need the kernel's quota formats
 * (CONFIG_QFMT_V2, CONFIG_XFS_QUOTA), which kernels built for virtual
 * machines often leave out; btrfs qgroups need only btrfs. Setting a
 * qgroup limit needs CAP_SYS_ADMIN: a root host. Anywhere the limit
 * cannot be enforced the backend refuses to construct, as for every other
 * limit.
 */

static gboolean
has_cap_sys_admin (void)
{
  struct __user_cap_header_struct header = { _LINUX_CAPABILITY_VERSION_3, 0 };
  struct __user_cap_data_struct data[2] = { { 0 } };

  if (syscall (SYS_capget, &header, data) < 0)
    return FALSE;
  return (data[CAP_TO_INDEX (CAP_SYS_ADMIN)].effective & CAP_TO_MASK (CAP_SYS_ADMIN)) != 0;
}

/* Whether btrfs quotas are on for the filesystem @fd is on: sysfs lists
 * its qgroups only then. */
static gboolean
btrfs_quotas_enabled (int fd)
{
  struct btrfs_ioctl_fs_info_args info = { 0 };
  const guint8 *id = info.fsid;
  g_autofree char *qgroups = NULL;

  if (ioctl (fd, BTRFS_IOC_FS_INFO, &info) < 0)
    return FALSE;
  qgroups = g_strdup_printf ("/sys/fs/btrfs/%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                             "%02x%02x%02x%02x%02x%02x/qgroups",
                             id[0], id[1], id[2], id[3], id[4], id[5], id[6], id[7],
                             id[8], id[9], id[10], id[11], id[12], id[13], id[14], id[15]);
  return g_file_test (qgroups, G_FILE_TEST_IS_DIR);
}

static gboolean
refuse (GError    **error,
        const char *state_directory,
        const char *reason)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "workspace-quota-bytes cannot be enforced on %s: %s",
               state_directory, reason);
  return FALSE;
}

/**
 * sandbox_bubblewrap_quota_check:
 * @state_directory: the backend's state directory
 * @quota_bytes: workspace-quota-bytes (0: none)
 * @error: return location for a #GError
 *
 * Returns: %TRUE if @quota_bytes is 0 or can be enforced for sessions in
 *   @state_directory, else %FALSE with %SANDBOX_ERROR_UNAVAILABLE saying why
 */
gboolean
sandbox_bubblewrap_quota_check (const char  *state_directory,
                                guint64      quota_bytes,
                                GError     **error)
{
  g_auto(SandboxBubblewrapFd) fd = -1;
  struct statfs fs;

  if (quota_bytes == 0)
    return TRUE;
  fd = open (state_directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 || fstatfs (fd, &fs) < 0)
    return refuse (error, state_directory, g_strerror (errno));
  if (fs.f_type != BTRFS_SUPER_MAGIC)
    return refuse (error, state_directory,
                   "it is not on btrfs (a per-session quota is a btrfs qgroup)");
  if (!has_cap_sys_admin ())
    return refuse (error, state_directory,
                   "setting a btrfs qgroup limit needs CAP_SYS_ADMIN (a root host)");
  if (!btrfs_quotas_enabled (fd))
    return refuse (error, state_directory,
                   "btrfs quotas are not enabled on its filesystem (btrfs quota enable)");
  return TRUE;
}

/* Sets @error from @saved_errno, "WHAT NAME: REASON"; returns FALSE. */
static gboolean
set_io_error (GError     **error,
              int          saved_errno,
              const char  *what,
              const char  *name)
{
  g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno), "%s %s: %s",
               what, name, g_strerror (saved_errno));
  return FALSE;
}

/* Makes @name in @parent_fd a btrfs subvolume whose qgroup allows
 * @quota_bytes (referenced); nothing is left when it fails. */
static gboolean
make_limited_subvolume (int          parent_fd,
                        const char  *name,
                        guint64      quota_bytes,
                        GError     **error)
{
  static const char what[] = "Could not make the workspace's limited subvolume";
  struct btrfs_ioctl_vol_args create = { 0 };
  struct btrfs_ioctl_qgroup_limit_args limit = { 0 };
  g_auto(SandboxBubblewrapFd) fd = -1;
  int saved_errno;

  if (strlen (name) >= sizeof create.name)
    return set_io_error (error, ENAMETOOLONG, what, name);
  memcpy (create.name, name, strlen (name));
  if (ioctl (parent_fd, BTRFS_IOC_SUBVOL_CREATE, &create) < 0)
    return set_io_error (error, errno, what, name);

  /* qgroupid 0: the subvolume @fd is in. */
  limit.lim.flags = BTRFS_QGROUP_LIMIT_MAX_RFER;
  limit.lim.max_rfer = quota_bytes;
  fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && ioctl (fd, BTRFS_IOC_QGROUP_LIMIT, &limit) == 0)
    return TRUE;
  saved_errno = errno;
  /* An empty subvolume goes with rmdir (Linux 4.18). */
  unlinkat (parent_fd, name, AT_REMOVEDIR);
  return set_io_error (error, saved_errno, what, name);
}

/* Moves the entries of @fill_name, a directory in @fd, up into @fd, then
 * gives @fd its owner and mode and removes it: as if @fd had been made as
 * @fill_name was. All in one subvolume, so every rename stays in it. */
static gboolean
lift_entries (int          fd,
              const char  *fill_name,
              GError     **error)
{
  static const char what[] = "Could not move the workspace into its limited subvolume from";
  g_autoptr(GPtrArray) names = g_ptr_array_new_with_free_func (g_free);
  g_auto(SandboxBubblewrapFd) fill_fd = -1;
  g_auto(SandboxBubblewrapFd) dir_fd = -1;
  struct stat st;
  DIR *dir;
  struct dirent *entry;

  fill_fd = openat (fd, fill_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fill_fd < 0 || fstat (fill_fd, &st) < 0 || (dir_fd = dup (fill_fd)) < 0)
    return set_io_error (error, errno, what, fill_name);
  dir = fdopendir (dir_fd);
  if (dir == NULL)
    return set_io_error (error, errno, what, fill_name);
  dir_fd = -1;   /* the DIR's now */
  /* Names first: renaming entries out of a directory being read could
   * make readdir() skip some. */
  while ((entry = readdir (dir)) != NULL)
    if (strcmp (entry->d_name, ".") != 0 && strcmp (entry->d_name, "..") != 0)
      g_ptr_array_add (names, g_strdup (entry->d_name));
  closedir (dir);

  for (guint i = 0; i < names->len; i++)
    if (renameat2 (fill_fd, names->pdata[i], fd, names->pdata[i], RENAME_NOREPLACE) < 0)
      return set_io_error (error, errno, what, fill_name);
  if (unlinkat (fd, fill_name, AT_REMOVEDIR) < 0 ||
      fchown (fd, st.st_uid, st.st_gid) < 0 ||
      fchmod (fd, st.st_mode & 07777) < 0)
    return set_io_error (error, errno, what, fill_name);
  return TRUE;
}

/* A copy reflinks the template's extents (FICLONE), and btrfs counts
 * cloned extents in a qgroup only when its transaction commits: until then
 * a guest's writes were checked as if the template were not there (a
 * 16 MiB quota held 8 MiB of template and 16 MiB more). Committing before
 * any guest runs makes the limit hold from the first write; a template
 * larger than the quota leaves a workspace that is full from the start. */
static gboolean
commit_accounting (int          fd,
                   const char  *name,
                   GError     **error)
{
  return syncfs (fd) == 0 ||
         set_io_error (error, errno, "Could not commit to its quota the workspace", name);
}

/**
 * sandbox_bubblewrap_quota_fill_directory:
 * @parent_fd: a session's directory
 * @name: its workspace directory, not there yet
 * @quota_bytes: workspace-quota-bytes (0: none)
 * @fill: makes and fills a directory
 * @data: for @fill
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Without a quota, @fill makes @name. With one, @name is a btrfs subvolume
 * limited to @quota_bytes, made empty: @fill makes its tree under a
 * temporary name inside it (so the tree counts from its first byte), whose
 * entries, owner and mode then become @name's. The subvolume holds the
 * guest's data only: the session's lease and state stay outside it, so a
 * full workspace can still be resumed, stopped and deleted. Nothing is
 * left when it fails.
 *
 * Returns: %TRUE, or %FALSE with @error set
 */
gboolean
sandbox_bubblewrap_quota_fill_directory (int                        parent_fd,
                                         const char                *name,
                                         guint64                    quota_bytes,
                                         SandboxBubblewrapFillFunc  fill,
                                         gpointer                   data,
                                         GCancellable              *cancellable,
                                         GError                   **error)
{
  g_autofree char *fill_name = NULL;
  g_auto(SandboxBubblewrapFd) fd = -1;

  if (quota_bytes == 0)
    return fill (parent_fd, name, data, cancellable, error);
  if (!make_limited_subvolume (parent_fd, name, quota_bytes, error))
    return FALSE;
  fd = openat (parent_fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    {
      int saved_errno = errno;

      unlinkat (parent_fd, name, AT_REMOVEDIR);
      return set_io_error (error, saved_errno, "Could not open the workspace's subvolume", name);
    }
  /* Unguessable, so that no entry of the tree has its name (the rename
   * refuses to replace one that had). */
  fill_name = g_strdup_printf (".sandbox-fill-%08x%08x", g_random_int (), g_random_int ());
  if (fill (fd, fill_name, data, cancellable, error) && lift_entries (fd, fill_name, error) &&
      commit_accounting (fd, name, error))
    return TRUE;
  sandbox_workspace_remove_tree_at (parent_fd, name, NULL);
  return FALSE;
}
