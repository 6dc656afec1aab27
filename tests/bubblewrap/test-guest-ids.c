/* test-guest-ids.c — guest-id-range and the registry of sessions' ids
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A unit test against the driver's internal library: parsing ranges (a
 * name looked up in /etc/subuid-style files the test writes) and claiming
 * ids in a state directory, where two sessions never hold one uid, a claim
 * of a session that is gone is taken over, and a release gives back only
 * the releasing session's claim. The backend-level behaviour, as root, is
 * in tests/escape/test-escape-session-ids.c.
 */

#include "config.h"

#include <fcntl.h>
#include <unistd.h>

#include "sandbox-bubblewrap-guest-ids-private.h"

typedef struct
{
  char *directory;
  int root_fd;
} Fixture;

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->directory = g_dir_make_tmp ("sandbox-guest-ids-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->root_fd = open (fixture->directory, O_PATH | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fixture->root_fd, >=, 0);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", fixture->directory);

  close (fixture->root_fd);
  g_assert_cmpint (system (command), ==, 0);
  g_free (fixture->directory);
}

/* Writes @contents as @name in the fixture's directory. */
static char *
write_file (Fixture    *fixture,
            const char *name,
            const char *contents)
{
  char *path = g_build_filename (fixture->directory, name, NULL);

  g_assert_true (g_file_set_contents (path, contents, -1, NULL));
  return path;
}

