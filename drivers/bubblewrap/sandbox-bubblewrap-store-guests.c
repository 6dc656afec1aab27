/* sandbox-bubblewrap-store-guests.c — whose ids a session's guest has
 *
 * The backend's one guest, or (a root host's default) ids of the session's
 * own, claimed from the registry (sandbox-bubblewrap-guest-ids.c), recorded
 * in the session directory and given back when the session is deleted or
 * its lease released; and the owner of what the host makes for a session
 * (its workspace, a layered session's template data).
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <string.h>

#include "sandbox-bubblewrap-store-layout-private.h"

/* Where a session records the ids its guest has on a root host that gives
 * each session its own (see sandbox-bubblewrap-guest-ids.c): "UID:GID". */
#define SESSION_GUEST_IDS "guest-ids"

/* The session in @directory as the guest id registry names it. */
static const char *
registry_name (SandboxBubblewrapStore *self,
               const char             *directory)
{
  return directory + strlen (self->root) + 1;
}

gboolean
sandbox_bubblewrap_store_read_guest_ids (const char             *directory,
                                         SandboxBubblewrapGuest *guest)
{
  g_autofree char *path = g_build_filename (directory, SESSION_GUEST_IDS, NULL);
  g_autofree char *contents = NULL;
  g_auto(GStrv) fields = NULL;
  guint64 uid, gid;

  if (!g_file_get_contents (path, &contents, NULL, NULL) || !g_str_has_suffix (contents, "\n"))
    return FALSE;
  contents[strlen (contents) - 1] = '\0';
  fields = g_strsplit (contents, ":", -1);
  if (g_strv_length (fields) != 2 ||
      !g_ascii_string_to_unsigned (fields[0], 10, 1, G_MAXUINT32 - 1, &uid, NULL) ||
      !g_ascii_string_to_unsigned (fields[1], 10, 1, G_MAXUINT32 - 1, &gid, NULL))
    return FALSE;
  *guest = (SandboxBubblewrapGuest) { (uid_t) uid, (gid_t) gid, TRUE };
  return TRUE;
}

/* Gives back the ids the session in @directory holds, once nothing of the
 * session runs any more. */
void
sandbox_bubblewrap_store_release_guest_ids (SandboxBubblewrapStore       *self,
                                            const char                   *directory,
                                            const SandboxBubblewrapGuest *guest)
{
  g_auto(SandboxBubblewrapFd) root_fd = -1;

  if (!self->per_session || !guest->switched)
    return;
  root_fd = open (self->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd >= 0)
    sandbox_bubblewrap_guest_ids_release (root_fd, guest, registry_name (self, directory));
}

/* Claims new ids for the leased session and records them there. */
static gboolean
claim_guest_ids (SandboxBubblewrapStore  *self,
                 SandboxBubblewrapLease  *lease,
                 int                      root_fd,
                 GError                 **error)
{
  const char *name = registry_name (self, lease->directory);
  g_autofree char *path = g_build_filename (lease->directory, SESSION_GUEST_IDS, NULL);
  g_autofree char *text = NULL;
  SandboxBubblewrapGuest claimed;

  if (!sandbox_bubblewrap_guest_ids_claim (root_fd, &self->range, name, &claimed, error))
    return FALSE;
  text = g_strdup_printf ("%u:%u\n", (guint) claimed.uid, (guint) claimed.gid);
  if (!sandbox_bubblewrap_store_write_atomically (path, text, self->durable, error))
    {
      sandbox_bubblewrap_guest_ids_release (root_fd, &claimed, name);
      return FALSE;
    }
  lease->guest = claimed;
  return TRUE;
}

/* Who the leased session's guest is: the backend's one guest, or (a root
 * host's default) ids of the session's own: claimed for a new session;
 * on resume the ones it recorded, while the registry still gives them to
 * it and the range holds them. A session from before, one whose range
 * changed or whose state directory was copied gets new ones; its
 * workspace is given to them next (give_workspace_to_guest() in -sessions.c). */
gboolean
sandbox_bubblewrap_store_assign_guest (SandboxBubblewrapStore  *self,
                                       SandboxBubblewrapLease  *lease,
                                       GError                 **error)
{
  g_auto(SandboxBubblewrapFd) root_fd = -1;
  const char *name = registry_name (self, lease->directory);
  SandboxBubblewrapGuest recorded;

  if (!self->per_session)
    {
      lease->guest = (SandboxBubblewrapGuest) { self->guest.uid, self->guest.gid, self->give };
      return TRUE;
    }
  root_fd = open (self->root, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0)
    return set_errno_error (error, errno, "Could not open", self->root);
  if (!lease->created && sandbox_bubblewrap_store_read_guest_ids (lease->directory, &recorded))
    {
      if (sandbox_bubblewrap_guest_range_holds (&self->range, &recorded) &&
          sandbox_bubblewrap_guest_ids_is_held (root_fd, &recorded, name))
        {
          lease->guest = recorded;
          return TRUE;
        }
      sandbox_bubblewrap_guest_ids_release (root_fd, &recorded, name);
    }
  return claim_guest_ids (self, lease, root_fd, error);
}

/* Who owns what the host makes in the leased session's workspace: its
 * guest, or nobody to give it to (the guest is the host). */
const SandboxWorkspaceOwner *
sandbox_bubblewrap_lease_owner (SandboxBubblewrapLease *lease,
                                SandboxWorkspaceOwner  *owner)
{
  if (!lease->guest.switched)
    return NULL;
  *owner = (SandboxWorkspaceOwner) { lease->guest.uid, lease->guest.gid };
  return owner;
}

/*
 * A layered session's lower layer is its template's data. Its keeper
 * mounts it idmapped, the host's root shown as the session's guest
 * (sandbox_bubblewrap_guest_view_expose_lower()): overlayfs in the guest's
 * user namespace refuses to copy up anything whose owner is not mapped
 * there (EOVERFLOW, the fix of CVE-2023-0386), and every session's guest
 * is another uid. A root host's templates are root's; one an older
 * version gave to its one guest uid is taken back, whole, the first time
 * a session needs it. An unprivileged host's guests are the host: nothing
 * to do.
 */
gboolean
sandbox_bubblewrap_store_give_template_to_host (SandboxBubblewrapStore  *self,
                                                const char              *template_key,
                                                GError                 **error)
{
  g_autofree char *template_dir = g_build_filename (self->templates, template_key, NULL);
  g_auto(SandboxBubblewrapFd) template_fd = -1;
  SandboxWorkspaceOwner host = { getuid (), getgid () };
  struct stat st;

  if (!self->give)
    return TRUE;
  template_fd = open_directory (template_dir, error);
  if (template_fd < 0)
    return FALSE;
  if (fstatat (template_fd, "data", &st, AT_SYMLINK_NOFOLLOW) < 0)
    return set_errno_error (error, errno, "Could not examine", template_dir);
  if (st.st_uid == host.uid && st.st_gid == host.gid)
    return TRUE;
  return sandbox_workspace_give_tree_at (template_fd, "data", &host, error);
}
