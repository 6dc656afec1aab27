/* sandbox-bubblewrap-guest-ids.c — a host uid and gid per session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * On a root host every session's guest is a host uid and gid of its own,
 * from a subordinate range (SandboxBubblewrapBackend:guest-id-range), so
 * that nothing the kernel keys by uid is shared between sessions: signals,
 * ptrace and /proc access, RLIMIT_NPROC, the peer credentials a listener
 * sees, files one session's guest leaves where another's could reach them.
 *
 * Which session holds which ids is kept in the state directory, in
 * `guest-ids/`: one symbolic link per uid in use, named by the uid, whose
 * target names the session (`DIGEST/sessions/ID`, relative to the state
 * directory). symlinkat() fails on an existing name, so a claim is atomic;
 * every claim and release also holds an flock() on the directory, so that
 * a claim whose session directory is gone (a host that died between
 * removing a session and releasing its ids) can be taken over without
 * racing another taker or a release. The session also records its ids
 * itself (see sandbox-bubblewrap-store-guests.c), so a resume keeps them.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sandbox-bubblewrap-guest-ids-private.h"

#define REGISTRY "guest-ids"

/* The largest id a range may reach: (uid_t) -1 means "no change". */
#define GUEST_ID_LAST ((guint64) G_MAXUINT32 - 1)

static gboolean
set_range_error (GError     **error,
                 const char  *text,
                 const char  *why)
{
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "guest-id-range “%s” %s", text, why);
  return FALSE;
}

/* @name's first range in an /etc/subuid-style file ("NAME:START:COUNT"
 * lines), or FALSE. */
static gboolean
read_subordinate_range (const char *path,
                        const char *name,
                        guint64    *start,
                        guint64    *count)
{
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;

  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return FALSE;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    {
      g_auto(GStrv) fields = g_strsplit (lines[i], ":", -1);

      if (g_strv_length (fields) == 3 && strcmp (fields[0], name) == 0 &&
          g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXUINT32, start, NULL) &&
          g_ascii_string_to_unsigned (fields[2], 10, 0, G_MAXUINT32, count, NULL))
        return TRUE;
    }
  return FALSE;
}

static gboolean
check_range (const char *text,
             guint64     start,
             guint64     count,
             GError    **error)
{
  if (count == 0)
    return set_range_error (error, text, "holds no id");
  if (start == 0)
    return set_range_error (error, text, "must not hold 0: guests never run as host root");
  if (start + count - 1 > GUEST_ID_LAST)
    return set_range_error (error, text, "reaches past 4294967294");
  /* "nobody" belongs to other services on most systems. */
  if (start <= 65534 && start + count > 65534)
    return set_range_error (error, text, "must not hold 65534, the overflow id (“nobody”)");
  return TRUE;
}

/**
 * sandbox_bubblewrap_guest_range_parse:
 * @text: `START:COUNT`, or the name of an entry of @subuid_path and
 *   @subgid_path (whose first ranges are used, as long as the shorter)
 * @subuid_path: `/etc/subuid` (another file in tests)
 * @subgid_path: `/etc/subgid`
 * @range: (out): the range
 * @error: return location for a #GError
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_INVALID
 */
