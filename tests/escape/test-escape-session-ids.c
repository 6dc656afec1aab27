/* test-escape-session-ids.c — one session's guest against another's
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Attack class "shared identity" (issue 31, item 5): on a root host every
 * session's guest used to be the same host uid (65534), so whatever the
 * kernel keys by uid was shared across sessions: a guest that could name
 * another session's process (a pid namespace shared by mistake, a leaked
 * pid, a host helper running as the guest) could signal it, ptrace it,
 * read its /proc files, and read the files it left in any place both could
 * reach; RLIMIT_NPROC counted both. Now each session's guest has a uid
 * and gid of its own from guest-id-range, kept across stop and resume.
 *
 * The attack: a process running as session B's guest ids on the host —
 * the most a guest of B could ever become — tries to signal, trace and
 * read session A's guest process and to read a file A's guest made
 * private. Each must fail; with one shared pair of ids (guest-uid and
 * guest-gid set, the old default) the same process succeeds, which the
 * test shows too, so it can fail. To see it fail outright, make
 * resolve_guest_ids() in drivers/bubblewrap/sandbox-bubblewrap-backend.c
 * return resolve_shared_guest() on a root host.
 *
 * Only a root host can give guests other ids than its own: unprivileged,
 * the cases check that guest-id-range is refused and skip the rest.
 */

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sandbox.h>

#include "escape-common.h"
#include "sandbox-test-backend.h"

/* What the attacker reached, one bit each. */
enum
{
  REACHED_SIGNAL = 1 << 0,
  REACHED_PROC_ENVIRON = 1 << 1,
  REACHED_PTRACE = 1 << 2,
  REACHED_FILE = 1 << 3,
  ATTACKER_FAILED = 1 << 6,
};

/* One session with a guest shell that made /workspace/private (0600) and
 * waits, found on the host by its marker. */
typedef struct
{
  SandboxHandle *handle;
  SandboxProcess *process;
  guint uid;
  guint gid;
  int pid;
  int private_fd;   /* O_PATH, opened by the host */
} Victim;

static void
on_stdout_data (SandboxProcess *process,
                GBytes         *data,
                gpointer        user_data)
{
  *(gboolean *) user_data = TRUE;
}

static void
victim_start (Victim         *victim,
              SandboxBackend *backend,
              const char     *template_key,
              const char     *state_directory)
{
  g_autoptr(SandboxCommand) command = sandbox_command_new ("/usr/bin/sh");
  g_autoptr(GError) error = NULL;
  g_autofree char *marker = g_strdup_printf ("escape-session-ids-%08x", g_random_int ());
  g_autofree char *uids = NULL;
  g_autofree char *gids = NULL;
  g_autofree char *private = NULL;
  gboolean ready = FALSE;
  SandboxSession *session;

  victim->handle = escape_create (backend, template_key);
  session = sandbox_handle_get_session (victim->handle);
  sandbox_command_add_arg (command, "-c");
  sandbox_command_add_arg (command, "umask 077; echo secret > /workspace/private; "
                                    "echo ready; sleep 60");
  sandbox_command_add_arg (command, marker);
  victim->process = sandbox_session_spawn (session, command, NULL, &error);
  g_assert_no_error (error);
  g_signal_connect (victim->process, "stdout-data", G_CALLBACK (on_stdout_data), &ready);
  while (!ready)
    g_main_context_iteration (NULL, TRUE);

  victim->pid = escape_find_guest_pid ("/usr/bin/sh", marker);
  g_assert_cmpint (victim->pid, >, 0);
  uids = escape_status_field (victim->pid, "Uid");
  gids = escape_status_field (victim->pid, "Gid");
  g_assert_cmpint (sscanf (uids, "%u", &victim->uid), ==, 1);
  g_assert_cmpint (sscanf (gids, "%u", &victim->gid), ==, 1);
  g_assert_cmpuint (victim->uid, !=, 0);

  /* The file as the host reaches it: in the upper layer or the copy. */
  {
    EscapeSession view = { .state_directory = (char *) state_directory,
                           .handle = victim->handle };
    g_autofree char *workspace = escape_workspace_directory (&view);

    private = g_build_filename (workspace, "private", NULL);
  }
  victim->private_fd = open (private, O_PATH | O_CLOEXEC);
}

