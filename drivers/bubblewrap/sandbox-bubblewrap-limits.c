/* sandbox-bubblewrap-limits.c — resource limits of guest commands
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>

#include "sandbox-bubblewrap-limits-private.h"

/*
 * Limits are opt-in per backend. rlimits (file size, open files, address
 * space, core dumps off) are set by the launcher in bwrap's process just
 * before it executes bwrap, so they bind bwrap and everything it starts;
 * the guest has no CAP_SYS_RESOURCE in the initial user namespace and
 * cannot raise them.
 *
 * Memory, process and CPU limits need a cgroup holding a command's whole
 * tree. Each command gets its own, made before it starts and joined by
 * bwrap's process before exec (the launcher writes "0" to cgroup.procs),
 * removed after the tree is gone. That is only possible where the host
 * delegates a cgroup to us:
 *
 * - cgroup v2 (/sys/fs/cgroup a cgroup2 mount): our own cgroup, when its
 *   cgroup.subtree_control already enables the controllers we need and we
 *   can create children there;
 * - cgroup v1, as root: our own cgroup in the memory, pids (and cpu)
 *   hierarchies.
 *
 * Anywhere else a cgroup limit cannot be enforced, and a backend asked for
 * one fails to construct with SANDBOX_ERROR_UNAVAILABLE naming the limit and
 * why: a limit is never accepted and then silently not in force (issue 14).
 */

enum {
  CONTROLLER_MEMORY,
  CONTROLLER_PIDS,
  CONTROLLER_CPU,
  N_CONTROLLERS
};

static const char * const controller_names[N_CONTROLLERS] = { "memory", "pids", "cpu" };

/* The backend property each controller enforces, for messages. */
static const char * const controller_limits[N_CONTROLLERS] = {
  "memory-limit", "max-processes", "cpu-percent"
};

struct _SandboxBubblewrapCgroupRoot
{
  gboolean v2;
  /* v2: parents[0] only; v1: one parent directory per controller. */
  char *parents[N_CONTROLLERS];
};

struct _SandboxBubblewrapCgroup
{
  SandboxBubblewrapCgroupRoot *root;
  char *directories[N_CONTROLLERS];   /* v2: directories[0] only */
  GArray *procs_fds;
};

/**
 * sandbox_bubblewrap_limits_has_rlimits:
 * @limits: limits
 *
 * Returns: whether the launcher sets rlimits for commands
 */
gboolean
sandbox_bubblewrap_limits_has_rlimits (const SandboxBubblewrapLimits *limits)
{
  return limits->max_file_size > 0 || limits->max_open_files > 0 ||
         limits->max_address_space > 0;
}

/*
 * tmp-size bounds what one command can hold in memory-backed files. Its
 * guest writes to two tmpfs, /tmp and /dev/shm (the root, /dev and /etc
 * are read-only once set up), and a tmpfs keeps its pages until it is
 * unmounted — when the sandbox ends, not when the writer is killed — so
 * the two share the budget: /dev/shm gets a quarter of it, at most
 * 64 MiB (Docker's default /dev/shm), and /tmp the rest. Each is whole
 * pages, rounded down, since the kernel rounds a tmpfs size up.
 */
#define SHM_SHARE_MAX (G_GUINT64_CONSTANT (64) * 1024 * 1024)

static guint64
page_size (void)
{
  return (guint64) sysconf (_SC_PAGESIZE);
}

/**
 * sandbox_bubblewrap_limits_check_tmp_size:
 * @tmp_size: a tmp-size
 * @error: return location for a #GError
 *
 * A tmp-size must leave each of /tmp and /dev/shm a page at least: a
 * smaller one could only be kept by giving a tmpfs more than it says.
 *
 * Returns: %TRUE if @tmp_size is 0 or at least two pages, else %FALSE with
 *   %SANDBOX_ERROR_INVALID
 */
gboolean
sandbox_bubblewrap_limits_check_tmp_size (guint64   tmp_size,
                                          GError  **error)
{
  if (tmp_size == 0 || tmp_size >= 2 * page_size ())
    return TRUE;
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
               "tmp-size must be 0 or at least %" G_GUINT64_FORMAT " bytes "
               "(a page each for /tmp and /dev/shm), not %" G_GUINT64_FORMAT,
               2 * page_size (), tmp_size);
  return FALSE;
}

