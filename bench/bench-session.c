/* bench-session.c — the sessions the sections make, failing loudly
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "bench-session.h"

/* Ends the run when @error is set, saying @what failed. */
void
check (GError     *error,
       const char *what)
{
  if (error != NULL)
    g_error ("%s: %s", what, error->message);
}

/* A bubblewrap backend whose sessions layer over their templates; ends
 * the run where overlays are not available. */
SandboxBackend *
new_layered_backend (const char *state_directory)
{
  g_autoptr(GError) error = NULL;
  g_autofree char *layering = NULL;
  SandboxBackend *backend = sandbox_backend_new ("bubblewrap", NULL, &error,
                                                 "state-directory", state_directory,
                                                 "layering", "auto",
                                                 NULL);

  check (error, "backend");
  g_object_get (backend, "workspace-layering", &layering, NULL);
  if (!g_str_equal (layering, "overlay"))
    g_error ("workspaces are not layered here (%s)", layering);
  return backend;
}

SandboxHandle *
create_session (SandboxBackend       *backend,
                const char           *key,
                SandboxNetworkPolicy *policy)
{
  g_autoptr(GError) error = NULL;
  SandboxHandle *handle = sandbox_backend_create (backend, key, NULL, policy, NULL, &error);

  check (error, "create");
  return handle;
}

void
delete_session (SandboxHandle *handle)
{
  g_autoptr(GError) error = NULL;

  sandbox_handle_delete (handle, NULL, &error);
  check (error, "delete");
}