static void
victim_stop (Victim *victim)
{
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_process_stop (victim->process, NULL, &error));
  g_assert_no_error (error);
  g_clear_object (&victim->process);
  sandbox_handle_delete (victim->handle, NULL, &error);
  g_assert_no_error (error);
  g_clear_object (&victim->handle);
  if (victim->private_fd >= 0)
    close (victim->private_fd);
}

/* In a child of this process that becomes @uid:@gid, as a guest that got
 * out would be: what it reaches of @victim. */
static guint
attack_as (const Victim *victim,
           guint         uid,
           guint         gid)
{
  pid_t child = fork ();
  int status = 0;

  g_assert_cmpint (child, >=, 0);
  if (child == 0)
    {
      char path[64];
      int reached = 0;
      int fd;

      if (setgroups (0, NULL) < 0 || setresgid (gid, gid, gid) < 0 ||
          setresuid (uid, uid, uid) < 0)
        _exit (ATTACKER_FAILED);
      if (kill (victim->pid, 0) == 0)
        reached |= REACHED_SIGNAL;
      snprintf (path, sizeof path, "/proc/%d/environ", victim->pid);
      fd = open (path, O_RDONLY | O_CLOEXEC);
      if (fd >= 0 && read (fd, path, 1) >= 0)
        reached |= REACHED_PROC_ENVIRON;
      if (ptrace (PTRACE_SEIZE, victim->pid, NULL, NULL) == 0)
        {
          reached |= REACHED_PTRACE;
          ptrace (PTRACE_DETACH, victim->pid, NULL, NULL);
        }
      /* Reopening an O_PATH descriptor checks the file's own permission
       * bits: as if the file had been left where both could reach it. */
      snprintf (path, sizeof path, "/proc/self/fd/%d", victim->private_fd);
      fd = victim->private_fd >= 0 ? open (path, O_RDONLY | O_CLOEXEC) : -1;
      if (fd >= 0)
        reached |= REACHED_FILE;
      _exit (reached);
    }
  while (waitpid (child, &status, 0) < 0 && errno == EINTR)
    ;
  g_assert_true (WIFEXITED (status));
  g_assert_cmpint (WEXITSTATUS (status) & ATTACKER_FAILED, ==, 0);
  return WEXITSTATUS (status);
}

/* Two victims in two sessions of one backend on a new state directory:
 * with ids per session, or (@shared) one pair for all, the old default. */
static char *
start_two_victims (gboolean  shared,
                   Victim   *a,
                   Victim   *b)
{
  char *directory = escape_state_directory_new ();
  g_autoptr(SandboxBackend) backend = NULL;
  g_autofree char *key = NULL;

  backend = shared ? escape_backend_new (directory, "guest-uid", "4242", "guest-gid", "4242", NULL)
                   : escape_backend_new (directory, NULL);
  key = escape_prewarm (backend);
  victim_start (a, backend, key, directory);
  victim_start (b, backend, key, directory);
  g_test_message ("session a: %u:%u, session b: %u:%u", a->uid, a->gid, b->uid, b->gid);
  g_assert_cmpint (a->private_fd, >=, 0);
  return directory;
}

static void
stop_two_victims (char   *directory,
                  Victim *a,
                  Victim *b)
{
  victim_stop (a);
  victim_stop (b);
  escape_state_directory_remove (directory);
  g_free (directory);
}

/* Two sessions of one backend: their guests are different host ids, and
 * neither reaches the other's process or private file. */
static void
test_sessions_cannot_reach_each_other (void)
{
  Victim a = { 0 }, b = { 0 };
  char *directory;
  guint reached;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only a root host gives sessions ids of their own");
      return;
    }
  directory = start_two_victims (FALSE, &a, &b);
  g_assert_cmpuint (a.uid, !=, b.uid);
  g_assert_cmpuint (a.gid, !=, b.gid);

  reached = attack_as (&a, b.uid, b.gid);
  g_assert_cmpuint (reached, ==, 0);
  reached = attack_as (&b, a.uid, a.gid);
  g_assert_cmpuint (reached, ==, 0);
  /* The attacker itself works: as a's own ids it reaches a's process and
   * file (signals and reads need nothing more than the same uid). */
  reached = attack_as (&a, a.uid, a.gid);
  g_assert_cmpuint (reached & (REACHED_SIGNAL | REACHED_FILE), ==,
                    REACHED_SIGNAL | REACHED_FILE);
  stop_two_victims (directory, &a, &b);
}