gboolean
sandbox_bubblewrap_guest_range_parse (const char                   *text,
                                      const char                   *subuid_path,
                                      const char                   *subgid_path,
                                      SandboxBubblewrapGuestRange  *range,
                                      GError                      **error)
{
  g_auto(GStrv) fields = g_strsplit (text, ":", -1);
  guint64 uid_start, gid_start, uid_count, gid_count;

  if (g_strv_length (fields) == 2)
    {
      if (!g_ascii_string_to_unsigned (fields[0], 10, 0, G_MAXUINT32, &uid_start, NULL) ||
          !g_ascii_string_to_unsigned (fields[1], 10, 0, G_MAXUINT32, &uid_count, NULL))
        return set_range_error (error, text, "is not START:COUNT in decimal");
      gid_start = uid_start;
      gid_count = uid_count;
    }
  else if (g_strv_length (fields) == 1 && text[0] != '\0')
    {
      if (!read_subordinate_range (subuid_path, text, &uid_start, &uid_count) ||
          !read_subordinate_range (subgid_path, text, &gid_start, &gid_count))
        {
          g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                       "guest-id-range “%s” names no entry of both %s and %s "
                       "(NAME:START:COUNT); give START:COUNT instead",
                       text, subuid_path, subgid_path);
          return FALSE;
        }
    }
  else
    return set_range_error (error, text, "is neither START:COUNT nor a name in /etc/subuid");

  uid_count = MIN (uid_count, gid_count);
  if (!check_range (text, uid_start, uid_count, error) ||
      !check_range (text, gid_start, uid_count, error))
    return FALSE;
  *range = (SandboxBubblewrapGuestRange) { (uid_t) uid_start, (gid_t) gid_start,
                                           (guint32) uid_count };
  return TRUE;
}

/**
 * sandbox_bubblewrap_guest_range_holds:
 * @range: a range
 * @guest: a session's guest ids
 *
 * Returns: whether @guest is a pair @range gives: its uid in the range
 *   and its gid as far from the gid start
 */
gboolean
sandbox_bubblewrap_guest_range_holds (const SandboxBubblewrapGuestRange *range,
                                      const SandboxBubblewrapGuest      *guest)
{
  return guest->switched &&
         guest->uid >= range->uid_start && guest->uid - range->uid_start < range->count &&
         guest->gid == range->gid_start + (guest->uid - range->uid_start);
}

/* The registry, made if missing, and locked for one claim or release;
 * -1 with errno set on failure. */
static int
lock_registry (int root_fd)
{
  int fd;

  if (mkdirat (root_fd, REGISTRY, 0700) < 0 && errno != EEXIST)
    return -1;
  fd = openat (root_fd, REGISTRY, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd >= 0 && TEMP_FAILURE_RETRY (flock (fd, LOCK_EX)) < 0)
    {
      int saved_errno = errno;

      close (fd);
      errno = saved_errno;
      return -1;
    }
  return fd;
}

/* Whether the claim @name in @registry_fd names a session whose directory
 * is gone. */
static gboolean
claim_is_stale (int         root_fd,
                int         registry_fd,
                const char *name)
{
  char target[512];
  ssize_t length = readlinkat (registry_fd, name, target, sizeof target - 1);

  if (length <= 0)
    return FALSE;
  target[length] = '\0';
  if (target[0] == '/' || strstr (target, "..") != NULL)
    return FALSE;   /* not one of ours: left alone */
  return faccessat (root_fd, target, F_OK, AT_SYMLINK_NOFOLLOW) < 0 && errno == ENOENT;
}

/* Claims @uid for @session, taking over a stale claim; FALSE with errno
 * EEXIST when another session holds it. */
static gboolean
claim_one (int         root_fd,
           int         registry_fd,
           uid_t       uid,
           const char *session)
{
  char name[16];

  g_snprintf (name, sizeof name, "%u", (guint) uid);
  if (symlinkat (session, registry_fd, name) == 0)
    return TRUE;
  if (errno != EEXIST || !claim_is_stale (root_fd, registry_fd, name))
    return FALSE;
  g_debug ("Taking over guest uid %s from a session that is gone", name);
  return unlinkat (registry_fd, name, 0) == 0 && symlinkat (session, registry_fd, name) == 0;
}

/**
 * sandbox_bubblewrap_guest_ids_claim:
 * @root_fd: the state directory
 * @range: the ids to choose from
 * @session: the session, as `DIGEST/sessions/ID` below @root_fd
 * @guest: (out): the ids claimed
 * @error: return location for a #GError
 *
 * Claims a uid and gid of @range that no other session of the state
 * directory holds, starting at a random one (two state directories given
 * one range by mistake then rarely meet). Durable: the registry is synced.
 *
 * Returns: %TRUE, or %FALSE with %SANDBOX_ERROR_UNAVAILABLE when every id
 *   is taken, or a #GIOErrorEnum error
 */
