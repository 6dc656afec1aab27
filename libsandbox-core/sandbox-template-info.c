/* sandbox-template-info.c — a stored template, as a backend lists it
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-template-info.h"

/**
 * SandboxTemplateInfo:
 *
 * A template a backend stores, as [method@Sandbox.Backend.list_templates] reports
 * it: its content-addressed key (what [method@Sandbox.Backend.prewarm] returned),
 * the name it was prewarmed with, its size, and how many stored sessions were created from it (while any
 * is, [method@Sandbox.Backend.delete_template] refuses it). Immutable.
 *
 * A snapshot ([method@Sandbox.Handle.snapshot]) is listed as a template too:
 * its parent key is the template or snapshot it lies over, its size is that
 * of its own layer (the changes it holds), and the snapshots lying over a
 * template or snapshot are counted (while any does, it is not deleted
 * either). Following parent keys gives a snapshot's lineage.
 */
struct _SandboxTemplateInfo
{
  GObject parent_instance;

  char *key;
  char *name;
  guint64 n_files;
  guint64 n_bytes;
  guint n_sessions;
  char *parent_key;
  guint n_snapshots;
};

G_DEFINE_FINAL_TYPE (SandboxTemplateInfo, sandbox_template_info, G_TYPE_OBJECT)

static void
sandbox_template_info_finalize (GObject *object)
{
  SandboxTemplateInfo *self = SANDBOX_TEMPLATE_INFO (object);

  g_free (self->key);
  g_free (self->name);
  g_free (self->parent_key);

  G_OBJECT_CLASS (sandbox_template_info_parent_class)->finalize (object);
}

static void
sandbox_template_info_class_init (SandboxTemplateInfoClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_template_info_finalize;
}

static void
sandbox_template_info_init (SandboxTemplateInfo *self)
{
}

/**
 * sandbox_template_info_new:
 * @key: the template's key
 * @n_files: how many files the template holds
 * @n_bytes: how many bytes those files hold
 * @n_sessions: how many stored sessions were created from it
 *
 * Creates a template record without a name, as
 * [ctor@Sandbox.TemplateInfo.new_full] does.
 *
 * Returns: (transfer full): a new [class@Sandbox.TemplateInfo]
 */
SandboxTemplateInfo *
sandbox_template_info_new (const char *key,
                           guint64     n_files,
                           guint64     n_bytes,
                           guint       n_sessions)
{
  return sandbox_template_info_new_full (key, NULL, n_files, n_bytes, n_sessions);
}

/**
 * sandbox_template_info_new_full:
 * @key: the template's key
 * @name: (nullable): the template's name ([method@Sandbox.Template.get_name]),
 *   or %NULL if the backend did not record it
 * @n_files: how many entries the template holds (files and links)
 * @n_bytes: how many bytes its files hold
 * @n_sessions: how many stored sessions were created from it
 *
 * Creates a template record; backends make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.TemplateInfo]
 */
SandboxTemplateInfo *
sandbox_template_info_new_full (const char *key,
                                const char *name,
                                guint64     n_files,
                                guint64     n_bytes,
                                guint       n_sessions)
{
  SandboxTemplateInfo *self;

  g_return_val_if_fail (key != NULL, NULL);

  self = g_object_new (SANDBOX_TYPE_TEMPLATE_INFO, NULL);
  self->key = g_strdup (key);
  self->name = g_strdup (name);
  self->n_files = n_files;
  self->n_bytes = n_bytes;
  self->n_sessions = n_sessions;
  return self;
}

/**
 * sandbox_template_info_new_with_lineage:
 * @key: the template's or snapshot's key
 * @name: (nullable): its name, or %NULL if the backend did not record it
 * @parent_key: (nullable): the key of the template or snapshot a snapshot
 *   lies over, %NULL for a template
 * @n_files: how many entries it holds (a snapshot: its own layer's)
 * @n_bytes: how many bytes its files hold (a snapshot: its own layer's)
 * @n_sessions: how many stored sessions were created from it
 * @n_snapshots: how many stored snapshots lie directly over it
 *
 * Creates the record of a template or a snapshot; backends with snapshots
 * make these.
 *
 * Returns: (transfer full): a new [class@Sandbox.TemplateInfo]
 */
SandboxTemplateInfo *
sandbox_template_info_new_with_lineage (const char *key,
                                        const char *name,
                                        const char *parent_key,
                                        guint64     n_files,
                                        guint64     n_bytes,
                                        guint       n_sessions,
                                        guint       n_snapshots)
{
  SandboxTemplateInfo *self;

  g_return_val_if_fail (key != NULL, NULL);

  self = sandbox_template_info_new_full (key, name, n_files, n_bytes, n_sessions);
  self->parent_key = g_strdup (parent_key);
  self->n_snapshots = n_snapshots;
  return self;
}

/**
 * sandbox_template_info_get_key:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets the template's content-addressed key.
 *
 * Returns: the key
 */
const char *
sandbox_template_info_get_key (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), NULL);

  return self->key;
}

/**
 * sandbox_template_info_get_name:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets the name the template was prewarmed with (part of its key).
 *
 * Returns: (nullable): the name, or %NULL if the backend did not record it
 *   (a template stored by an older version)
 */
const char *
sandbox_template_info_get_name (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), NULL);

  return self->name;
}

/**
 * sandbox_template_info_get_n_files:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets how many files the template holds.
 *
 * Returns: the number of files
 */
guint64
sandbox_template_info_get_n_files (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), 0);

  return self->n_files;
}

/**
 * sandbox_template_info_get_n_bytes:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets how many bytes the template's files hold.
 *
 * Returns: the number of bytes
 */
guint64
sandbox_template_info_get_n_bytes (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), 0);

  return self->n_bytes;
}

/**
 * sandbox_template_info_get_n_sessions:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets how many stored sessions were created from the template when it was
 * listed.
 *
 * Returns: the number of sessions
 */
guint
sandbox_template_info_get_n_sessions (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), 0);

  return self->n_sessions;
}

/**
 * sandbox_template_info_get_parent_key:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets the key of the template or snapshot a snapshot lies over.
 *
 * Returns: (nullable): the parent's key, or %NULL for a template (or a
 *   backend without snapshots)
 */
const char *
sandbox_template_info_get_parent_key (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), NULL);

  return self->parent_key;
}

/**
 * sandbox_template_info_get_n_snapshots:
 * @self: a [class@Sandbox.TemplateInfo]
 *
 * Gets how many stored snapshots lay directly over the template or
 * snapshot when it was listed.
 *
 * Returns: the number of snapshots
 */
guint
sandbox_template_info_get_n_snapshots (SandboxTemplateInfo *self)
{
  g_return_val_if_fail (SANDBOX_IS_TEMPLATE_INFO (self), 0);

  return self->n_snapshots;
}