/**
 * sandbox_bubblewrap_limits_split_tmp_size:
 * @tmp_size: a tmp-size that passed sandbox_bubblewrap_limits_check_tmp_size()
 * @tmp: (out): the size of /tmp, in bytes (0: not limited)
 * @shm: (out): the size of /dev/shm, in bytes (0: not limited)
 *
 * Splits a command's budget of memory-backed files between its two tmpfs,
 * so that together they never hold more than @tmp_size.
 */
void
sandbox_bubblewrap_limits_split_tmp_size (guint64  tmp_size,
                                          guint64 *tmp,
                                          guint64 *shm)
{
  guint64 page = page_size ();

  if (tmp_size == 0)
    {
      *tmp = *shm = 0;
      return;
    }
  *shm = MAX (MIN (tmp_size / 4, SHM_SHARE_MAX) / page * page, page);
  *tmp = (tmp_size - *shm) / page * page;
}

/**
 * sandbox_bubblewrap_limits_wants_cgroup:
 * @limits: limits
 *
 * Returns: whether @limits has a limit only a cgroup enforces
 */
gboolean
sandbox_bubblewrap_limits_wants_cgroup (const SandboxBubblewrapLimits *limits)
{
  return limits->memory_limit > 0 || limits->max_processes > 0 || limits->cpu_percent > 0;
}

static gboolean
controller_wanted (const SandboxBubblewrapLimits *limits,
                   guint                          controller)
{
  switch (controller)
    {
    case CONTROLLER_MEMORY:
      return limits->memory_limit > 0;
    case CONTROLLER_PIDS:
      return limits->max_processes > 0;
    case CONTROLLER_CPU:
      return limits->cpu_percent > 0;
    default:
      g_assert_not_reached ();
    }
}

static void
cgroup_root_clear (SandboxBubblewrapCgroupRoot *root)
{
  for (guint i = 0; i < N_CONTROLLERS; i++)
    g_free (root->parents[i]);
}

/* Whether we may create (and remove) a child of @parent; errno if not. */
static gboolean
can_create_child (const char *parent)
{
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *probe = g_strdup_printf ("%s/sandbox-probe-%s", parent, uuid);

  if (mkdir (probe, 0700) < 0)
    return FALSE;
  rmdir (probe);
  return TRUE;
}

static gboolean
is_cgroup2 (const char *path)
{
  struct statfs fs;

  return statfs (path, &fs) == 0 && fs.f_type == CGROUP2_SUPER_MAGIC;
}

/* Refuses the limit of @controller: it cannot be enforced, and why. */
static gboolean
refuse_limit (guint        controller,
              GError     **error,
              const char  *why_format,
              ...) G_GNUC_PRINTF (3, 4);

static gboolean
refuse_limit (guint        controller,
              GError     **error,
              const char  *why_format,
              ...)
{
  g_autofree char *why = NULL;
  va_list ap;

  va_start (ap, why_format);
  why = g_strdup_vprintf (why_format, ap);
  va_end (ap);
  g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
               "The resource limit %s cannot be enforced here: %s",
               controller_limits[controller], why);
  return FALSE;
}

static gboolean
discover_v2 (SandboxBubblewrapCgroupRoot   *root,
             const SandboxBubblewrapLimits *limits,
             const char                    *own_path,
             GError                       **error)
{
  g_autofree char *parent = g_build_filename ("/sys/fs/cgroup", own_path, NULL);
  g_autofree char *control_path = g_build_filename (parent, "cgroup.subtree_control", NULL);
  g_autofree char *control = NULL;
  g_auto(GStrv) enabled = NULL;
  guint first_wanted = N_CONTROLLERS;

  if (!g_file_get_contents (control_path, &control, NULL, NULL))
    control = g_strdup ("");
  enabled = g_strsplit_set (g_strstrip (control), " ", -1);
  for (guint i = 0; i < N_CONTROLLERS; i++)
    if (controller_wanted (limits, i))
      {
        if (!g_strv_contains ((const char * const *) enabled, controller_names[i]))
          return refuse_limit (i, error, "the cgroup v2 controller “%s” is not enabled in %s "
                               "(the host delegates no cgroup with it to this process)",
                               controller_names[i], control_path);
        first_wanted = MIN (first_wanted, i);
      }
  if (!can_create_child (parent))
    {
      int saved_errno = errno;

      return refuse_limit (first_wanted, error, "cannot create a cgroup in %s: %s",
                           parent, g_strerror (saved_errno));
    }
  root->v2 = TRUE;
  root->parents[0] = g_steal_pointer (&parent);
  return TRUE;
}

