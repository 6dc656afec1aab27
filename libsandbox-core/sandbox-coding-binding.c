/* sandbox-coding-binding.c — what a backend offers the coding tools
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-coding-binding.h"
#include "sandbox-error.h"
#include "sandbox-log-private.h"
#include "sandbox-path.h"

/**
 * SandboxCodingBinding:
 *
 * The host-only view of a live session that [class@Sandbox.CodingTools] builds on:
 * the restrictions the session guarantees and the policy revision they
 * belong to, whether the session is still active, a contained directory
 * listing, and spawning a prepared launch through the session's own
 * admission.
 *
 * A backend returns it from [struct@Sandbox.HandleClass].get_coding_binding; a
 * backend without one makes [method@Sandbox.Handle.get_coding_binding] return
 * %NULL and [class@Sandbox.CodingTools] refuses it. The binding holds no secret and
 * no host path a model could see, but it is never serialized nor exposed
 * in tool results either.
 */

G_DEFINE_INTERFACE (SandboxCodingBinding, sandbox_coding_binding, G_TYPE_OBJECT)

static void
sandbox_coding_binding_default_init (SandboxCodingBindingInterface *iface)
{
}

/**
 * sandbox_coding_binding_check_active:
 * @self: a [iface@Sandbox.CodingBinding]
 * @error: return location for a #GError
 *
 * Checks that the session is still live.
 *
 * Returns: %TRUE while the session is live; %FALSE with
 *   %SANDBOX_ERROR_STOPPED once it is stopped
 */
gboolean
sandbox_coding_binding_check_active (SandboxCodingBinding  *self,
                                     GError               **error)
{
  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), FALSE);
  g_return_val_if_fail (error == NULL || *error == NULL, FALSE);

  return SANDBOX_CODING_BINDING_GET_IFACE (self)->check_active (self, error);
}

/**
 * sandbox_coding_binding_get_restrictions:
 * @self: a [iface@Sandbox.CodingBinding]
 * @revision: (out) (optional): the policy revision the restrictions belong to
 *
 * The restrictions the session guarantees now, such as
 * %SANDBOX_RESTRICTION_WRITE_CONTAINED; %SANDBOX_RESTRICTION_NETWORK_DENIED
 * only under a deny-all policy. Every network policy change increments the
 * revision.
 *
 * Returns: (transfer full) (array zero-terminated=1): the restrictions
 */
char **
sandbox_coding_binding_get_restrictions (SandboxCodingBinding *self,
                                         guint64              *revision)
{
  guint64 ignored;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), NULL);

  return SANDBOX_CODING_BINDING_GET_IFACE (self)->get_restrictions (self,
                                                                     revision ? revision : &ignored);
}

/**
 * sandbox_coding_binding_list_directory:
 * @self: a [iface@Sandbox.CodingBinding]
 * @path: a canonical workspace path (`/workspace` or `/workspace/…`)
 * @max_entries: the most entries to return (at least 1)
 * @truncated: (out) (optional): set to whether entries were left out
 * @cancellable: (nullable): a #GCancellable
 * @error: return location for a #GError
 *
 * Lists a workspace directory without following symbolic links out of the
 * workspace. Blocking.
 *
 * Returns: (transfer full): a `a(sst)` #GVariant of (name, type, size)
 *   entries, type being "file", "directory", "symlink" or "other"; or %NULL
 *   with @error set
 */
GVariant *
sandbox_coding_binding_list_directory (SandboxCodingBinding  *self,
                                       const char            *path,
                                       guint                  max_entries,
                                       gboolean              *truncated,
                                       GCancellable          *cancellable,
                                       GError               **error)
{
  g_autofree char *canonical = NULL;
  gboolean ignored;
  GVariant *entries;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), NULL);
  g_return_val_if_fail (path != NULL, NULL);
  g_return_val_if_fail (max_entries > 0, NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  /* Backends receive canonical paths only, as SandboxDriver does. */
  canonical = sandbox_path_canonicalize (path, error);
  if (canonical == NULL)
    return NULL;
  if (g_cancellable_set_error_if_cancelled (cancellable, error))
    return NULL;

  entries = SANDBOX_CODING_BINDING_GET_IFACE (self)->list_directory (self, canonical, max_entries,
                                                                     truncated ? truncated : &ignored,
                                                                     cancellable, error);
  /* A backend may return a floating or a full reference: own exactly one. */
  if (entries != NULL)
    entries = g_variant_take_ref (entries);
  if (entries != NULL && !g_variant_is_of_type (entries, G_VARIANT_TYPE ("a(sst)")))
    {
      g_critical ("%s returned a listing of type %s, not a(sst)",
                  G_OBJECT_TYPE_NAME (self), g_variant_get_type_string (entries));
      g_variant_unref (entries);
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                           "Backend returned an invalid directory listing");
      return NULL;
    }
  return entries;
}

