/* test-escape-crash.c — host crashes around spawn leave nothing running
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attack class: crash and kill timing, leftovers after a crash (issue 14,
 * item 2). The library promises "stop and crash leave nothing running";
 * bwrap's --die-with-parent alone does not keep it (bubblewrap issue 633:
 * the sandbox's init arms PR_SET_PDEATHSIG only at the end of its setup,
 * so a bwrap killed before that leaves the namespace running forever).
 *
 * /escape/crash/kill-around-spawn: 200 host processes, each SIGKILLed at a
 * random point 0–20 ms around sandbox_session_spawn() (before it is
 * entered, while it runs, after it returned, during bwrap's own setup).
 * Then no process of that session may survive. To see it fail, take the
 * defence out of sandbox-bubblewrap-launcher.c: in spawn_child() clone with
 * no namespace flags (clone_child (0)), and in child_main() drop the calls
 * of child_write_id_maps(), child_mount_proc() and
 * child_arm_parent_death_signal() (never the mount alone: without its own
 * mount namespace it would cover the host's /proc). That is the launcher
 * before the fix: on bwrap 0.8 most trials then leave bwrap's init, or the
 * init and the guest, running under pid 1.
 *
 * /escape/crash/recover-kills-leftovers: whatever still survives a dead
 * owner (here a bwrap run by hand as the driver ran it before the fix, and
 * without --die-with-parent, so it surely outlives its owner) is ended by
 * sandbox_backend_recover_session(), which then takes over; a look-alike
 * sandbox of another session and a host process with a similar command
 * line survive it. To see it fail, make is_bwrap_of_workspace() and
 * is_sandbox_init() in sandbox-bubblewrap-store.c return FALSE (recovery as
 * it was): it then answers BUSY "still has processes of its previous
 * owner" for as long as the leftover runs; make process_is_named_like()
 * return TRUE and the host's look-alike is killed.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sandbox.h>

#include "escape-common.h"
#include "sandbox-test-backend.h"

#define DEFAULT_TRIALS 200
#define KILL_WINDOW_US (20 * 1000)
/* The helper enters spawn() this long after its killer starts counting, so
 * some kills land before spawn() is entered. */
#define SPAWN_AFTER_US (2 * 1000)
/* A process of a dead host's session still alive this long after the host
 * was reaped is a survivor. Processes that die with their parent go in
 * microseconds; a second is generous on a loaded machine. */
#define SURVIVOR_GRACE_MS 1000

/* Helpers ------------------------------------------------------------------ */

static char *
make_state_directory (void)
{
  g_autoptr(GError) error = NULL;
  char *directory = g_dir_make_tmp ("sandbox-crash-XXXXXX", &error);

  g_assert_no_error (error);
  return directory;
}

static void
remove_state_directory (const char *directory)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", directory);

  g_assert_cmpint (system (command), ==, 0);
}

static SandboxBackend *
new_backend (const char *state_directory)
{
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend = sandbox_test_bubblewrap_new (state_directory, &error, NULL);

  g_assert_no_error (error);
  return backend;
}

static char *
prewarm (SandboxBackend *backend)
{
  g_autoptr(SandboxTemplate) template_ = sandbox_template_new ("crash");
  g_autoptr(GBytes) hello = g_bytes_new_static ("hello", 5);
  g_autoptr(GError) error = NULL;
  char *key;

  g_assert_true (sandbox_template_add_file (template_, "hello.txt", hello, &error));
  key = sandbox_backend_prewarm (backend, template_, NULL, NULL, &error);
  g_assert_no_error (error);
  return key;
}

static SandboxHandle *
create_session (SandboxBackend *backend,
                const char     *key)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);

  g_assert_no_error (error);
  return handle;
}

/* A guest command that stays (sh forks sleep rather than exec it, as it is
 * not the last command) and carries @marker as its $0, so the host can find
 * it in /proc. */
static SandboxCommand *
long_command (const char *marker)
{
  SandboxCommand *command = sandbox_command_new ("/usr/bin/sh");

  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, "sleep 1000; exit 0");
  sandbox_command_add_arg (command, marker);
  return command;
}

static char *
session_workspace (const char   *state_directory,
                   SandboxState *state)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *session = g_build_filename (state_directory, digest, "sessions",
                                               sandbox_state_get_session_id (state), NULL);

  return sandbox_test_workspace_directory (session);
}