static gboolean
discover_v1 (SandboxBubblewrapCgroupRoot   *root,
             const SandboxBubblewrapLimits *limits,
             char                         **lines,
             GError                       **error)
{
  for (guint i = 0; i < N_CONTROLLERS; i++)
    {
      if (!controller_wanted (limits, i))
        continue;
      /* Only root may create cgroups in a v1 hierarchy: nothing is
       * delegated to other users. */
      if (geteuid () != 0)
        return refuse_limit (i, error, "the host has cgroup v1, where only root can create "
                             "cgroups, and this process runs as uid %u", (guint) geteuid ());
      for (guint l = 0; lines[l] != NULL && root->parents[i] == NULL; l++)
        {
          /* hierarchy-id:controller[,controller…]:path */
          g_auto(GStrv) fields = g_strsplit (lines[l], ":", 3);
          g_auto(GStrv) controllers = NULL;
          g_autofree char *mount = NULL;
          g_autofree char *parent = NULL;

          if (g_strv_length (fields) != 3)
            continue;
          controllers = g_strsplit (fields[1], ",", -1);
          if (!g_strv_contains ((const char * const *) controllers, controller_names[i]))
            continue;
          mount = g_build_filename ("/sys/fs/cgroup", fields[1], NULL);
          parent = g_build_filename (mount, fields[2], NULL);
          if (!g_file_test (parent, G_FILE_TEST_IS_DIR))
            return refuse_limit (i, error, "the cgroup v1 hierarchy of “%s” is not mounted at %s",
                                 controller_names[i], mount);
          if (!can_create_child (parent))
            {
              int saved_errno = errno;

              return refuse_limit (i, error, "cannot create a cgroup in %s: %s",
                                   parent, g_strerror (saved_errno));
            }
          root->parents[i] = g_steal_pointer (&parent);
        }
      if (root->parents[i] == NULL)
        return refuse_limit (i, error, "the host has no cgroup v1 hierarchy with the “%s” "
                             "controller", controller_names[i]);
    }
  return TRUE;
}

/**
 * sandbox_bubblewrap_cgroup_root_discover:
 * @limits: the limits to enforce
 * @root_out: (out) (transfer full) (optional): where commands' cgroups go,
 *   or %NULL when @limits has no cgroup limit
 * @error: return location for a #GError
 *
 * Looks for a cgroup delegated to this process that can enforce every
 * cgroup limit of @limits. A limit that cannot be enforced is never
 * accepted silently: the first one is refused, naming it and why.
 *
 * Returns: %TRUE when every cgroup limit of @limits (if any) is in force,
 *   or %FALSE with %SANDBOX_ERROR_UNAVAILABLE
 */
gboolean
sandbox_bubblewrap_cgroup_root_discover (const SandboxBubblewrapLimits  *limits,
                                         SandboxBubblewrapCgroupRoot   **root_out,
                                         GError                        **error)
{
  g_autofree char *contents = NULL;
  g_autoptr(GError) local_error = NULL;
  g_auto(GStrv) lines = NULL;
  SandboxBubblewrapCgroupRoot *root;
  gboolean found = FALSE;

  if (root_out != NULL)
    *root_out = NULL;
  if (!sandbox_bubblewrap_limits_wants_cgroup (limits))
    return TRUE;
  if (!g_file_get_contents ("/proc/self/cgroup", &contents, NULL, &local_error))
    {
      for (guint i = 0; i < N_CONTROLLERS; i++)
        if (controller_wanted (limits, i))
          return refuse_limit (i, error, "%s", local_error->message);
      g_assert_not_reached ();
    }
  lines = g_strsplit (contents, "\n", -1);
  root = g_atomic_rc_box_new0 (SandboxBubblewrapCgroupRoot);

  if (is_cgroup2 ("/sys/fs/cgroup"))
    {
      for (guint l = 0; lines[l] != NULL && !found; l++)
        if (g_str_has_prefix (lines[l], "0::"))
          {
            found = discover_v2 (root, limits, lines[l] + 3, &local_error);
            break;
          }
      if (!found && local_error == NULL)
        for (guint i = 0; i < N_CONTROLLERS && local_error == NULL; i++)
          if (controller_wanted (limits, i))
            refuse_limit (i, &local_error, "this process has no cgroup v2 in /proc/self/cgroup");
    }
  else
    found = discover_v1 (root, limits, lines, &local_error);

  if (!found)
    {
      sandbox_bubblewrap_cgroup_root_unref (root);
      g_propagate_error (error, g_steal_pointer (&local_error));
      return FALSE;
    }
  if (root_out != NULL)
    *root_out = root;
  else
    sandbox_bubblewrap_cgroup_root_unref (root);
  return TRUE;
}