/**
 * sandbox_coding_binding_spawn:
 * @self: a [iface@Sandbox.CodingBinding]
 * @command: the command to start
 * @revision: the policy revision the launch was prepared at
 * @cancellable: (nullable): cancels the command
 * @error: return location for a #GError
 *
 * Starts @command under the session's admission limit, shared with direct
 * commands (%SANDBOX_ERROR_BUSY when it is reached), unless the network
 * policy changed since @revision (%SANDBOX_ERROR_BUSY "Sandbox policy
 * changed after command preparation") or the session is stopped
 * (%SANDBOX_ERROR_STOPPED).
 *
 * Returns: (transfer full): the running process, or %NULL with @error set
 */
SandboxProcess *
sandbox_coding_binding_spawn (SandboxCodingBinding  *self,
                              SandboxCommand        *command,
                              guint64                revision,
                              GCancellable          *cancellable,
                              GError               **error)
{
  SandboxProcess *process;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), NULL);
  g_return_val_if_fail (SANDBOX_IS_COMMAND (command), NULL);
  g_return_val_if_fail (error == NULL || *error == NULL, NULL);

  process = SANDBOX_CODING_BINDING_GET_IFACE (self)->spawn (self, command, revision,
                                                            cancellable, error);
  sandbox_log_spawned (self, process, error);
  return process;
}

/**
 * sandbox_coding_binding_get_workspace_layering:
 * @self: a [iface@Sandbox.CodingBinding]
 *
 * How the session's workspace is made: an overlay on the template
 * (%SANDBOX_WORKSPACE_LAYERING_OVERLAY) or a copy of it
 * (%SANDBOX_WORKSPACE_LAYERING_COPY), the fallback where overlays are
 * refused. A binding that does not say is a copy.
 *
 * Returns: (transfer none): %SANDBOX_WORKSPACE_LAYERING_OVERLAY or
 *   %SANDBOX_WORKSPACE_LAYERING_COPY
 */
const char *
sandbox_coding_binding_get_workspace_layering (SandboxCodingBinding *self)
{
  SandboxCodingBindingInterface *iface;
  const char *layering;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), NULL);

  iface = SANDBOX_CODING_BINDING_GET_IFACE (self);
  if (iface->get_workspace_layering == NULL)
    return SANDBOX_WORKSPACE_LAYERING_COPY;
  layering = iface->get_workspace_layering (self);
  /* Callers compare against the two constants: never pass on anything else. */
  if (g_strcmp0 (layering, SANDBOX_WORKSPACE_LAYERING_OVERLAY) == 0)
    return SANDBOX_WORKSPACE_LAYERING_OVERLAY;
  if (g_strcmp0 (layering, SANDBOX_WORKSPACE_LAYERING_COPY) != 0)
    g_critical ("%s reported workspace layering \"%s\", not \"overlay\" or \"copy\"",
                G_OBJECT_TYPE_NAME (self), layering ? layering : "(null)");
  return SANDBOX_WORKSPACE_LAYERING_COPY;
}

/**
 * sandbox_coding_binding_get_landlock_abi:
 * @self: a [iface@Sandbox.CodingBinding]
 *
 * The Landlock ABI the session's sandboxes are scoped with: from 6 on,
 * abstract UNIX sockets made outside a sandbox refuse its guest and
 * processes outside it cannot be signalled from it, a wall beside the
 * namespaces. 0 when the backend applies no Landlock scoping (an older
 * kernel, or a backend that does not say).
 *
 * Returns: the Landlock ABI, or 0
 */
guint
sandbox_coding_binding_get_landlock_abi (SandboxCodingBinding *self)
{
  SandboxCodingBindingInterface *iface;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), 0);

  iface = SANDBOX_CODING_BINDING_GET_IFACE (self);
  return iface->get_landlock_abi != NULL ? iface->get_landlock_abi (self) : 0;
}

/**
 * sandbox_coding_binding_get_runtime:
 * @self: a [iface@Sandbox.CodingBinding]
 *
 * The runtime the session's commands run on: the key its template names
 * ([method@Sandbox.Template.set_runtime]). A binding that does not say runs
 * on the host's.
 *
 * Returns: (transfer none) (nullable): the runtime's key, or %NULL for the
 *   host's /usr
 */
const char *
sandbox_coding_binding_get_runtime (SandboxCodingBinding *self)
{
  SandboxCodingBindingInterface *iface;

  g_return_val_if_fail (SANDBOX_IS_CODING_BINDING (self), NULL);

  iface = SANDBOX_CODING_BINDING_GET_IFACE (self);
  return iface->get_runtime != NULL ? iface->get_runtime (self) : NULL;
}

