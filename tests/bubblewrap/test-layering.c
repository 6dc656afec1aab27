/* test-layering.c — layered (overlay) workspaces of the bubblewrap backend
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Real bwrap, real overlayfs in the sandbox's user namespace. Run as root
 * and as the unprivileged sandbox-test (run-unprivileged.sh).
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sandbox.h>

static SandboxBackend *
new_backend (const char  *state_directory,
             const char  *layering,
             GError     **error)
{
  return sandbox_backend_new ("bubblewrap", NULL, error,
                              "state-directory", state_directory,
                              "layering", layering,
                              NULL);
}

static char *
backend_layering (SandboxBackend *backend)
{
  char *value = NULL;

  g_object_get (backend, "workspace-layering", &value, NULL);
  return value;
}

static void
remove_directory (const char *path)
{
  g_autofree char *command = g_strdup_printf ("rm -rf '%s'", path);

  g_assert_cmpint (system (command), ==, 0);
}

/* The probe finds overlays usable on this kernel (6.x, ext4 or tmpfs: the
 * CI machines are the same kind); "copy" forces copies; anything else is
 * refused. */
static void
test_property (void)
{
  g_autofree char *state_directory = g_dir_make_tmp ("sandbox-layering-XXXXXX", NULL);
  g_autoptr(GError) error = NULL;
  g_autoptr(SandboxBackend) automatic = NULL;
  g_autoptr(SandboxBackend) copy = NULL;
  g_autoptr(SandboxBackend) bogus = NULL;
  g_autofree char *automatic_layering = NULL;
  g_autofree char *copy_layering = NULL;
  g_autoptr(GDir) dir = NULL;
  const char *name;

  automatic = new_backend (state_directory, "auto", &error);
  g_assert_no_error (error);
  automatic_layering = backend_layering (automatic);
  g_assert_cmpstr (automatic_layering, ==, "overlay");

  copy = new_backend (state_directory, "copy", &error);
  g_assert_no_error (error);
  copy_layering = backend_layering (copy);
  g_assert_cmpstr (copy_layering, ==, "copy");

  bogus = new_backend (state_directory, "overlayfs", &error);
  g_assert_null (bogus);
  g_assert_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID);

  /* The probe leaves nothing behind in the store. */
  dir = g_dir_open (state_directory, 0, NULL);
  g_assert_nonnull (dir);
  while ((name = g_dir_read_name (dir)) != NULL)
    {
      g_autofree char *path = g_build_filename (state_directory, name, NULL);
      g_autoptr(GDir) store = g_dir_open (path, 0, NULL);
      const char *entry;

      g_assert_false (g_str_has_prefix (name, ".overlay-probe-"));
      while (store != NULL && (entry = g_dir_read_name (store)) != NULL)
        g_assert_false (g_str_has_prefix (entry, ".overlay-probe-"));
    }
  remove_directory (state_directory);
}

int
main (int   argc,
      char *argv[])
{
  g_test_init (&argc, &argv, NULL);

  g_test_add_func ("/sandbox/layering/property", test_property);

  return g_test_run ();
}
