/* test-checkpoint.c: workspace checkpoints against a hostile guest and a hostile store
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * No etcd here: a checkpoint is a walk of a real directory into a real blob
 * directory, and materialising one builds a real tree. Each test makes a
 * fresh temporary base holding "workspace" (what the guest controls),
 * "outside" (host files the guest must never get the host to read), "store"
 * (the blob directory) and "resume" (where trees are materialised). The
 * guest is played by the test: links, FIFOs, hard links, racing renames;
 * the hostile store by editing blobs and manifests in place.
 */

#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <glib/gstdio.h>

#include "sandbox-cluster-checkpoint-private.h"

#define SECRET "host secret that no checkpoint may hold"

typedef struct
{
  char *base;
  char *workspace;
  char *outside;
  char *store_path;
  char *resume;
  int workspace_fd;
  int resume_fd;
  SandboxClusterBlobStore *store;
} Fixture;

static char *
in (const char *directory,
    const char *relative)
{
  return g_build_filename (directory, relative, NULL);
}

static void
make_file (const char *directory,
           const char *relative,
           const char *contents,
           guint       mode)
{
  g_autofree char *path = in (directory, relative);
  g_autoptr(GError) error = NULL;

  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
  g_assert_no_errno (chmod (path, mode));
}

static void
make_dir (const char *directory,
          const char *relative,
          guint       mode)
{
  g_autofree char *path = in (directory, relative);

  g_assert_no_errno (g_mkdir_with_parents (path, 0700));
  g_assert_no_errno (chmod (path, mode));
}

static void
make_link (const char *directory,
           const char *relative,
           const char *target)
{
  g_autofree char *path = in (directory, relative);

  g_assert_no_errno (symlink (target, path));
}

