/* sandbox-runtime-info.c — a stored runtime, as a backend lists it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-runtime-info.h"

/**
 * SandboxRuntimeInfo:
 *
 * A runtime a backend stores, as [method@Sandbox.Backend.list_runtimes]
 * reports it: its content-addressed key (what
 * [method@Sandbox.Backend.import_runtime] returned), its size, and how many
 * stored templates name it and stored sessions run on it (while a template
 * names it, [method@Sandbox.Backend.delete_runtime] refuses it). Immutable.
 */
struct _SandboxRuntimeInfo
{
  GObject parent_instance;

  char *key;
  guint64 n_entries;
  guint64 n_bytes;
  guint n_templates;
  guint n_sessions;
};

G_DEFINE_FINAL_TYPE (SandboxRuntimeInfo, sandbox_runtime_info, G_TYPE_OBJECT)

static void
sandbox_runtime_info_finalize (GObject *object)
{
  SandboxRuntimeInfo *self = SANDBOX_RUNTIME_INFO (object);

  g_free (self->key);

  G_OBJECT_CLASS (sandbox_runtime_info_parent_class)->finalize (object);
}

static void
sandbox_runtime_info_class_init (SandboxRuntimeInfoClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_runtime_info_finalize;
}

static void
sandbox_runtime_info_init (SandboxRuntimeInfo *self)
{
}

/**
 * sandbox_runtime_info_new:
 * @key: the runtime's key
 * @n_entries: how many entries its tree holds (files and links)
 * @n_bytes: how many bytes its regular files hold
 * @n_templates: how many stored templates name it
 * @n_sessions: how many stored sessions were created from those templates
 *
 * Creates a runtime record; backends make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.RuntimeInfo]
 */
SandboxRuntimeInfo *
sandbox_runtime_info_new (const char *key,
                          guint64     n_entries,
                          guint64     n_bytes,
                          guint       n_templates,
                          guint       n_sessions)
{
  SandboxRuntimeInfo *self;

  g_return_val_if_fail (key != NULL, NULL);

  self = g_object_new (SANDBOX_TYPE_RUNTIME_INFO, NULL);
  self->key = g_strdup (key);
  self->n_entries = n_entries;
  self->n_bytes = n_bytes;
  self->n_templates = n_templates;
  self->n_sessions = n_sessions;
  return self;
}

/**
 * sandbox_runtime_info_get_key:
 * @self: a [class@Sandbox.RuntimeInfo]
 *
 * Gets the runtime's content-addressed key, which templates name.
 *
 * Returns: (transfer none): the runtime's key: 64 lowercase hex digits
 */
const char *
sandbox_runtime_info_get_key (SandboxRuntimeInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_RUNTIME_INFO (self), NULL);

  return self->key;
}

/**
 * sandbox_runtime_info_get_n_entries:
 * @self: a [class@Sandbox.RuntimeInfo]
 *
 * Gets how many entries the runtime's tree holds: its files and symbolic
 * links (directories are not counted).
 *
 * Returns: the number of entries
 */
guint64
sandbox_runtime_info_get_n_entries (SandboxRuntimeInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_RUNTIME_INFO (self), 0);

  return self->n_entries;
}

/**
 * sandbox_runtime_info_get_n_bytes:
 * @self: a [class@Sandbox.RuntimeInfo]
 *
 * Gets the runtime's size: what its regular files hold.
 *
 * Returns: how many bytes the runtime's regular files hold
 */
guint64
sandbox_runtime_info_get_n_bytes (SandboxRuntimeInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_RUNTIME_INFO (self), 0);

  return self->n_bytes;
}

/**
 * sandbox_runtime_info_get_n_templates:
 * @self: a [class@Sandbox.RuntimeInfo]
 *
 * Gets how many stored templates name the runtime; while any does,
 * [method@Sandbox.Backend.delete_runtime] refuses it.
 *
 * Returns: how many stored templates name the runtime
 */
guint
sandbox_runtime_info_get_n_templates (SandboxRuntimeInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_RUNTIME_INFO (self), 0);

  return self->n_templates;
}

/**
 * sandbox_runtime_info_get_n_sessions:
 * @self: a [class@Sandbox.RuntimeInfo]
 *
 * Gets how many stored sessions run on the runtime (created from the
 * templates naming it).
 *
 * Returns: how many stored sessions run on the runtime
 */
guint
sandbox_runtime_info_get_n_sessions (SandboxRuntimeInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_RUNTIME_INFO (self), 0);

  return self->n_sessions;
}
