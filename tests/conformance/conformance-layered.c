/* conformance-layered.c — the conformance suite on layered bubblewrap sessions
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 *   conformance-layered BWRAP
 *
 * The suite as sandbox-conformance runs it for the bubblewrap driver, with
 * the run's SANDBOX_TEST_LAYERING (tests/kit/sandbox-test-backend.h) as
 * the `layering` property. The suite makes its backends itself, so this
 * checks what they choose on a backend of its own, on the same state
 * directory (the probe's answer depends on the kernel, the directory's
 * filesystem and the guest ids, which the suite's backends share): with
 * "auto", overlay, or the run fails rather than quietly testing copies.
 * Prints TAP; exits 1 when a check failed.
 */

#include <stdio.h>
#include <stdlib.h>

#include <gio/gunixoutputstream.h>
#include <sandbox-conformance.h>

#include "sandbox-test-backend.h"

static void
set_string (SandboxConformance *suite,
            const char         *name,
            const char         *text)
{
  g_auto(GValue) value = G_VALUE_INIT;

  g_value_init (&value, G_TYPE_STRING);
  g_value_set_string (&value, text);
  sandbox_conformance_set_backend_property (suite, name, &value);
}

int
main (int   argc,
      char *argv[])
{
  g_autoptr(SandboxConformance) suite = NULL;
  g_autoptr(SandboxBackend) backend = NULL;
  g_autoptr(GOutputStream) out = NULL;
  g_autoptr(GError) error = NULL;
  g_autofree char *directory = NULL;
  g_autofree char *command = NULL;
  const char *layering = sandbox_test_layering ();
  gboolean ran;

  if (argc != 2 || layering == NULL)
    {
      g_printerr ("usage: %s=auto|copy conformance-layered BWRAP\n",
                  SANDBOX_TEST_LAYERING_VARIABLE);
      return 2;
    }
  directory = g_dir_make_tmp ("sandbox-conformance-layered-XXXXXX", &error);
  if (directory == NULL)
    {
      printf ("Bail out! %s\n", error->message);
      return 2;
    }
  /* Fails the run unless the layering asked for is the one chosen. */
  backend = sandbox_test_bubblewrap_new (directory, &error, "executable", argv[1], NULL);
  if (backend == NULL)
    {
      printf ("Bail out! %s\n", error->message);
      return 2;
    }
  g_clear_object (&backend);

  suite = sandbox_conformance_new ("bubblewrap", SANDBOX_CONFORMANCE_FLAGS_NONE);
  set_string (suite, "executable", argv[1]);
  set_string (suite, "state-directory", directory);
  set_string (suite, "layering", layering);
  out = g_unix_output_stream_new (STDOUT_FILENO, FALSE);
  ran = sandbox_conformance_run (suite, out, NULL, &error);
  if (!ran)
    g_printerr ("conformance-layered: %s\n", error->message);

  command = g_strdup_printf ("rm -rf --one-file-system '%s'", directory);
  if (system (command) != 0)
    g_printerr ("conformance-layered: could not remove %s\n", directory);
  if (!ran)
    return 2;
  return sandbox_conformance_get_n_failed (suite) == 0 ? 0 : 1;
}
