/* sandbox-template-runtime.c — the userland a template's sessions run on
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-template-private.h"

/**
 * sandbox_template_set_runtime:
 * @self: a [class@Sandbox.Template]
 * @runtime_key: (nullable): the key of an imported runtime
 *   ([method@Sandbox.Backend.import_runtime]), or %NULL for none
 *
 * Names the runtime the template's sessions run on: the tree their commands
 * see as /usr, /bin, /lib*, /sbin and /etc instead of the host's. The
 * template's key covers it, so the same files on two runtimes are two
 * templates; without one the key is what it always was. The runtime must be
 * imported into the backend before the template is stored.
 */
void
sandbox_template_set_runtime (SandboxTemplate *self,
                              const char      *runtime_key)
{
  SandboxTemplateRuntime *slot;

  g_return_if_fail (SANDBOX_IS_TEMPLATE (self));
  slot = sandbox_template_get_runtime_slot (self);

  /* Checked by the backend that stores the template, which looks it up. */
  g_free (slot->key);
  slot->key = g_strdup (runtime_key);
}

/**
 * sandbox_template_set_runtime_writable:
 * @self: a [class@Sandbox.Template]
 * @writable: whether each session may change its runtime
 *
 * Makes the runtime ([method@Sandbox.Template.set_runtime]) writable per
 * session: each session's commands see it through an overlay whose upper
 * layer is the session's own, so `pip install` or `npm install -g` into
 * /usr persist across its commands, stop and resume, and snapshots, and
 * no other session and not the stored runtime see them. The template's
 * key covers it. Only a backend whose sessions layer over their template
 * can: elsewhere a session of such a template is refused
 * (%G_IO_ERROR_NOT_SUPPORTED). Meaningless without a runtime.
 */
void
sandbox_template_set_runtime_writable (SandboxTemplate *self,
                                       gboolean         writable)
{
  SandboxTemplateRuntime *slot;

  g_return_if_fail (SANDBOX_IS_TEMPLATE (self));
  slot = sandbox_template_get_runtime_slot (self);

  slot->writable = !!writable;
}

/**
 * sandbox_template_get_runtime_writable:
 * @self: a [class@Sandbox.Template]
 *
 * Gets whether each of the template's sessions gets its own writable copy
 * of its runtime ([method@Sandbox.Template.set_runtime_writable]).
 *
 * Returns: whether the template's sessions each get a writable copy of its
 *   runtime; %FALSE when it names none
 */
gboolean
sandbox_template_get_runtime_writable (SandboxTemplate *self)
{
  SandboxTemplateRuntime *slot;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), FALSE);
  slot = sandbox_template_get_runtime_slot (self);

  return slot->key != NULL && slot->writable;
}

/**
 * sandbox_template_get_runtime:
 * @self: a [class@Sandbox.Template]
 *
 * Gets the key of the runtime the template's sessions run on.
 *
 * Returns: (transfer none) (nullable): the runtime's key, or %NULL when its
 *   sessions see the host's /usr
 */
const char *
sandbox_template_get_runtime (SandboxTemplate *self)
{
  SandboxTemplateRuntime *slot;

  g_return_val_if_fail (SANDBOX_IS_TEMPLATE (self), NULL);
  slot = sandbox_template_get_runtime_slot (self);

  return slot->key;
}