/* Whether one of the NUL-separated arguments in @cmdline contains @needle. */
static gboolean
cmdline_mentions (const char *cmdline,
                  gsize       length,
                  const char *needle)
{
  for (gsize i = 0; i < length; i += strlen (cmdline + i) + 1)
    if (strstr (cmdline + i, needle) != NULL)
      return TRUE;
  return FALSE;
}

/* A process found in /proc, and the index of the needle set it matched. */
typedef struct
{
  pid_t pid;
  guint set;
} Found;

/* Processes (other than this one) with an argument containing a needle of
 * one of @needle_sets (NULL-terminated string arrays). A process forking or
 * exec'ing can read an empty cmdline for a moment; callers scan again. */
static GArray *
find_processes_of (const char * const * const *needle_sets,
                   guint                       n_sets)
{
  g_autoptr(GDir) proc = g_dir_open ("/proc", 0, NULL);
  GArray *found = g_array_new (FALSE, FALSE, sizeof (Found));
  const char *name;

  g_assert_nonnull (proc);
  while ((name = g_dir_read_name (proc)) != NULL)
    {
      g_autofree char *path = NULL;
      g_autofree char *cmdline = NULL;
      gsize length;
      pid_t pid;
      gboolean matched = FALSE;

      if (!g_ascii_isdigit (name[0]))
        continue;
      pid = atoi (name);
      if (pid == getpid ())
        continue;
      path = g_strdup_printf ("/proc/%s/cmdline", name);
      if (!g_file_get_contents (path, &cmdline, &length, NULL))
        continue;
      for (guint set = 0; set < n_sets && !matched; set++)
        for (guint n = 0; needle_sets[set][n] != NULL && !matched; n++)
          if (cmdline_mentions (cmdline, length, needle_sets[set][n]))
            {
              Found one = { pid, set };

              g_array_append_val (found, one);
              matched = TRUE;
            }
    }
  return found;
}

static GArray *
find_processes (const char * const *needles)
{
  return find_processes_of (&needles, 1);
}

/* Says what a survivor is: its name, state and parent, from /proc. */
static void
describe_survivor (int pidfd)
{
  g_autofree char *fdinfo_path = g_strdup_printf ("/proc/self/fdinfo/%d", pidfd);
  g_autofree char *fdinfo = NULL;
  g_autofree char *stat = NULL;
  g_autofree char *stat_path = NULL;
  const char *pid_line;

  if (!g_file_get_contents (fdinfo_path, &fdinfo, NULL, NULL) ||
      (pid_line = strstr (fdinfo, "Pid:\t")) == NULL)
    return;
  stat_path = g_strdup_printf ("/proc/%d/stat", atoi (pid_line + 5));
  if (g_file_get_contents (stat_path, &stat, NULL, NULL))
    g_test_message ("survivor: %s", g_strchomp (stat));
}

/* Waits up to @timeout_ms for every process in @found to exit, on pidfds.
 * Counts those still alive then in @survivors (by needle set) and SIGKILLs
 * them, so the next trials start clean. */
static void
count_and_end_survivors (GArray *found,
                         guint   timeout_ms,
                         guint  *survivors)
{
  g_autoptr(GArray) fds = g_array_new (FALSE, FALSE, sizeof (struct pollfd));
  g_autoptr(GArray) sets = g_array_new (FALSE, FALSE, sizeof (guint));
  gint64 deadline = g_get_monotonic_time () + timeout_ms * G_TIME_SPAN_MILLISECOND;

  for (guint i = 0; i < found->len; i++)
    {
      Found *one = &g_array_index (found, Found, i);
      struct pollfd pfd = { .fd = pidfd_open (one->pid, 0), .events = POLLIN };

      if (pfd.fd < 0)
        continue;
      g_array_append_val (fds, pfd);
      g_array_append_val (sets, one->set);
    }

  for (;;)
    {
      gint64 left = (deadline - g_get_monotonic_time ()) / G_TIME_SPAN_MILLISECOND;
      guint pending = 0;

      for (guint i = 0; i < fds->len; i++)
        if (g_array_index (fds, struct pollfd, i).fd >= 0)
          pending++;
      if (pending == 0 || left <= 0)
        break;
      if (poll ((struct pollfd *) fds->data, fds->len, (int) left) <= 0)
        continue;
      for (guint i = 0; i < fds->len; i++)
        {
          struct pollfd *pfd = &g_array_index (fds, struct pollfd, i);

          if (pfd->fd >= 0 && (pfd->revents & POLLIN))
            {
              close (pfd->fd);
              pfd->fd = -1;   /* poll() ignores negative descriptors */
            }
        }
    }

  for (guint i = 0; i < fds->len; i++)
    {
      struct pollfd *pfd = &g_array_index (fds, struct pollfd, i);

      if (pfd->fd < 0)
        continue;
      survivors[g_array_index (sets, guint, i)]++;
      describe_survivor (pfd->fd);
      pidfd_send_signal (pfd->fd, SIGKILL, NULL, 0);
      poll (pfd, 1, 5000);
      close (pfd->fd);
    }
}

