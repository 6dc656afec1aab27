/* sandbox-bubblewrap-coding.c — the host-only coding binding of a bubblewrap session
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-bubblewrap-coding.h"
#include "sandbox-bubblewrap-backend-private.h"

/*
 * What SandboxCodingTools needs from a bubblewrap session, as the
 * reference's createSandboxCodingAdapter: grade() restrictions (network-denied
 * only under deny-all; host-ipc-isolated, resources-bounded beyond it), the policy revision every set_network_policy bumps,
 * the active check, a contained directory listing, and spawning a prepared
 * launch through the driver's own admission so shell calls and direct
 * commands share max-concurrent-commands. The revision check happens at
 * admission, under the lock policy changes take, so a policy change can
 * never slip between the check and the launch.
 *
 * It exposes no host path: file tools go through the session's contained
 * file access, and commands see /workspace only.
 */

struct _SandboxBubblewrapCoding
{
  GObject parent_instance;

  SandboxBubblewrapDriver *driver;
};

static void sandbox_bubblewrap_coding_iface_init (SandboxCodingBindingInterface *iface);

G_DEFINE_DYNAMIC_TYPE_EXTENDED (SandboxBubblewrapCoding, sandbox_bubblewrap_coding,
                                G_TYPE_OBJECT, G_TYPE_FLAG_FINAL,
                                G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_CODING_BINDING,
                                                               sandbox_bubblewrap_coding_iface_init))

static gboolean
sandbox_bubblewrap_coding_check_active (SandboxCodingBinding  *binding,
                                        GError               **error)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);

  return sandbox_bubblewrap_driver_check_active (self->driver, error);
}

static char **
sandbox_bubblewrap_coding_get_restrictions (SandboxCodingBinding *binding,
                                            guint64              *revision)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);
  g_autoptr(GStrvBuilder) builder = g_strv_builder_new ();
  SandboxNetworkPolicyKind kind;

  kind = sandbox_bubblewrap_driver_get_policy_kind (self->driver, revision);
  if (kind == SANDBOX_NETWORK_POLICY_DENY_ALL)
    g_strv_builder_add (builder, SANDBOX_RESTRICTION_NETWORK_DENIED);
  /* No service on the host's loopback, no abstract socket of the host:
   * every guest has a network namespace of its own, but an allow-all one
   * of a backend with host-loopback reaches the loopback on purpose. */
  if (kind != SANDBOX_NETWORK_POLICY_ALLOW_ALL ||
      !sandbox_bubblewrap_driver_get_host_loopback (self->driver))
    g_strv_builder_add (builder, "host-ipc-isolated");
  g_strv_builder_add (builder, SANDBOX_RESTRICTION_WRITE_CONTAINED);
  g_strv_builder_add (builder, SANDBOX_RESTRICTION_SECRETS_HIDDEN);
  g_strv_builder_add (builder, SANDBOX_RESTRICTION_PROCESS_CONTAINED);
  if (sandbox_bubblewrap_driver_get_syscalls_filtered (self->driver))
    g_strv_builder_add (builder, SANDBOX_RESTRICTION_SYSCALLS_FILTERED);
  /* Only where a cgroup bounds every command's memory and processes. */
  if (sandbox_bubblewrap_driver_get_resources_bounded (self->driver))
    g_strv_builder_add (builder, "resources-bounded");
  return g_strv_builder_end (builder);
}

static GVariant *
sandbox_bubblewrap_coding_list_directory (SandboxCodingBinding  *binding,
                                          const char            *path,
                                          guint                  max_entries,
                                          gboolean              *truncated,
                                          GCancellable          *cancellable,
                                          GError               **error)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);

  return sandbox_bubblewrap_driver_list_directory (self->driver, path, max_entries,
                                                   truncated, cancellable, error);
}

static SandboxProcess *
sandbox_bubblewrap_coding_spawn (SandboxCodingBinding  *binding,
                                 SandboxCommand        *command,
                                 guint64                revision,
                                 GCancellable          *cancellable,
                                 GError               **error)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);

  return sandbox_bubblewrap_driver_spawn_prepared (self->driver, command, revision,
                                                   cancellable, error);
}

static const char *
sandbox_bubblewrap_coding_get_workspace_layering (SandboxCodingBinding *binding)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);

  return sandbox_bubblewrap_driver_get_layered (self->driver) ? SANDBOX_WORKSPACE_LAYERING_OVERLAY
                                                              : SANDBOX_WORKSPACE_LAYERING_COPY;
}

static guint
sandbox_bubblewrap_coding_get_landlock_abi (SandboxCodingBinding *binding)
{
  guint abi = sandbox_bubblewrap_kernel_landlock_abi ();

  /* Below the scoping ABI the stub applies no Landlock at all. */
  return abi >= SANDBOX_BUBBLEWRAP_LANDLOCK_SCOPING_ABI ? abi : 0;
}

static const char *
sandbox_bubblewrap_coding_get_runtime (SandboxCodingBinding *binding)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (binding);

  return sandbox_bubblewrap_driver_get_runtime_key (self->driver);
}

/**
 * sandbox_bubblewrap_coding_new:
 * @driver: the session's driver
 *
 * Returns: (transfer full): the session's coding binding
 */
SandboxCodingBinding *
sandbox_bubblewrap_coding_new (SandboxBubblewrapDriver *driver)
{
  SandboxBubblewrapCoding *self = g_object_new (SANDBOX_TYPE_BUBBLEWRAP_CODING, NULL);

  self->driver = g_object_ref (driver);
  return SANDBOX_CODING_BINDING (self);
}

static void
sandbox_bubblewrap_coding_finalize (GObject *object)
{
  SandboxBubblewrapCoding *self = SANDBOX_BUBBLEWRAP_CODING (object);

  g_clear_object (&self->driver);

  G_OBJECT_CLASS (sandbox_bubblewrap_coding_parent_class)->finalize (object);
}

static void
sandbox_bubblewrap_coding_class_init (SandboxBubblewrapCodingClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = sandbox_bubblewrap_coding_finalize;
}

static void
sandbox_bubblewrap_coding_class_finalize (SandboxBubblewrapCodingClass *klass)
{
}

static void
sandbox_bubblewrap_coding_init (SandboxBubblewrapCoding *self)
{
}

static void
sandbox_bubblewrap_coding_iface_init (SandboxCodingBindingInterface *iface)
{
  iface->check_active = sandbox_bubblewrap_coding_check_active;
  iface->get_restrictions = sandbox_bubblewrap_coding_get_restrictions;
  iface->list_directory = sandbox_bubblewrap_coding_list_directory;
  iface->spawn = sandbox_bubblewrap_coding_spawn;
  iface->get_workspace_layering = sandbox_bubblewrap_coding_get_workspace_layering;
  iface->get_landlock_abi = sandbox_bubblewrap_coding_get_landlock_abi;
  iface->get_runtime = sandbox_bubblewrap_coding_get_runtime;
}

/**
 * sandbox_bubblewrap_coding_register:
 * @module: the driver module
 *
 * Registers #SandboxBubblewrapCoding with @module.
 */
void
sandbox_bubblewrap_coding_register (GTypeModule *module)
{
  sandbox_bubblewrap_coding_register_type (module);
}