gboolean
sandbox_bubblewrap_guest_ids_claim (int                                root_fd,
                                    const SandboxBubblewrapGuestRange *range,
                                    const char                        *session,
                                    SandboxBubblewrapGuest            *guest,
                                    GError                           **error)
{
  g_auto(SandboxBubblewrapFd) registry_fd = lock_registry (root_fd);
  guint32 first = g_random_int_range (0, (gint32) MIN (range->count, (guint32) G_MAXINT32));

  if (registry_fd < 0)
    {
      int saved_errno = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                   "Could not open the guest id registry: %s", g_strerror (saved_errno));
      return FALSE;
    }
  for (guint32 i = 0; i < range->count; i++)
    {
      guint32 offset = (guint32) (((guint64) first + i) % range->count);

      if (claim_one (root_fd, registry_fd, range->uid_start + offset, session))
        {
          *guest = (SandboxBubblewrapGuest) { range->uid_start + offset,
                                              range->gid_start + offset, TRUE };
          fsync (registry_fd);
          return TRUE;
        }
      if (errno != EEXIST)
        {
          int saved_errno = errno;

          g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved_errno),
                       "Could not claim a guest uid: %s", g_strerror (saved_errno));
          return FALSE;
        }
    }
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "Every one of the %u ids of guest-id-range (from %u) belongs to a session; "
               "delete sessions or give a larger range", range->count, (guint) range->uid_start);
  return FALSE;
}

/* Whether @registry_fd's claim of @guest names @session. */
static gboolean
claim_names (int                           registry_fd,
             const SandboxBubblewrapGuest *guest,
             const char                   *session)
{
  char name[16];
  char target[512];
  ssize_t length;

  g_snprintf (name, sizeof name, "%u", (guint) guest->uid);
  length = readlinkat (registry_fd, name, target, sizeof target - 1);
  if (length <= 0)
    return FALSE;
  target[length] = '\0';
  return strcmp (target, session) == 0;
}

/**
 * sandbox_bubblewrap_guest_ids_is_held:
 * @root_fd: the state directory
 * @guest: ids a session recorded
 * @session: the session, as for sandbox_bubblewrap_guest_ids_claim()
 *
 * Returns: whether the registry still gives @guest to @session
 */
gboolean
sandbox_bubblewrap_guest_ids_is_held (int                           root_fd,
                                      const SandboxBubblewrapGuest *guest,
                                      const char                   *session)
{
  g_auto(SandboxBubblewrapFd) registry_fd = lock_registry (root_fd);

  return registry_fd >= 0 && claim_names (registry_fd, guest, session);
}

/**
 * sandbox_bubblewrap_guest_ids_release:
 * @root_fd: the state directory
 * @guest: ids @session held
 * @session: the session, as for sandbox_bubblewrap_guest_ids_claim()
 *
 * Gives @guest back, if @session still holds it: once no process of the
 * session is left. A claim that cannot be removed stays until it is taken
 * over as stale.
 */
void
sandbox_bubblewrap_guest_ids_release (int                           root_fd,
                                      const SandboxBubblewrapGuest *guest,
                                      const char                   *session)
{
  g_auto(SandboxBubblewrapFd) registry_fd = lock_registry (root_fd);
  char name[16];

  if (registry_fd < 0 || !claim_names (registry_fd, guest, session))
    return;
  g_snprintf (name, sizeof name, "%u", (guint) guest->uid);
  if (unlinkat (registry_fd, name, 0) < 0)
    g_debug ("Could not release guest uid %s: %s", name, g_strerror (errno));
}