/* Every process of a dead host's session must go by itself. Scans until a
 * scan finds none (three scans, since a forking process can hide for a
 * moment); counts in @survivors, by needle set, those that outlived their
 * grace period. */
static void
survivors_of (const char * const * const *needle_sets,
              guint                       n_sets,
              guint                      *survivors)
{
  guint clean_scans = 0;

  while (clean_scans < 3)
    {
      g_autoptr(GArray) found = find_processes_of (needle_sets, n_sets);

      if (found->len == 0)
        {
          clean_scans++;
          g_usleep (2000);   /* a scan apart, not a synchronisation */
          continue;
        }
      clean_scans = 0;
      count_and_end_survivors (found, SURVIVOR_GRACE_MS, survivors);
    }
}

static GPid
spawn_self (const char * const *args,
            int                *stdin_fd,
            int                *stdout_fd)
{
  g_autofree char *self = g_file_read_link ("/proc/self/exe", NULL);
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  GPid pid = 0;

  g_ptr_array_add (argv, self);
  for (guint i = 0; args[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) args[i]);
  g_ptr_array_add (argv, NULL);
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, NULL, G_SPAWN_DO_NOT_REAP_CHILD,
                            NULL, NULL, &pid, stdin_fd, stdout_fd, NULL, &error);
  g_assert_no_error (error);
  return pid;
}

static int
wait_child (GPid pid)
{
  int status = 0;

  g_assert_cmpint (waitpid (pid, &status, 0), ==, pid);
  g_spawn_close_pid (pid);
  return status;
}

static char *
read_line (int fd)
{
  GString *line = g_string_new (NULL);
  char c;

  while (read (fd, &c, 1) == 1 && c != '\n')
    g_string_append_c (line, c);
  return g_string_free (line, FALSE);
}

/* Kill around spawn ------------------------------------------------------------ */

/* Helper mode: creates a session, prints its id and waits for a line on
 * stdin, then starts a thread that SIGKILLs this process @kill_after_us
 * later, and enters spawn() SPAWN_AFTER_US after that thread started. */
static int
helper_kill_around_spawn (const char *state_directory,
                          const char *key,
                          const char *kill_after,
                          const char *marker)
{
  g_autoptr(SandboxBackend) backend = new_backend (state_directory);
  g_autoptr(SandboxHandle) handle = create_session (backend, key);
  g_autoptr(SandboxCommand) command = long_command (marker);
  g_autoptr(SandboxProcess) process = NULL;
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, NULL);
  g_autoptr(GError) error = NULL;
  g_autofree char *go = NULL;

  printf ("%s\n", sandbox_state_get_session_id (state));
  fflush (stdout);
  go = read_line (STDIN_FILENO);
  escape_kill_self_after (kill_after);
  g_usleep (SPAWN_AFTER_US);
  process = sandbox_session_spawn (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  for (;;)
    g_main_context_iteration (NULL, TRUE);
  return 1;
}

static guint
trial_count (void)
{
  const char *text = g_getenv ("SANDBOX_CRASH_TRIALS");

  return text != NULL ? (guint) g_ascii_strtoull (text, NULL, 10) : DEFAULT_TRIALS;
}

/* One host helper of a batch. */
typedef struct
{
  GPid pid;
  int in;
  int out;
  char *kill_after;
  char *marker;
  char *workspace;
} Trial;