/**
 * sandbox_bubblewrap_cgroup_root_ref:
 * @root: a cgroup root
 *
 * Returns: (transfer full): @root
 */
SandboxBubblewrapCgroupRoot *
sandbox_bubblewrap_cgroup_root_ref (SandboxBubblewrapCgroupRoot *root)
{
  return g_atomic_rc_box_acquire (root);
}

/**
 * sandbox_bubblewrap_cgroup_root_unref:
 * @root: (transfer full): a cgroup root
 */
void
sandbox_bubblewrap_cgroup_root_unref (SandboxBubblewrapCgroupRoot *root)
{
  g_atomic_rc_box_release_full (root, (GDestroyNotify) cgroup_root_clear);
}

static gboolean
write_control (const char  *directory,
               const char  *file,
               const char  *value,
               gboolean     optional,
               GError     **error)
{
  g_autofree char *path = g_build_filename (directory, file, NULL);
  g_auto(SandboxBubblewrapFd) fd = open (path, O_WRONLY | O_CLOEXEC);
  gssize length = strlen (value);

  if (fd < 0 && optional && errno == ENOENT)
    return TRUE;
  if (fd < 0 || write (fd, value, length) != length)
    {
      int saved_errno = errno;

      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Could not set the command's resource limit %s: %s",
                   path, g_strerror (saved_errno));
      return FALSE;
    }
  return TRUE;
}

/* Writes @controller's limits into @directory. */
static gboolean
apply_limits (gboolean                       v2,
              guint                          controller,
              const char                    *directory,
              const SandboxBubblewrapLimits *limits,
              GError                       **error)
{
  g_autofree char *value = NULL;

  switch (controller)
    {
    case CONTROLLER_MEMORY:
      value = g_strdup_printf ("%" G_GUINT64_FORMAT, limits->memory_limit);
      if (v2)
        return write_control (directory, "memory.max", value, FALSE, error) &&
               write_control (directory, "memory.swap.max", "0", TRUE, error);
      /* v1: memsw bounds memory plus swap; it must follow the plain limit. */
      return write_control (directory, "memory.limit_in_bytes", value, FALSE, error) &&
             write_control (directory, "memory.memsw.limit_in_bytes", value, TRUE, error);
    case CONTROLLER_PIDS:
      value = g_strdup_printf ("%" G_GUINT64_FORMAT, limits->max_processes);
      return write_control (directory, "pids.max", value, FALSE, error);
    case CONTROLLER_CPU:
      if (v2)
        {
          value = g_strdup_printf ("%u 100000", limits->cpu_percent * 1000);
          return write_control (directory, "cpu.max", value, FALSE, error);
        }
      value = g_strdup_printf ("%u", limits->cpu_percent * 1000);
      return write_control (directory, "cpu.cfs_period_us", "100000", FALSE, error) &&
             write_control (directory, "cpu.cfs_quota_us", value, FALSE, error);
    default:
      g_assert_not_reached ();
    }
}

static void
close_fd_in_array (gpointer data)
{
  sandbox_bubblewrap_fd_close (*(int *) data);
}

/**
 * sandbox_bubblewrap_cgroup_new:
 * @root: where to create it
 * @limits: the limits to put in force
 * @error: return location for a #GError
 *
 * Creates a command's cgroup with @limits and opens its `cgroup.procs`
 * files for the launcher.
 *
 * Returns: (transfer full): the cgroup, or %NULL with
 *   %SANDBOX_ERROR_UNAVAILABLE
 */