static void
test_parse (Fixture       *fixture,
            gconstpointer  data)
{
  g_autofree char *subuid = write_file (fixture, "subuid",
                                        "alice:100000:65536\n"
                                        "sandbox:200000:1000\n"
                                        "sandbox:900000:5\n");
  g_autofree char *subgid = write_file (fixture, "subgid",
                                        "sandbox:300000:500\n");
  const char *const invalid[] = {
    "", "0:16", "1:65534", "65000:1000", "4294967000:1000", "4294967294:2", "12:0", "x:1",
    "1:2:3", ":", "100000:", "-5:10", "alice", "nobody-here",
  };
  SandboxBubblewrapGuestRange range;
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_bubblewrap_guest_range_parse ("1879048192:65536", subuid, subgid,
                                                       &range, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (range.uid_start, ==, 1879048192);
  g_assert_cmpuint (range.gid_start, ==, 1879048192);
  g_assert_cmpuint (range.count, ==, 65536);

  /* A name: its first range in each file, as long as the shorter. */
  g_assert_true (sandbox_bubblewrap_guest_range_parse ("sandbox", subuid, subgid, &range, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (range.uid_start, ==, 200000);
  g_assert_cmpuint (range.gid_start, ==, 300000);
  g_assert_cmpuint (range.count, ==, 500);

  for (gsize i = 0; i < G_N_ELEMENTS (invalid); i++)
    {
      gboolean parsed = sandbox_bubblewrap_guest_range_parse (invalid[i], subuid, subgid, &range,
                                                              &error);

      g_test_message ("“%s”: %s", invalid[i], error != NULL ? error->message : "accepted");
      g_assert_false (parsed);
      g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
      g_clear_error (&error);
    }
}

static void
test_holds (void)
{
  SandboxBubblewrapGuestRange range = { 1000000, 2000000, 10 };
  SandboxBubblewrapGuest inside = { 1000009, 2000009, TRUE };
  SandboxBubblewrapGuest past = { 1000010, 2000010, TRUE };
  SandboxBubblewrapGuest odd_gid = { 1000001, 2000002, TRUE };
  SandboxBubblewrapGuest host = { 1000001, 2000001, FALSE };

  g_assert_true (sandbox_bubblewrap_guest_range_holds (&range, &inside));
  g_assert_false (sandbox_bubblewrap_guest_range_holds (&range, &past));
  g_assert_false (sandbox_bubblewrap_guest_range_holds (&range, &odd_gid));
  g_assert_false (sandbox_bubblewrap_guest_range_holds (&range, &host));
}

/* Makes the session directory @name below the fixture's directory, as a
 * store does before claiming its ids. */
static void
make_session (Fixture    *fixture,
              const char *name)
{
  g_autofree char *path = g_build_filename (fixture->directory, name, NULL);

  g_assert_cmpint (g_mkdir_with_parents (path, 0700), ==, 0);
}

/* Every id of a range claimed once; then none is left; a release gives
 * one back, to whoever claims next. */
static void
test_claims_are_exclusive (Fixture       *fixture,
                           gconstpointer  data)
{
  SandboxBubblewrapGuestRange range = { 1879048192, 1879048192, 8 };
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);
  g_autoptr(GError) error = NULL;
  SandboxBubblewrapGuest guests[8];
  SandboxBubblewrapGuest extra;

  for (guint i = 0; i < 8; i++)
    {
      g_autofree char *session = g_strdup_printf ("d/sessions/%u", i);

      make_session (fixture, session);
      g_assert_true (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, session,
                                                         &guests[i], &error));
      g_assert_no_error (error);
      g_assert_true (sandbox_bubblewrap_guest_range_holds (&range, &guests[i]));
      g_assert_false (g_hash_table_contains (seen, GUINT_TO_POINTER (guests[i].uid)));
      g_hash_table_add (seen, GUINT_TO_POINTER (guests[i].uid));
      g_assert_true (sandbox_bubblewrap_guest_ids_is_held (fixture->root_fd, &guests[i], session));
    }
  make_session (fixture, "d/sessions/extra");
  g_assert_false (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, "d/sessions/extra",
                                                      &extra, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  /* Another session's release of a claim it does not hold changes nothing. */
  sandbox_bubblewrap_guest_ids_release (fixture->root_fd, &guests[3], "d/sessions/4");
  g_assert_true (sandbox_bubblewrap_guest_ids_is_held (fixture->root_fd, &guests[3],
                                                       "d/sessions/3"));
  g_assert_false (sandbox_bubblewrap_guest_ids_is_held (fixture->root_fd, &guests[3],
                                                        "d/sessions/4"));
  sandbox_bubblewrap_guest_ids_release (fixture->root_fd, &guests[3], "d/sessions/3");
  g_assert_false (sandbox_bubblewrap_guest_ids_is_held (fixture->root_fd, &guests[3],
                                                        "d/sessions/3"));
  g_assert_true (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, "d/sessions/extra",
                                                     &extra, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (extra.uid, ==, guests[3].uid);
  g_assert_cmpuint (extra.gid, ==, guests[3].gid);
}

/* A claim whose session directory is gone is taken over; one whose
 * session exists never is, nor one not of the registry's shape. */
static void
test_stale_claim_taken_over (Fixture       *fixture,
                             gconstpointer  data)
{
  SandboxBubblewrapGuestRange range = { 1879048192, 1879048192, 1 };
  g_autofree char *registry = g_build_filename (fixture->directory, "guest-ids", NULL);
  g_autofree char *entry = g_build_filename (registry, "1879048192", NULL);
  g_autoptr(GError) error = NULL;
  SandboxBubblewrapGuest guest;

  make_session (fixture, "d/sessions/live");
  g_assert_cmpint (g_mkdir_with_parents (registry, 0700), ==, 0);

  /* Outside the state directory: left alone, even though nothing is there. */
  g_assert_cmpint (symlink ("../../gone", entry), ==, 0);
  g_assert_false (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, "d/sessions/live",
                                                      &guest, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);
  g_assert_cmpint (unlink (entry), ==, 0);

  /* A live session's claim stays its own. */
  make_session (fixture, "d/sessions/other");
  g_assert_cmpint (symlink ("d/sessions/other", entry), ==, 0);
  g_assert_false (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, "d/sessions/live",
                                                      &guest, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_clear_error (&error);

  /* Once its directory is gone, it is taken over. */
  {
    g_autofree char *other = g_build_filename (fixture->directory, "d", "sessions", "other", NULL);

    g_assert_cmpint (rmdir (other), ==, 0);
  }
  g_assert_true (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, "d/sessions/live",
                                                     &guest, &error));
  g_assert_no_error (error);
  g_assert_true (sandbox_bubblewrap_guest_ids_is_held (fixture->root_fd, &guest,
                                                       "d/sessions/live"));
}

/* Claims made at once from many threads never share an id. */
static gpointer
claim_in_thread (gpointer data)
{
  Fixture *fixture = ((gpointer *) data)[0];
  const char *session = ((gpointer *) data)[1];
  SandboxBubblewrapGuestRange range = { 1879048192, 1879048192, 64 };
  SandboxBubblewrapGuest *guest = g_new0 (SandboxBubblewrapGuest, 1);
  g_autoptr(GError) error = NULL;

  g_assert_true (sandbox_bubblewrap_guest_ids_claim (fixture->root_fd, &range, session, guest,
                                                     &error));
  g_assert_no_error (error);
  return guest;
}

static void
test_concurrent_claims (Fixture       *fixture,
                        gconstpointer  data)
{
  GThread *threads[32];
  gpointer arguments[32][2];
  g_autoptr(GHashTable) seen = g_hash_table_new (NULL, NULL);

  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      char *session = g_strdup_printf ("d/sessions/%u", i);

      make_session (fixture, session);
      arguments[i][0] = fixture;
      arguments[i][1] = session;
    }
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    threads[i] = g_thread_new ("claim", claim_in_thread, arguments[i]);
  for (guint i = 0; i < G_N_ELEMENTS (threads); i++)
    {
      g_autofree SandboxBubblewrapGuest *guest = g_thread_join (threads[i]);

      g_assert_false (g_hash_table_contains (seen, GUINT_TO_POINTER (guest->uid)));
      g_hash_table_add (seen, GUINT_TO_POINTER (guest->uid));
      g_free (arguments[i][1]);
    }
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/sandbox/bubblewrap/guest-ids/parse", Fixture, NULL, fixture_set_up, test_parse,
              fixture_tear_down);
  g_test_add_func ("/sandbox/bubblewrap/guest-ids/holds", test_holds);
  g_test_add ("/sandbox/bubblewrap/guest-ids/claims-are-exclusive", Fixture, NULL,
              fixture_set_up, test_claims_are_exclusive, fixture_tear_down);
  g_test_add ("/sandbox/bubblewrap/guest-ids/stale-claim-taken-over", Fixture, NULL,
              fixture_set_up, test_stale_claim_taken_over, fixture_tear_down);
  g_test_add ("/sandbox/bubblewrap/guest-ids/concurrent-claims", Fixture, NULL,
              fixture_set_up, test_concurrent_claims, fixture_tear_down);

  return g_test_run ();
}