static void
trial_start (Trial      *trial,
             const char *directory,
             const char *key,
             const char *marker_prefix,
             guint       number)
{
  g_autofree char *digest = g_compute_checksum_for_string (G_CHECKSUM_SHA256, "bubblewrap", -1);
  g_autofree char *session_id = NULL;
  g_autofree char *session = NULL;
  const char *args[] = { "--helper-kill-around-spawn", directory, key, NULL, NULL, NULL };

  trial->kill_after = g_strdup_printf ("%u", g_random_int_range (0, KILL_WINDOW_US));
  trial->marker = g_strdup_printf ("%s-%06u", marker_prefix, number);   /* none a prefix of another */
  args[3] = trial->kill_after;
  args[4] = trial->marker;
  trial->pid = spawn_self (args, &trial->in, &trial->out);
  session_id = read_line (trial->out);
  g_assert_cmpuint (strlen (session_id), ==, 64);
  session = g_build_filename (directory, digest, "sessions", session_id, NULL);
  trial->workspace = sandbox_test_workspace_directory (session);
}

/* Reaps the helper, which must have died of its SIGKILL. */
static void
trial_reap (Trial *trial,
            guint  number)
{
  int status = wait_child (trial->pid);

  close (trial->in);
  close (trial->out);
  if (!WIFSIGNALED (status) || WTERMSIG (status) != SIGKILL)
    g_error ("trial %u: the host helper was not killed (wait status %d)", number, status);
}

static void
trial_clear (Trial *trial)
{
  g_free (trial->kill_after);
  g_free (trial->marker);
  g_free (trial->workspace);
}

/* Hosts run in batches: a trial waits mostly on the kernel (a bwrap start
 * takes ~100 ms here, nearly all of it namespace setup and teardown), so a
 * few at once keep 200 trials within a minute. */
#define BATCH 4

static void
test_kill_around_spawn (void)
{
  g_autofree char *directory = make_state_directory ();
  g_autoptr(SandboxBackend) backend = new_backend (directory);
  g_autofree char *key = prewarm (backend);
  g_autofree char *nonce = g_uuid_string_random ();
  g_autofree char *marker = g_strdup_printf ("sandbox-crash-marker-%s", nonce);
  guint trials = trial_count ();
  guint survivors = 0;
  guint trials_with_survivors = 0;
  gint64 started = g_get_monotonic_time ();

  for (guint first = 0; first < trials; first += BATCH)
    {
      Trial batch[BATCH];
      const char *needles[BATCH][3];
      const char * const *needle_sets[BATCH];
      guint left[BATCH] = { 0 };
      guint n = MIN (BATCH, trials - first);

      for (guint i = 0; i < n; i++)
        trial_start (&batch[i], directory, key, marker, first + i);
      /* Each starts counting when it reads this. */
      for (guint i = 0; i < n; i++)
        g_assert_cmpint (write (batch[i].in, "go\n", 3), ==, 3);
      for (guint i = 0; i < n; i++)
        {
          trial_reap (&batch[i], first + i);
          needles[i][0] = batch[i].workspace;
          needles[i][1] = batch[i].marker;
          needles[i][2] = NULL;
          needle_sets[i] = needles[i];
        }

      survivors_of (needle_sets, n, left);
      for (guint i = 0; i < n; i++)
        {
          if (left[i] > 0)
            g_test_message ("trial %u (killed %s us after the start, spawn() entered at %d us): "
                            "%u processes of the dead host's session survived",
                            first + i, batch[i].kill_after, SPAWN_AFTER_US, left[i]);
          survivors += left[i];
          trials_with_survivors += left[i] > 0;
          trial_clear (&batch[i]);
        }
    }

  g_test_message ("%u trials in %.1f s: %u with survivors (%u processes)", trials,
                  (g_get_monotonic_time () - started) / (double) G_USEC_PER_SEC,
                  trials_with_survivors, survivors);
  g_assert_cmpuint (trials_with_survivors, ==, 0);
  remove_state_directory (directory);
}

/* Recovery ends leftovers ------------------------------------------------------ */

/* A bwrap over @workspace as the driver ran it before the launcher's
 * namespace wrapper, and without --die-with-parent, so that it surely
 * outlives its owner: a stand-in for a sandbox that survived a crash in
 * bubblewrap issue 633's window. Its guest says "started" on stdout. */
