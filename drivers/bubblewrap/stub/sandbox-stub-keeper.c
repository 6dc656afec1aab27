/* sandbox-stub-keeper.c — the stub's keeper mode: one overlay per session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * `sandbox-stub keep-overlay=NAME lower=RELATIVE-DIR layers=DIR [runtime=RELATIVE-DIR]`,
 * started by the
 * host (through the launcher, as the guest's ids) once per live layered
 * session, with a socket to the host at 0, 1 and 2 (for the answer,
 * below). DIR is the host
 * path of the session's layers/ directory, which holds upper/, work/NAME
 * (this keeper's own empty overlayfs work directory), mount/ and lock;
 * RELATIVE-DIR the template's data (the lower layer) relative to it.
 *
 * It makes itself a user namespace mapping only its own uid and gid and a
 * mount namespace owned by it, mounts the session's overlay on
 * layers/mount there (nosuid, nodev, SANDBOX_STUB_OVERLAY_OPTIONS), takes
 * a POSIX read lock on layers/lock (lease recovery finds a dead owner's
 * keeper by it, as it finds sandboxes), drops every capability and sends
 * the host an O_PATH descriptor on the overlay's root: "K" with the
 * descriptor, or "E" and a message. Then it closes its descriptors and
 * waits to be killed.
 *
 * Every command of the session is started in these two namespaces (the
 * launcher's setns() on this process), so its bwrap binds /workspace from
 * this one mount and all commands and the host's file calls share one
 * overlay: what one creates, the others see at once, as with a copied
 * workspace. overlayfs keeps this process's credentials of the mount as
 * its mounter's: its copy-ups and whiteouts act as the guest's ids with
 * capabilities that hold only over what those ids own.
 *
 * The layers are named by path, resolved in the new mount namespace (an
 * overlay's layers and mount point must be mounts of the mounter's
 * namespace, which descriptors the host opened are not), relative to
 * layers/, the keeper's working directory: the guest's mountinfo then
 * shows no host path in the overlay's options, and the options hold no
 * part of the state directory's path (whose ',' or ':' they would split).
 * lower= is the template's data relative to layers/
 * (`../../../templates/KEY/data`), or the lower layers of a session
 * forked from a snapshot, top first, joined by ':' (each snapshot's data,
 * then the template's); each element is checked as one path.
 *
 * With runtime=, the session's runtime is writable per session: a second
 * overlay, of the runtime's tree (under the snapshots' changes to it, the
 * same ':' list) with layers/runtime-upper as its upper layer, is mounted
 * on layers/runtime-mount in the same namespaces, with its own work
 * directory work/NAME-runtime, so that commands bind /usr and the rest
 * from there (sandbox-bubblewrap-args.c) and what they install persists
 * in the session's layers like its workspace's changes.
 */

#ifndef _GNU_SOURCE
# define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "sandbox-stub-descriptor.h"
#include "sandbox-stub-keeper.h"

#define ANSWER_FD 1

/* The longest layer path taken: the options must fit in a page. */
#define MAX_LAYER_PATH STUB_KEEPER_MAX_LOWER

void
stub_helper_fail (const char *what)
{
  char message[256];
  int length = snprintf (message, sizeof message, "E%s: %s", what, strerror (errno));

  if (length > 0)
    (void) ! send (ANSWER_FD, message, (size_t) length < sizeof message ? (size_t) length
                                                                         : sizeof message - 1,
                   MSG_NOSIGNAL);
  _exit (1);
}

static int
write_file (const char *path,
            const char *contents)
{
  int fd = open (path, O_WRONLY | O_CLOEXEC);
  ssize_t length = (ssize_t) strlen (contents);
  ssize_t written;

  if (fd < 0)
    return -1;
  written = write (fd, contents, (size_t) length);
  close (fd);
  return written == length ? 0 : -1;
}

/* One name in layers/work/: no slash, no comma, not "." or "..". */
static int
is_work_name (const char *name)
{
  return name[0] != '\0' && strchr (name, '/') == NULL && strchr (name, ',') == NULL &&
         strcmp (name, ".") != 0 && strcmp (name, "..") != 0 && strlen (name) <= 64;
}

/* The value of NAME=VALUE in @argument, or NULL. */
static const char *
option_value (const char *argument,
              const char *name)
{
  size_t length = strlen (name);

  if (argument == NULL || strncmp (argument, name, length) != 0 || argument[length] != '=' ||
      strlen (argument + length + 1) > MAX_LAYER_PATH)
    return NULL;
  return argument + length + 1;
}

/* A relative path the mount options take as it is. */
static int
is_option_path (const char *path)
{
  return path[0] != '\0' && path[0] != '/' && strpbrk (path, ",:\\") == NULL;
}

/* Relative paths joined by ':', each one is_option_path(). */
static int
is_option_path_list (const char *list)
{
  char element[MAX_LAYER_PATH + 1];
  const char *start = list;

  for (;;)
    {
      const char *end = strchr (start, ':');
      size_t length = end != NULL ? (size_t) (end - start) : strlen (start);

      if (length > MAX_LAYER_PATH)
        return 0;
      memcpy (element, start, length);
      element[length] = '\0';
      if (!is_option_path (element))
        return 0;
      if (end == NULL)
        return 1;
      start = end + 1;
    }
}