SandboxBubblewrapCgroup *
sandbox_bubblewrap_cgroup_new (SandboxBubblewrapCgroupRoot    *root,
                               const SandboxBubblewrapLimits  *limits,
                               GError                        **error)
{
  g_autoptr(SandboxBubblewrapCgroup) self = g_new0 (SandboxBubblewrapCgroup, 1);
  g_autofree char *uuid = g_uuid_string_random ();
  g_autofree char *name = g_strdup_printf ("sandbox-%s", uuid);

  self->root = sandbox_bubblewrap_cgroup_root_ref (root);
  self->procs_fds = g_array_new (FALSE, FALSE, sizeof (int));
  g_array_set_clear_func (self->procs_fds, close_fd_in_array);

  for (guint i = 0; i < N_CONTROLLERS; i++)
    {
      guint slot = root->v2 ? 0 : i;
      g_autofree char *procs = NULL;
      int fd;

      if (!controller_wanted (limits, i))
        continue;
      if (self->directories[slot] == NULL)
        {
          g_autofree char *directory = g_build_filename (root->parents[slot], name, NULL);

          if (mkdir (directory, 0700) < 0)
            {
              int saved_errno = errno;

              g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Could not create the command's cgroup %s: %s",
                           directory, g_strerror (saved_errno));
              return NULL;
            }
          self->directories[slot] = g_steal_pointer (&directory);
          procs = g_build_filename (self->directories[slot], "cgroup.procs", NULL);
          fd = open (procs, O_WRONLY | O_CLOEXEC);
          if (fd < 0)
            {
              int saved_errno = errno;

              g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Could not open %s: %s", procs, g_strerror (saved_errno));
              return NULL;
            }
          g_array_append_val (self->procs_fds, fd);
        }
      if (!apply_limits (root->v2, i, self->directories[slot], limits, error))
        return NULL;
    }
  return g_steal_pointer (&self);
}

/**
 * sandbox_bubblewrap_cgroup_get_procs_fds:
 * @self: a cgroup
 *
 * Returns: (transfer none) (element-type int): the `cgroup.procs` files
 *   bwrap's process writes "0" to before exec
 */
GArray *
sandbox_bubblewrap_cgroup_get_procs_fds (SandboxBubblewrapCgroup *self)
{
  return self->procs_fds;
}

/* Reads "key value" from a flat-keyed cgroup file; 0 if absent. */
static guint64
read_counter (const char *directory,
              const char *file,
              const char *key)
{
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_auto(GStrv) lines = NULL;
  gsize key_length = strlen (key);

  if (directory == NULL)
    return 0;
  path = g_build_filename (directory, file, NULL);
  if (!g_file_get_contents (path, &contents, NULL, NULL))
    return 0;
  lines = g_strsplit (contents, "\n", -1);
  for (guint i = 0; lines[i] != NULL; i++)
    if (strncmp (lines[i], key, key_length) == 0 && lines[i][key_length] == ' ')
      return g_ascii_strtoull (lines[i] + key_length + 1, NULL, 10);
  return 0;
}

/**
 * sandbox_bubblewrap_cgroup_check_exceeded:
 * @self: a cgroup whose command is over
 *
 * Returns: (transfer full) (nullable): %SANDBOX_ERROR_LIMIT if the kernel
 *   killed a process for memory or refused one a process, else %NULL
 */
GError *
sandbox_bubblewrap_cgroup_check_exceeded (SandboxBubblewrapCgroup *self)
{
  const char *memory = self->directories[self->root->v2 ? 0 : CONTROLLER_MEMORY];
  const char *pids = self->directories[self->root->v2 ? 0 : CONTROLLER_PIDS];
  guint64 oom_kills;

  oom_kills = self->root->v2 ? read_counter (memory, "memory.events", "oom_kill")
                             : read_counter (memory, "memory.oom_control", "oom_kill");
  if (oom_kills > 0)
    return g_error_new_literal (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                "Sandbox memory limit exceeded");
  if (read_counter (pids, "pids.events", "max") > 0)
    return g_error_new_literal (SANDBOX_ERROR, SANDBOX_ERROR_LIMIT,
                                "Sandbox process limit exceeded");
  return NULL;
}

/**
 * sandbox_bubblewrap_cgroup_free:
 * @self: (transfer full): a cgroup whose processes are gone
 *
 * Removes the cgroup's directories.
 */
void
sandbox_bubblewrap_cgroup_free (SandboxBubblewrapCgroup *self)
{
  if (self == NULL)
    return;
  g_clear_pointer (&self->procs_fds, g_array_unref);
  for (guint i = 0; i < N_CONTROLLERS; i++)
    if (self->directories[i] != NULL)
      {
        /* The last exiting process may leave the cgroup a moment late. */
        for (guint attempt = 0; attempt < 100 && rmdir (self->directories[i]) < 0 &&
                                errno == EBUSY; attempt++)
          g_usleep (1000);
        g_free (self->directories[i]);
      }
  sandbox_bubblewrap_cgroup_root_unref (self->root);
  g_free (self);
}