static GPid
spawn_bwrap_by_hand (const char *workspace,
                     const char *marker,
                     int        *stdout_fd)
{
  const char *head[] = {
    "/usr/bin/bwrap", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-net",
    "--new-session", "--cap-drop", "ALL", NULL
  };
  const char *tail[] = {
    "--ro-bind", "/usr", "/usr", "--ro-bind", "/lib", "/lib", "--ro-bind", "/lib64", "/lib64",
    "--symlink", "usr/bin", "/bin", "--symlink", "usr/sbin", "/sbin",
    "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--dir", "/run",
    "--bind", workspace, "/workspace", "--lock-file", "/workspace",
    "--clearenv", "--setenv", "PATH", "/usr/bin:/bin", "--chdir", "/workspace",
    "--", "/usr/bin/sh", "-c", "echo started; sleep 1000; exit 0", marker, NULL
  };
  g_autoptr(GPtrArray) argv = g_ptr_array_new ();
  g_autoptr(GError) error = NULL;
  GPid pid = 0;

  for (guint i = 0; head[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) head[i]);
  /* Unprivileged, the pid namespace needs a user namespace. A root host's
   * workspace belongs to the guest ids, which a user namespace of root's
   * would not map: root goes without one, as bwrap permits (and the
   * helper opens the workspace to root without capabilities). */
  if (geteuid () != 0)
    g_ptr_array_add (argv, (gpointer) "--unshare-user");
  for (guint i = 0; tail[i] != NULL; i++)
    g_ptr_array_add (argv, (gpointer) tail[i]);
  g_ptr_array_add (argv, NULL);

  /* Not our stderr: a leftover of a failed run must not hold the test
   * runner's pipe open. */
  g_spawn_async_with_pipes (NULL, (char **) argv->pdata, NULL,
                            G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDERR_TO_DEV_NULL,
                            NULL, NULL, &pid, NULL, stdout_fd, NULL, &error);
  g_assert_no_error (error);
  return pid;
}

/* Helper mode: owns a new session and leaves a sandbox of it running by
 * hand; prints the session's state once its guest runs, then waits to be
 * killed. */
static int
helper_leave_leftover (const char *state_directory,
                       const char *key,
                       const char *marker)
{
  g_autoptr(SandboxBackend) backend = new_backend (state_directory);
  g_autoptr(SandboxHandle) handle = create_session (backend, key);
  g_autoptr(SandboxState) state = sandbox_handle_capture_state (handle, NULL);
  g_autofree char *json = sandbox_state_to_json (state);
  g_autofree char *workspace = session_workspace (state_directory, state);
  g_autofree char *started = NULL;
  int out = -1;

  /* A root host's workspace belongs to the guest ids, 0700: the by-hand
   * sandbox's init, root without capabilities, must still open it. */
  if (geteuid () == 0)
    g_assert_cmpint (chmod (workspace, 0777), ==, 0);
  spawn_bwrap_by_hand (workspace, marker, &out);
  started = read_line (out);
  g_assert_cmpstr (started, ==, "started");
  printf ("%s\n", json);
  fflush (stdout);
  for (;;)
    pause ();
  return 1;
}

/* Runs a helper that owns a session with a leftover sandbox, and SIGKILLs
 * it. Returns the session's state. */
static SandboxState *
crash_owner_leaving_leftover (const char *directory,
                              const char *key,
                              const char *marker)
{
  const char *args[] = { "--helper-leave-leftover", directory, key, marker, NULL };
  g_autoptr(GError) error = NULL;
  g_autofree char *json = NULL;
  SandboxState *state;
  int in = -1;
  int out = -1;
  GPid pid = spawn_self (args, &in, &out);
  int status;

  json = read_line (out);
  state = sandbox_state_new_from_json (json, &error);
  g_assert_no_error (error);
  kill (pid, SIGKILL);
  status = wait_child (pid);
  g_assert_true (WIFSIGNALED (status) && WTERMSIG (status) == SIGKILL);
  close (in);
  close (out);
  return state;
}

static guint
count_processes (const char *needle)
{
  const char *needles[] = { needle, NULL };
  g_autoptr(GArray) pids = find_processes (needles);

  return pids->len;
}

static gboolean
pidfd_is_alive (int pidfd)
{
  struct pollfd pfd = { .fd = pidfd, .events = POLLIN };

  return poll (&pfd, 1, 0) == 0;
}

/* A host process whose command line looks like a bwrap of @workspace —
 * argv[0] the bwrap executable, the same bind — but which is a shell (one
 * that stops itself: it has no child to leave behind). */
static GPid
spawn_host_look_alike (const char *workspace,
                       int        *pidfd)
{
  const char *argv[] = {
    "/usr/bin/sh", "/usr/bin/bwrap", "-c", "kill -STOP $$",
    "--bind", workspace, "/workspace", "--lock-file", "/workspace", NULL
  };
  g_autoptr(GError) error = NULL;
  GPid pid = 0;

  g_spawn_async (NULL, (char **) argv, NULL,
                 G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_FILE_AND_ARGV_ZERO |
                 G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                 NULL, NULL, &pid, &error);
  g_assert_no_error (error);
  *pidfd = pidfd_open (pid, 0);
  g_assert_cmpint (*pidfd, >=, 0);
  return pid;
}