int
stub_enter_own_user_namespace (int flags)
{
  char uid_map[32], gid_map[32];

  snprintf (uid_map, sizeof uid_map, "%u %u 1\n", (unsigned) getuid (), (unsigned) getuid ());
  snprintf (gid_map, sizeof gid_map, "%u %u 1\n", (unsigned) getgid (), (unsigned) getgid ());
  /* A non-dumpable process's /proc/self files are root's: dumpable only
   * while it writes its maps (no other process of its ids can reach it
   * meanwhile: it is alone in its pid namespace). */
  if (prctl (PR_SET_DUMPABLE, 1, 0, 0, 0) < 0 ||
      unshare (CLONE_NEWUSER | flags) < 0 ||
      write_file ("/proc/self/setgroups", "deny") < 0 ||
      write_file ("/proc/self/gid_map", gid_map) < 0 ||
      write_file ("/proc/self/uid_map", uid_map) < 0 ||
      prctl (PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
    return -1;
  return 0;
}

/* A user namespace that maps this process's ids, and a mount namespace
 * it owns. */
static int
enter_own_namespaces (void)
{
  if (stub_enter_own_user_namespace (CLONE_NEWNS) < 0)
    return -1;
  /* Nothing mounted here reaches another namespace. */
  return mount (NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

/* In layers/, the working directory: an overlay of @lower with @upper as
 * its upper layer on @target. */
static int
mount_overlay (const char *lower,
               const char *upper,
               const char *work_name,
               const char *work_suffix,
               const char *target)
{
  char options[MAX_LAYER_PATH + 200 + sizeof SANDBOX_STUB_OVERLAY_OPTIONS];
  int length;

  length = snprintf (options, sizeof options,
                     "lowerdir=%s,upperdir=%s,workdir=work/%s%s,%s",
                     lower, upper, work_name, work_suffix, SANDBOX_STUB_OVERLAY_OPTIONS);
  if (length < 0 || (size_t) length >= sizeof options)
    {
      errno = ENAMETOOLONG;
      return -1;
    }
  return mount ("overlay", target, "overlay", MS_NOSUID | MS_NODEV, options);
}

/* A read lock on layers/lock for as long as this process lives. */
static int
lock_session (void)
{
  struct flock lock = { .l_type = F_RDLCK, .l_whence = SEEK_SET };
  int fd = open ("lock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

  if (fd < 0)
    return -1;
  return fcntl (fd, F_SETLK, &lock);   /* the descriptor stays open */
}

static int
send_root (int root_fd)
{
  return stub_send_descriptor (ANSWER_FD, "K", 1, root_fd);
}

void
stub_keep_overlay (int    argc,
                   char **argv)
{
  const char *work_name = argv[1] + strlen ("keep-overlay=");
  int known = argc == 4 || argc == 5;
  const char *lower = known ? option_value (argv[2], "lower") : NULL;
  const char *layers = known ? option_value (argv[3], "layers") : NULL;
  const char *runtime = argc == 5 ? option_value (argv[4], "runtime") : NULL;
  int root_fd;

  if (lower == NULL || layers == NULL || !is_option_path_list (lower) || layers[0] != '/' ||
      !is_work_name (work_name) ||
      (argc == 5 && (runtime == NULL || !is_option_path_list (runtime))))
    {
      errno = EINVAL;
      stub_helper_fail ("usage: sandbox-stub keep-overlay=NAME lower=RELATIVE-DIR layers=DIR "
                        "[runtime=RELATIVE-DIR]");
    }
  /* Before the new mount namespace, which takes the working directory
   * along (as its own mount's). */
  if (chdir (layers) < 0)
    stub_helper_fail ("enter its layers");
  if (enter_own_namespaces () < 0)
    stub_helper_fail ("make its namespaces");
  if (mount_overlay (lower, "upper", work_name, "", "mount") < 0)
    stub_helper_fail ("mount the overlay");
  if (runtime != NULL &&
      mount_overlay (runtime, STUB_KEEPER_RUNTIME_UPPER, work_name,
                     STUB_KEEPER_RUNTIME_WORK_SUFFIX, STUB_KEEPER_RUNTIME_MOUNT) < 0)
    stub_helper_fail ("mount the runtime's overlay");
  if (lock_session () < 0)
    stub_helper_fail ("lock the session");
  root_fd = open ("mount", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (root_fd < 0)
    stub_helper_fail ("open the overlay");
  if (chdir ("/") < 0)
    stub_helper_fail ("leave its layers");
  stub_drop_capabilities ();
  if (send_root (root_fd) < 0)
    stub_helper_fail ("answer");
  close (root_fd);
  close (0);
  close (1);
  close (2);
  /* Until SIGKILL: the host's stop, or its death (the parent-death
   * signal the launcher armed). */
  for (;;)
    pause ();
}