/* The old default, one pair of ids for all (guest-uid, guest-gid set):
 * session b's guest reaches session a's process and file — what the test
 * above would see without ids per session. */
static void
test_shared_ids_reach_each_other (void)
{
  Victim a = { 0 }, b = { 0 };
  char *directory;
  guint reached;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only a root host gives guests other ids than its own");
      return;
    }
  directory = start_two_victims (TRUE, &a, &b);
  g_assert_cmpuint (a.uid, ==, b.uid);
  reached = attack_as (&a, b.uid, b.gid);
  g_assert_cmpuint (reached & (REACHED_SIGNAL | REACHED_FILE), ==,
                    REACHED_SIGNAL | REACHED_FILE);
  stop_two_victims (directory, &a, &b);
}

/* The guest's uid as it sees it (its namespace maps its ids to
 * themselves). */
static guint
guest_uid (SandboxSession *session)
{
  g_autofree char *out = escape_sh (session, "id -u");

  return (guint) g_ascii_strtoull (out, NULL, 10);
}

/* The registry entry of @uid in @state_directory's store. */
static char *
registry_entry (const char *state_directory,
                guint       uid)
{
  g_autofree char *root = realpath (state_directory, NULL);
  g_autofree char *name = g_strdup_printf ("%u", uid);

  g_assert_nonnull (root);
  return g_build_filename (root, "guest-ids", name, NULL);
}

/* A session keeps its ids across stop and resume; delete gives them back. */
static void
test_ids_kept_until_delete (void)
{
  EscapeSession s = { 0 };
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *entry = NULL;
  guint before, after;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only a root host gives sessions ids of their own");
      return;
    }
  escape_session_open (&s, NULL);
  before = guest_uid (s.session);
  entry = registry_entry (s.state_directory, before);
  g_assert_true (g_file_test (entry, G_FILE_TEST_IS_SYMLINK));
  state = escape_session_stop (&s);
  escape_session_resume (&s, state);
  after = guest_uid (s.session);
  g_assert_cmpuint (after, ==, before);

  sandbox_handle_delete (s.handle, NULL, &error);
  g_assert_no_error (error);
  g_clear_object (&s.handle);
  g_assert_false (g_file_test (entry, G_FILE_TEST_EXISTS));
  escape_session_close (&s);
}

/* A range of two ids holds two sessions; the third is refused until one
 * is deleted. A claim left by a session that is gone (a host killed
 * between removing a session and releasing its ids) is taken over. */
static void
test_range_exhausted (void)
{
  g_autofree char *directory = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(SandboxHandle) first = NULL;
  g_autoptr(SandboxHandle) second = NULL;
  g_autoptr(SandboxHandle) third = NULL;
  g_autoptr(SandboxNetworkPolicy) policy = sandbox_network_policy_new_deny_all ();
  g_autoptr(GError) error = NULL;
  g_autofree char *key = NULL;
  g_autofree char *stale = NULL;
  guint uid;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only a root host gives sessions ids of their own");
      return;
    }
  directory = escape_state_directory_new ();
  backend = escape_backend_new (directory, "guest-id-range", "1879113728:2", NULL);
  key = escape_prewarm (backend);
  first = escape_create (backend, key);
  second = escape_create (backend, key);
  third = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_assert_nonnull (strstr (error->message, "guest-id-range"));
  g_assert_null (third);
  g_clear_error (&error);

  /* The first session's ids, as if its host died before giving them
   * back: its directory is gone, its claim is not. */
  uid = guest_uid (sandbox_handle_get_session (first));
  sandbox_handle_delete (first, NULL, &error);
  g_assert_no_error (error);
  stale = registry_entry (directory, uid);
  g_assert_cmpint (symlink ("0000/sessions/gone", stale), ==, 0);

  third = escape_create (backend, key);
  g_assert_cmpuint (guest_uid (sandbox_handle_get_session (third)), ==, uid);
  sandbox_handle_delete (second, NULL, &error);
  g_assert_no_error (error);
  sandbox_handle_delete (third, NULL, &error);
  g_assert_no_error (error);
  escape_state_directory_remove (directory);
}