static SandboxHandle *
recover (SandboxBackend *backend,
         SandboxState   *state)
{
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_recover_session (backend, state, policy, NULL, &error);

  g_assert_no_error (error);
  g_assert_nonnull (handle);
  return handle;
}

static void
assert_runs (SandboxHandle *handle)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/cat");
  g_autoptr(SandboxResult) result = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *out = NULL;

  sandbox_command_add_arg (command, "hello.txt");
  result = sandbox_session_run (sandbox_handle_get_session (handle), command, NULL, &error);
  g_assert_no_error (error);
  out = sandbox_result_dup_stdout_text (result);
  g_assert_cmpstr (out, ==, "hello");
}

static void
delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_handle_delete (handle, NULL, &error));
  g_assert_no_error (error);
}

static void
test_recover_kills_leftovers (void)
{
  g_autofree char *directory = make_state_directory ();
  g_autoptr(SandboxBackend) backend = new_backend (directory);
  g_autofree char *key = prewarm (backend);
  g_autofree char *nonce = g_uuid_string_random ();
  g_autofree char *marker_a = g_strdup_printf ("sandbox-crash-leftover-a-%s", nonce);
  g_autofree char *marker_b = g_strdup_printf ("sandbox-crash-leftover-b-%s", nonce);
  g_autoptr(SandboxState) state_a = crash_owner_leaving_leftover (directory, key, marker_a);
  g_autoptr(SandboxState) state_b = crash_owner_leaving_leftover (directory, key, marker_b);
  g_autofree char *workspace_a = session_workspace (directory, state_a);
  g_autofree char *workspace_b = session_workspace (directory, state_b);
  g_autoptr(SandboxHandle) handle_a = NULL;
  g_autoptr(SandboxHandle) handle_b = NULL;
  int look_alike_pidfd = -1;
  GPid look_alike = spawn_host_look_alike (workspace_a, &look_alike_pidfd);

  /* Both owners are dead; their sandboxes run on: bwrap, the sandbox's
   * init (both naming the workspace) and the guest. */
  g_assert_cmpuint (count_processes (marker_a), >=, 1);
  g_assert_cmpuint (count_processes (marker_b), >=, 1);
  g_assert_cmpuint (count_processes (workspace_a), >=, 3);   /* two bwraps, the look-alike */

  /* Recovery of A ends A's leftovers and takes over. */
  handle_a = recover (backend, state_a);
  g_assert_cmpuint (count_processes (marker_a), ==, 0);
  g_assert_cmpuint (count_processes (workspace_a), ==, 1);   /* the look-alike */
  assert_runs (handle_a);

  /* Another session's sandbox and the host's look-alike are not A's. */
  g_assert_cmpuint (count_processes (marker_b), >=, 1);
  g_assert_cmpuint (count_processes (workspace_b), >=, 2);
  g_assert_true (pidfd_is_alive (look_alike_pidfd));

  /* B's own recovery ends B's. */
  handle_b = recover (backend, state_b);
  g_assert_cmpuint (count_processes (marker_b), ==, 0);
  g_assert_cmpuint (count_processes (workspace_b), ==, 0);
  assert_runs (handle_b);
  g_assert_true (pidfd_is_alive (look_alike_pidfd));

  pidfd_send_signal (look_alike_pidfd, SIGKILL, NULL, 0);
  wait_child (look_alike);
  close (look_alike_pidfd);
  delete_session (handle_a);
  delete_session (handle_b);
  remove_state_directory (directory);
}

int
main (int   argc,
      char *argv[])
{
  if (argc == 6 && g_str_equal (argv[1], "--helper-kill-around-spawn"))
    return helper_kill_around_spawn (argv[2], argv[3], argv[4], argv[5]);
  if (argc == 5 && g_str_equal (argv[1], "--helper-leave-leftover"))
    return helper_leave_leftover (argv[2], argv[3], argv[4]);

  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/escape/crash/kill-around-spawn", test_kill_around_spawn);
  g_test_add_func ("/escape/crash/recover-kills-leftovers", test_recover_kills_leftovers);
  return g_test_run ();
}