static void
fixture_set_up (Fixture       *fixture,
                gconstpointer  data)
{
  g_autoptr(GError) error = NULL;

  fixture->base = g_dir_make_tmp ("test-checkpoint-XXXXXX", &error);
  g_assert_no_error (error);
  fixture->workspace = in (fixture->base, "workspace");
  fixture->outside = in (fixture->base, "outside");
  fixture->store_path = in (fixture->base, "store");
  fixture->resume = in (fixture->base, "resume");
  make_dir (fixture->base, "workspace", 0700);
  make_dir (fixture->base, "outside", 0700);
  make_dir (fixture->base, "resume", 0700);
  make_file (fixture->outside, "secret", SECRET, 0600);

  fixture->workspace_fd = open (fixture->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
  fixture->resume_fd = open (fixture->resume, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (fixture->workspace_fd, >=, 0);
  g_assert_cmpint (fixture->resume_fd, >=, 0);

  fixture->store = SANDBOX_CLUSTER_BLOB_STORE (sandbox_cluster_blob_dir_new (fixture->store_path,
                                                                             &error));
  g_assert_no_error (error);
}

/* Lets the owner remove what tests made read-only (0500 directories). */
static void
make_writable (const char *path)
{
  const char *argv[] = { "chmod", "-R", "u+rwx", path, NULL };
  g_autoptr(GError) error = NULL;
  int status = 0;

  g_spawn_sync (NULL, (char **) argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL, NULL, NULL, &status,
                &error);
  g_assert_no_error (error);
}

static void
fixture_tear_down (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *parent = g_path_get_dirname (fixture->base);
  g_autofree char *name = g_path_get_basename (fixture->base);
  int parent_fd;

  g_clear_object (&fixture->store);
  close (fixture->workspace_fd);
  close (fixture->resume_fd);

  make_writable (fixture->base);
  parent_fd = open (parent, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  g_assert_cmpint (parent_fd, >=, 0);
  sandbox_workspace_remove_tree_at (parent_fd, name, &error);
  g_assert_no_error (error);
  close (parent_fd);

  g_free (fixture->base);
  g_free (fixture->workspace);
  g_free (fixture->outside);
  g_free (fixture->store_path);
  g_free (fixture->resume);
}

static char *
checkpoint (Fixture                       *fixture,
            SandboxClusterCheckpointStats *stats)
{
  g_autoptr(GError) error = NULL;
  char *digest = sandbox_cluster_checkpoint_create (fixture->store, fixture->workspace_fd, NULL,
                                                    stats, NULL, &error);

  g_assert_no_error (error);
  g_assert_true (sandbox_cluster_digest_is_valid (digest));
  return digest;
}

static GPtrArray *
manifest_entries (Fixture    *fixture,
                  const char *digest)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GBytes) bytes = sandbox_cluster_blob_store_get_manifest (fixture->store, digest,
                                                                      SANDBOX_CLUSTER_CHECKPOINT_MAX_MANIFEST_BYTES,
                                                                      NULL, &error);
  GPtrArray *entries;

  g_assert_no_error (error);
  entries = sandbox_cluster_manifest_parse (bytes, NULL, &error);
  g_assert_no_error (error);
  return entries;
}

static const SandboxClusterEntry *
find_entry (GPtrArray  *entries,
            const char *path)
{
  for (guint i = 0; i < entries->len; i++)
    {
      const SandboxClusterEntry *entry = entries->pdata[i];

      if (strcmp (entry->path, path) == 0)
        return entry;
    }
  return NULL;
}

static guint
mode_of (const char *directory,
         const char *relative)
{
  g_autofree char *path = in (directory, relative);
  struct stat st;

  g_assert_no_errno (lstat (path, &st));
  return st.st_mode & 07777;
}

static void
assert_contents (const char *directory,
                 const char *relative,
                 const char *expected)
{
  g_autofree char *path = in (directory, relative);
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;

  g_file_get_contents (path, &contents, NULL, &error);
  g_assert_no_error (error);
  g_assert_cmpstr (contents, ==, expected);
}

static void
assert_link (const char *directory,
             const char *relative,
             const char *target)
{
  g_autofree char *path = in (directory, relative);
  g_autoptr(GError) error = NULL;
  g_autofree char *actual = g_file_read_link (path, &error);

  g_assert_no_error (error);
  g_assert_cmpstr (actual, ==, target);
}

/* Whether @directory holds nothing at all (no half-made tree, no temporary). */
static void
assert_empty (const char *directory)
{
  g_autoptr(GError) error = NULL;
  g_autoptr(GDir) dir = g_dir_open (directory, 0, &error);

  g_assert_no_error (error);
  g_assert_null (g_dir_read_name (dir));
}

static char *
blob_path (Fixture    *fixture,
           const char *digest)
{
  g_autofree char *fan = g_strndup (digest, 2);

  return g_build_filename (fixture->store_path, "blobs", fan, digest, NULL);
}

static char *
manifest_path (Fixture    *fixture,
               const char *digest)
{
  return g_build_filename (fixture->store_path, "manifests", digest, NULL);
}

static char *
digest_of (const char *contents)
{
  return g_compute_checksum_for_string (G_CHECKSUM_SHA256, contents, -1);
}

/* Materialises @digest into resume/@name and expects an UNAVAILABLE refusal
 * that leaves resume/ empty. */
static void
assert_unavailable (Fixture    *fixture,
                    const char *digest)
{
  g_autoptr(GError) error = NULL;

  g_assert_false (sandbox_cluster_checkpoint_materialise (fixture->store, digest, NULL,
                                                          fixture->resume_fd, "ws", NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_test_message ("refused: %s", error->message);
  assert_empty (fixture->resume);
}

/* The workspace a checkout and an agent leave: every kind of entry. */
static void
make_rich_workspace (Fixture *fixture)
{
  const char *ws = fixture->workspace;
  g_autofree char *notes = in (ws, "notes.txt");
  g_autofree char *hard = in (ws, "notes-hard-link");
  g_autofree char *fifo = in (ws, "pipe");

  make_dir (ws, "bin", 0755);
  make_file (ws, "bin/run", "#!/bin/sh\necho run\n", 0755);
  make_file (ws, "notes.txt", "notes\n", 0644);
  make_file (ws, "id_key", "private\n", 0600);
  make_file (ws, "read-only", "frozen\n", 0444);
  make_file (ws, "setuid", "no privileges kept\n", 04755);
  make_file (ws, "zero", "", 0644);
  make_dir (ws, "empty", 0755);
  make_dir (ws, "deep/er/est", 0750);
  make_dir (ws, "locked", 0500);
  make_dir (ws, "shared-tmp", 01777);
  make_link (ws, "relative", "bin/run");
  make_link (ws, "absolute", "/usr/bin/env");
  make_link (ws, "dangling", "nowhere/at/all");
  g_assert_no_errno (link (notes, hard));
  g_assert_no_errno (mkfifo (fifo, 0600));   /* no writer: opening it would block */
}

/* Every kind of entry comes back as it was (modes exactly, minus setuid),
 * the FIFO is skipped without being opened (opening it for reading would
 * block: the test would hang), and a checkpoint of the copy is the same
 * checkpoint. To see it fail, make add_named() open FIFOs like files. */
static void
test_round_trip (Fixture       *fixture,
                 gconstpointer  data)
{
  SandboxClusterCheckpointStats stats = { 0, };
  g_autofree char *digest = NULL;
  g_autofree char *again = NULL;
  g_autofree char *restored = in (fixture->resume, "ws");
  g_autoptr(GError) error = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  g_autofree char *notes = NULL;
  g_autofree char *hard = NULL;
  g_autofree char *pipe = in (restored, "pipe");
  struct stat st_notes, st_hard;
  int restored_fd;

  make_rich_workspace (fixture);
  digest = checkpoint (fixture, &stats);
  g_assert_cmpuint (stats.skipped, ==, 1);   /* the FIFO */
  g_assert_cmpuint (stats.entries, ==, 17);

  entries = manifest_entries (fixture, digest);
  g_assert_null (find_entry (entries, "pipe"));
  g_assert_cmpint (find_entry (entries, "absolute")->kind, ==, SANDBOX_CLUSTER_ENTRY_SYMLINK);
  g_assert_cmpint (find_entry (entries, "deep/er")->kind, ==, SANDBOX_CLUSTER_ENTRY_DIRECTORY);

  g_assert_true (sandbox_cluster_checkpoint_materialise (fixture->store, digest, NULL,
                                                         fixture->resume_fd, "ws", NULL, &error));
  g_assert_no_error (error);

  assert_contents (restored, "bin/run", "#!/bin/sh\necho run\n");
  assert_contents (restored, "notes.txt", "notes\n");
  assert_contents (restored, "notes-hard-link", "notes\n");
  assert_contents (restored, "zero", "");
  g_assert_cmpuint (mode_of (restored, "bin"), ==, 0755);
  g_assert_cmpuint (mode_of (restored, "bin/run"), ==, 0755);
  g_assert_cmpuint (mode_of (restored, "notes.txt"), ==, 0644);
  g_assert_cmpuint (mode_of (restored, "id_key"), ==, 0600);
  g_assert_cmpuint (mode_of (restored, "read-only"), ==, 0444);
  g_assert_cmpuint (mode_of (restored, "setuid"), ==, 0755);
  g_assert_cmpuint (mode_of (restored, "empty"), ==, 0755);
  g_assert_cmpuint (mode_of (restored, "deep/er/est"), ==, 0750);
  g_assert_cmpuint (mode_of (restored, "locked"), ==, 0500);
  g_assert_cmpuint (mode_of (restored, "shared-tmp"), ==, 01777);
  assert_link (restored, "relative", "bin/run");
  assert_link (restored, "absolute", "/usr/bin/env");
  assert_link (restored, "dangling", "nowhere/at/all");
  g_assert_false (g_file_test (pipe, G_FILE_TEST_EXISTS));

  /* Hard links come back as separate copies. */
  notes = in (restored, "notes.txt");
  hard = in (restored, "notes-hard-link");
  g_assert_no_errno (lstat (notes, &st_notes));
  g_assert_no_errno (lstat (hard, &st_hard));
  g_assert_cmpuint (st_notes.st_ino, !=, st_hard.st_ino);

  /* The same tree gives the same manifest, so the same digest. */
  restored_fd = open (restored, O_PATH | O_DIRECTORY | O_CLOEXEC);
  again = sandbox_cluster_checkpoint_create (fixture->store, restored_fd, NULL, NULL, NULL,
                                             &error);
  g_assert_no_error (error);
  g_assert_cmpstr (again, ==, digest);
  close (restored_fd);

  /* Materialising never replaces what is there. */
  g_assert_false (sandbox_cluster_checkpoint_materialise (fixture->store, digest, NULL,
                                                          fixture->resume_fd, "ws", NULL, &error));
  g_assert_error (error, G_IO_ERROR, G_IO_ERROR_EXISTS);
}

/* Only new blobs are written: a second checkpoint of an unchanged
 * 1,000-file workspace writes none (the same manifest, so the same digest),
 * one changed file writes one. To see it fail, make store_file() put every
 * blob without asking has_blob(). */
static void
test_dedup (Fixture       *fixture,
            gconstpointer  data)
{
  SandboxClusterCheckpointStats stats = { 0, };
  g_autofree char *first = NULL;
  g_autofree char *second = NULL;
  g_autofree char *third = NULL;

  for (guint i = 0; i < 1000; i++)
    {
      g_autofree char *name = g_strdup_printf ("src/d%02u/file-%04u.c", i / 100, i);
      g_autofree char *contents = g_strdup_printf ("int f%u (void) { return %u; }\n", i, i);
      g_autofree char *dir = g_path_get_dirname (name);

      make_dir (fixture->workspace, dir, 0755);
      make_file (fixture->workspace, name, contents, 0644);
    }

  first = checkpoint (fixture, &stats);
  g_assert_cmpuint (stats.blobs_written, ==, 1000);
  second = checkpoint (fixture, &stats);
  g_assert_cmpuint (stats.blobs_written, ==, 0);
  g_assert_cmpuint (stats.bytes_written, ==, 0);
  g_assert_cmpstr (second, ==, first);

  make_file (fixture->workspace, "src/d07/file-0700.c", "changed\n", 0644);
  third = checkpoint (fixture, &stats);
  g_assert_cmpuint (stats.blobs_written, ==, 1);
  g_assert_cmpuint (stats.bytes_written, ==, strlen ("changed\n"));
  g_assert_cmpstr (third, !=, first);
}

/* Links to host files are stored as links, never read through: no blob
 * holds the secret (nor /etc/shadow, where this user can read it to
 * compare). To see it fail, make add_named() treat links like what they
 * point to (stat() instead of fstatat(AT_SYMLINK_NOFOLLOW), no O_NOFOLLOW). */
static void
test_links_never_followed (Fixture       *fixture,
                           gconstpointer  data)
{
  g_autofree char *secret_path = in (fixture->outside, "secret");
  g_autofree char *secret_digest = digest_of (SECRET);
  g_autofree char *digest = NULL;
  g_autofree char *shadow = NULL;
  g_autoptr(GPtrArray) entries = NULL;
  SandboxClusterCheckpointStats stats = { 0, };
  gsize shadow_length = 0;

  make_link (fixture->workspace, "shadow", "/etc/shadow");
  make_link (fixture->workspace, "secret", secret_path);
  make_link (fixture->workspace, "outside", fixture->outside);
  make_link (fixture->workspace, "up", "../outside/secret");

  digest = checkpoint (fixture, &stats);
  g_assert_cmpuint (stats.blobs_written, ==, 0);
  entries = manifest_entries (fixture, digest);
  g_assert_cmpuint (entries->len, ==, 4);
  g_assert_cmpint (find_entry (entries, "shadow")->kind, ==, SANDBOX_CLUSTER_ENTRY_SYMLINK);
  g_assert_cmpstr (find_entry (entries, "shadow")->target, ==, "/etc/shadow");
  g_assert_cmpstr (find_entry (entries, "secret")->target, ==, secret_path);
  g_assert_cmpint (find_entry (entries, "outside")->kind, ==, SANDBOX_CLUSTER_ENTRY_SYMLINK);
  g_assert_false (sandbox_cluster_blob_store_has_blob (fixture->store, secret_digest, strlen (SECRET)));

  if (g_file_get_contents ("/etc/shadow", &shadow, &shadow_length, NULL))
    {
      g_autofree char *shadow_digest = g_compute_checksum_for_data (G_CHECKSUM_SHA256,
                                                                    (guint8 *) shadow, shadow_length);

      g_assert_false (sandbox_cluster_blob_store_has_blob (fixture->store, shadow_digest, shadow_length));
    }
}

typedef struct
{
  Fixture *fixture;
  gint stop;
  guint swaps;
} Racer;

/* The guest: swaps a directory and a file for links to outside and back,
 * as fast as it can, between the walk's listing and its open. */
static gpointer
race_renames (gpointer data)
{
  Racer *racer = data;
  const char *ws = racer->fixture->workspace;
  g_autofree char *dir = in (ws, "dir");
  g_autofree char *dir_moved = in (ws, "dir.moved");
  g_autofree char *file = in (ws, "file");
  g_autofree char *file_moved = in (ws, "dir.moved/file.moved");
  g_autofree char *secret = in (racer->fixture->outside, "secret");

  while (!g_atomic_int_get (&racer->stop))
    {
      /* dir -> link to outside/, file -> link to outside/secret */
      if (rename (dir, dir_moved) == 0)
        {
          symlink (racer->fixture->outside, dir);
          rename (file, file_moved);
          symlink (secret, file);
          g_thread_yield ();
          unlink (file);
          rename (file_moved, file);
          unlink (dir);
          rename (dir_moved, dir);
        }
      racer->swaps++;
    }
  return NULL;
}

/* A guest racing renames and link swaps while checkpoints walk never gets
 * the secret outside read: hundreds of checkpoints under the race, none
 * stores it (each may see the workspace in any state; what it sees parses).
 * To see it fail, drop O_NOFOLLOW from the opens in add_directory() and
 * add_file(): the walk then follows a swapped-in link out of the workspace
 * (here in two runs out of three within the 3 s; with it, never). */
static void
test_racing_renames (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *secret_digest = digest_of (SECRET);
  Racer racer = { fixture, 0, 0 };
  GThread *thread;
  guint rounds = 0;
  gint64 end;

  make_dir (fixture->workspace, "dir", 0755);
  make_file (fixture->workspace, "dir/inside", "inside\n", 0644);
  make_file (fixture->workspace, "file", "file\n", 0644);
  /* The walk visits outside/ if it ever follows "dir": give it a file
   * named like the one it expects. */
  make_file (fixture->outside, "inside", SECRET, 0600);

  thread = g_thread_new ("guest", race_renames, &racer);
  end = g_get_monotonic_time () + 3 * G_USEC_PER_SEC;
  while (rounds < 200 || (g_get_monotonic_time () < end && rounds < 5000))
    {
      g_autoptr(GError) error = NULL;
      g_autofree char *digest = sandbox_cluster_checkpoint_create (fixture->store,
                                                                   fixture->workspace_fd,
                                                                   NULL, NULL, NULL, &error);

      /* A walk may also find the racer mid-rename (ENOENT on a moved
       * directory's entry is a skip, never an escape). */
      g_assert_no_error (error);
      g_assert_false (sandbox_cluster_blob_store_has_blob (fixture->store, secret_digest,
                                                           strlen (SECRET)));
      rounds++;
    }
  g_atomic_int_set (&racer.stop, 1);
  g_thread_join (thread);
  g_test_message ("%u checkpoints against %u swaps", rounds, racer.swaps);
  g_assert_cmpuint (racer.swaps, >, 0);
}

/* Replaces the bytes of a stored object in place (as a disk or a hostile
 * host sharing the store would). */
static void
overwrite (const char *path,
           const char *contents)
{
  g_autoptr(GError) error = NULL;

  g_assert_no_errno (chmod (path, 0600));
  g_file_set_contents (path, contents, -1, &error);
  g_assert_no_error (error);
}

/* A blob whose bytes are not what its name says (same size, so only the
 * hash can tell) makes the resume fail with UNAVAILABLE and leaves nothing:
 * never a workspace with wrong content. To see it fail, drop the digest
 * comparison in copy_blob(). */
static void
test_corrupted_blob (Fixture       *fixture,
                     gconstpointer  data)
{
  g_autofree char *digest = NULL;
  g_autofree char *blob = NULL;
  g_autofree char *blob_digest = digest_of ("genuine contents\n");

  make_dir (fixture->workspace, "src", 0755);
  make_file (fixture->workspace, "src/a", "first file\n", 0644);
  make_file (fixture->workspace, "src/b", "genuine contents\n", 0644);
  digest = checkpoint (fixture, NULL);

  blob = blob_path (fixture, blob_digest);
  overwrite (blob, "forged  contents\n");
  assert_unavailable (fixture, digest);

  /* Longer than claimed: the copy reads one byte past the size and stops. */
  overwrite (blob, "genuine contents\nand more");
  assert_unavailable (fixture, digest);

  /* Shorter. */
  overwrite (blob, "genuine");
  assert_unavailable (fixture, digest);
}

/* A missing blob is UNAVAILABLE, and nothing is left. To see it fail, make
 * materialise_tree() skip entries it cannot copy. */
static void
test_missing_blob (Fixture       *fixture,
                   gconstpointer  data)
{
  g_autofree char *digest = NULL;
  g_autofree char *blob = NULL;
  g_autofree char *blob_digest = digest_of ("will be lost\n");

  make_dir (fixture->workspace, "a/b", 0755);
  make_file (fixture->workspace, "a/b/c", "will be lost\n", 0644);
  make_file (fixture->workspace, "a/first", "kept\n", 0644);
  digest = checkpoint (fixture, NULL);

  blob = blob_path (fixture, blob_digest);
  g_assert_no_errno (unlink (blob));
  assert_unavailable (fixture, digest);
}

/* A manifest cut short (or otherwise changed) no longer hashes to its name:
 * UNAVAILABLE before anything is made. To see it fail, drop the digest
 * check in sandbox_cluster_blob_dir_get_manifest() (the truncated JSON then
 * fails to parse, still UNAVAILABLE: the prefix case below parses). */
static void
test_truncated_manifest (Fixture       *fixture,
                         gconstpointer  data)
{
  g_autofree char *digest = NULL;
  g_autofree char *path = NULL;
  g_autofree char *contents = NULL;
  g_autoptr(GError) error = NULL;
  gsize length = 0;

  make_file (fixture->workspace, "a", "a\n", 0644);
  digest = checkpoint (fixture, NULL);
  path = manifest_path (fixture, digest);
  g_file_get_contents (path, &contents, &length, &error);
  g_assert_no_error (error);

  contents[length / 2] = '\0';
  overwrite (path, contents);
  assert_unavailable (fixture, digest);

  /* A valid, smaller manifest under the old name: still refused. */
  overwrite (path, "{\"version\":2,\"session\":null,\"entries\":[]}");
  assert_unavailable (fixture, digest);

  /* Gone. */
  g_assert_no_errno (unlink (path));
  assert_unavailable (fixture, digest);
}

/* Manifests a hostile host sharing the store could write (each hashes to
 * its name: the store computes it). Each is refused with UNAVAILABLE before
 * anything is created, and nothing appears outside resume/ either. */
static const char *const hostile_manifests[] = {
  /* paths */
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"../escaped\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"/tmp/escaped\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"a/../../escaped\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\".\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"a//b\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"a/\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"escaped\\u0000/../x\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"\\u0000\",\"kind\":\"directory\",\"mode\":493}]}",
  /* duplicates and order */
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"a\",\"kind\":\"directory\",\"mode\":493},"
  "{\"path\":\"a\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"b\",\"kind\":\"directory\",\"mode\":493},"
  "{\"path\":\"a\",\"kind\":\"directory\",\"mode\":493}]}",
  /* a parent that is a link, or missing: never written through */
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"l\",\"kind\":\"symlink\",\"target\":\"@OUTSIDE@\"},"
  "{\"path\":\"l/escaped\",\"kind\":\"directory\",\"mode\":493}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"missing/escaped\",\"kind\":\"directory\",\"mode\":493}]}",
  /* sizes */
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":1099511627777,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":1099511627776,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":99999999999999999999999,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":-1,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":3.0,\"sha256\":\"@BLOB@\"}]}",
  /* modes, digests, kinds, members */
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":2541,"
  "\"size\":3,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":932,"
  "\"size\":3,\"sha256\":\"@BLOB@\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"d\",\"kind\":\"directory\",\"mode\":2541}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":3,\"sha256\":\"../../../../etc/passwd\"}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,\"size\":3}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"file\",\"mode\":420,"
  "\"size\":3,\"sha256\":\"@BLOB@\",\"uid\":0}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\",\"kind\":\"fifo\",\"mode\":420}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"d\",\"kind\":\"directory\",\"mode\":493,\"mode\":511}]}",
  "{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"l\",\"kind\":\"symlink\",\"target\":\"\"}]}",
  /* the whole */
  "{\"version\":2,\"session\":null,\"entries\":[/* a comment */]}",
  "{\"version\":2,\"session\":null, \"entries\":[]}",
  "{\"version\":2,\"entries\":[]}",
  "{\"version\":2,\"session\":\"\",\"entries\":[]}",
  "{\"version\":2,\"session\":7,\"entries\":[]}",
  "{\"version\":2,\"entries\":[],\"session\":null}",
  /* Version 1 named no session: no longer read. */
  "{\"version\":1,\"entries\":[]}",
  "{\"entries\":[]}",
  "[]",
  "",
  "not json",
};

static GString *
expand_hostile (Fixture    *fixture,
                const char *manifest,
                const char *blob)
{
  GString *text = g_string_new (manifest);

  g_string_replace (text, "@OUTSIDE@", fixture->outside, 0);
  g_string_replace (text, "@BLOB@", blob, 0);
  return text;
}

/* To see it fail, drop any one check in parse_entry() or the canonical-form
 * comparison in sandbox_cluster_manifest_parse(): the case it guards is
 * then materialised (the "escaped" ones outside resume/). */
static void
test_hostile_manifests (Fixture       *fixture,
                        gconstpointer  data)
{
  g_autoptr(GInputStream) abc = g_memory_input_stream_new_from_data ("abc", 3, NULL);
  g_autofree char *blob = NULL;
  g_autofree char *escaped = in (fixture->base, "escaped");
  g_autofree char *escaped_outside = in (fixture->outside, "escaped");
  g_autoptr(GError) error = NULL;
  guint64 size = 0;

  g_assert_true (sandbox_cluster_blob_store_put_blob (fixture->store, abc, G_MAXUINT64, &blob,
                                                      &size, NULL, &error));
  g_assert_no_error (error);
  g_assert_cmpuint (size, ==, 3);

  for (guint i = 0; i < G_N_ELEMENTS (hostile_manifests); i++)
    {
      g_autoptr(GString) text = expand_hostile (fixture, hostile_manifests[i], blob);
      g_autoptr(GBytes) bytes = g_bytes_new (text->str, text->len);
      g_autofree char *digest = NULL;

      g_test_message ("hostile manifest %u: %s", i, text->str);
      digest = sandbox_cluster_blob_store_put_manifest (fixture->store, bytes, NULL, &error);
      g_assert_no_error (error);
      assert_unavailable (fixture, digest);
      g_assert_false (g_file_test (escaped, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test (escaped_outside, G_FILE_TEST_EXISTS));
      g_assert_false (g_file_test ("/tmp/escaped", G_FILE_TEST_EXISTS));
    }

  /* The accepted form of the same shape, as a control: it materialises. */
  {
    g_autofree char *text = g_strdup_printf ("{\"version\":2,\"session\":null,\"entries\":[{\"path\":\"f\","
                                             "\"kind\":\"file\",\"mode\":420,\"size\":3,"
                                             "\"sha256\":\"%s\"}]}", blob);
    g_autoptr(GBytes) bytes = g_bytes_new (text, strlen (text));
    g_autofree char *digest = sandbox_cluster_blob_store_put_manifest (fixture->store, bytes,
                                                                       NULL, &error);
    g_autofree char *restored = in (fixture->resume, "ws");

    g_assert_no_error (error);
    g_assert_true (sandbox_cluster_checkpoint_materialise (fixture->store, digest, NULL,
                                                           fixture->resume_fd, "ws", NULL, &error));
    g_assert_no_error (error);
    assert_contents (restored, "f", "abc");
  }

  /* A digest that is not one never names a file. */
  g_assert_null (sandbox_cluster_blob_store_get_manifest (fixture->store, "../../secret",
                                                          1024, NULL, &error));
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);
}

/* A manifest hashes to its name, but whoever can write the shared store can
 * still write one nested a million levels deep: json-glib alone recurses once
 * per level and overflows the resuming host's stack (found by
 * tests/fuzz/fuzz-cluster-manifest.c). It must be refused like any other. */
static void
test_deeply_nested_manifest (Fixture       *fixture,
                             gconstpointer  data)
{
  const gsize depth = 1000000;
  g_autoptr(GString) text = g_string_new ("{\"version\":2,\"session\":null,\"entries\":");
  g_autoptr(GBytes) bytes = NULL;
  g_autofree char *digest = NULL;
  g_autoptr(GError) error = NULL;

  for (gsize i = 0; i < depth; i++)
    g_string_append_c (text, '[');
  for (gsize i = 0; i < depth; i++)
    g_string_append_c (text, ']');
  g_string_append_c (text, '}');
  bytes = g_string_free_to_bytes (g_steal_pointer (&text));

  digest = sandbox_cluster_blob_store_put_manifest (fixture->store, bytes, NULL, &error);
  g_assert_no_error (error);
  assert_unavailable (fixture, digest);
}

/* Materialises @digest as @session_id's (NULL: a template's) into
 * resume/ws: refused with UNAVAILABLE, leaving resume/ empty, unless
 * @expected. */
static void
assert_bound (Fixture    *fixture,
              const char *digest,
              const char *session_id,
              gboolean    expected)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *restored = in (fixture->resume, "ws");
  gboolean made = sandbox_cluster_checkpoint_materialise (fixture->store, digest, session_id,
                                                          fixture->resume_fd, "ws", NULL,
                                                          &error);

  if (expected)
    {
      g_assert_no_error (error);
      g_assert_true (made);
      assert_contents (restored, "a", "a\n");
      sandbox_workspace_remove_tree_at (fixture->resume_fd, "ws", NULL);
      return;
    }
  g_assert_false (made);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE);
  g_test_message ("refused: %s", error->message);
  g_assert_nonnull (strstr (error->message, digest));
  assert_empty (fixture->resume);
}

/* A checkpoint names its session: it materialises for that session only,
 * and a template's for no session. To see it fail, make check_bound()
 * (checkpoint-materialise.c) return TRUE: a record could then point one
 * session at another's checkpoint. */
static void
test_bound_to_session (Fixture       *fixture,
                       gconstpointer  data)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *of_s1 = NULL;
  g_autofree char *of_template = NULL;

  make_file (fixture->workspace, "a", "a\n", 0644);
  of_s1 = sandbox_cluster_checkpoint_create (fixture->store, fixture->workspace_fd, "s1", NULL,
                                             NULL, &error);
  g_assert_no_error (error);
  of_template = checkpoint (fixture, NULL);
  /* The same files, another binding: another manifest. */
  g_assert_cmpstr (of_s1, !=, of_template);

  assert_bound (fixture, of_s1, "s1", TRUE);
  assert_bound (fixture, of_s1, "s2", FALSE);
  assert_bound (fixture, of_s1, NULL, FALSE);
  assert_bound (fixture, of_template, NULL, TRUE);
  assert_bound (fixture, of_template, "s1", FALSE);
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);

  g_test_add ("/checkpoint/bound-to-session", Fixture, NULL, fixture_set_up,
              test_bound_to_session, fixture_tear_down);
  g_test_add ("/checkpoint/round-trip", Fixture, NULL, fixture_set_up, test_round_trip,
              fixture_tear_down);
  g_test_add ("/checkpoint/dedup", Fixture, NULL, fixture_set_up, test_dedup, fixture_tear_down);
  g_test_add ("/checkpoint/links-never-followed", Fixture, NULL, fixture_set_up,
              test_links_never_followed, fixture_tear_down);
  g_test_add ("/checkpoint/racing-renames", Fixture, NULL, fixture_set_up, test_racing_renames,
              fixture_tear_down);
  g_test_add ("/checkpoint/corrupted-blob", Fixture, NULL, fixture_set_up, test_corrupted_blob,
              fixture_tear_down);
  g_test_add ("/checkpoint/missing-blob", Fixture, NULL, fixture_set_up, test_missing_blob,
              fixture_tear_down);
  g_test_add ("/checkpoint/truncated-manifest", Fixture, NULL, fixture_set_up,
              test_truncated_manifest, fixture_tear_down);
  g_test_add ("/checkpoint/hostile-manifests", Fixture, NULL, fixture_set_up,
              test_hostile_manifests, fixture_tear_down);
  g_test_add ("/checkpoint/deeply-nested-manifest", Fixture, NULL, fixture_set_up,
              test_deeply_nested_manifest, fixture_tear_down);

  return g_test_run ();
}