/* Ranges that would hand out root, "nobody" or ids past the last, or that
 * say nothing, are refused; so is a range beside guest-uid, and any range
 * on a host that cannot switch ids. */
static void
test_bad_ranges_refused (void)
{
  const char *const invalid[] = {
    "0:16", "65000:1000", "4294967000:1000", "12:0", "x:1", "1:2:3", "no-such-subuid-name",
  };
  g_autofree char *directory = escape_state_directory_new ();
  g_autoptr(GError) error = NULL;
  SandboxBackend *backend;

  if (!escape_running_as_root ())
    {
      backend = sandbox_test_bubblewrap_new (directory, &error,
                                             "guest-id-range", "1879048192:16", NULL);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
      g_assert_null (backend);
      escape_state_directory_remove (directory);
      return;
    }
  for (gsize i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      backend = sandbox_test_bubblewrap_new (directory, &error, "guest-id-range", invalid[i],
                                             NULL);
      g_test_message ("%s: %s", invalid[i], error != NULL ? error->message : "accepted");
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_assert_null (backend);
      g_clear_error (&error);
    }
  backend = sandbox_test_bubblewrap_new (directory, &error, "guest-id-range", "1879048192:16",
                                         "guest-uid", "4242", NULL);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
  g_assert_null (backend);
  escape_state_directory_remove (directory);
}

/* A session from before ids per session (no record, its workspace the old
 * shared guest's) gets ids of its own on resume, and its workspace with
 * them. */
static void
test_session_from_before_gets_ids (void)
{
  EscapeSession s = { 0 };
  g_autoptr(SandboxState) state = NULL;
  g_autofree char *session_directory = NULL;
  g_autofree char *record = NULL;
  g_autofree char *command = NULL;
  g_autofree char *out = NULL;
  guint before;

  if (!escape_running_as_root ())
    {
      g_test_skip ("only a root host gives sessions ids of their own");
      return;
    }
  escape_session_open (&s, NULL);
  before = guest_uid (s.session);
  session_directory = escape_session_directory (&s);
  state = escape_session_stop (&s);

  /* What an older version left: no record, all of it 65534's. */
  record = g_build_filename (session_directory, "guest-ids", NULL);
  g_assert_cmpint (unlink (record), ==, 0);
  command = g_strdup_printf ("chown -hR 65534:65534 '%s'/layers '%s'/workspace 2>/dev/null; true",
                             session_directory, session_directory);
  g_assert_cmpint (system (command), ==, 0);

  escape_session_resume (&s, state);
  g_assert_true (g_file_test (record, G_FILE_TEST_IS_REGULAR));
  g_assert_cmpuint (guest_uid (s.session), !=, 65534);
  g_test_message ("before %u, after %u", before, guest_uid (s.session));
  out = escape_sh (s.session, "echo more >> /workspace/hello.txt && stat -c %u /workspace && "
                              "id -u");
  {
    g_auto(GStrv) lines = g_strsplit (out, "\n", -1);

    g_assert_cmpstr (lines[0], ==, lines[1]);
  }
  escape_session_close (&s);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/escape/session-ids/sessions-cannot-reach-each-other",
                   test_sessions_cannot_reach_each_other);
  g_test_add_func ("/sandbox/escape/session-ids/shared-ids-reach-each-other",
                   test_shared_ids_reach_each_other);
  g_test_add_func ("/sandbox/escape/session-ids/kept-until-delete", test_ids_kept_until_delete);
  g_test_add_func ("/sandbox/escape/session-ids/range-exhausted", test_range_exhausted);
  g_test_add_func ("/sandbox/escape/session-ids/bad-ranges-refused", test_bad_ranges_refused);
  g_test_add_func ("/sandbox/escape/session-ids/session-from-before-gets-ids",
                   test_session_from_before_gets_ids);

  return g_test_run ();
}
