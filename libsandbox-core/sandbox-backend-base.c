/* sandbox-backend-base.c — what every backend has, for drivers to derive from
 *
 * Every driver's backend has the properties of the SandboxBackend interface
 * (name, state-directory, max-concurrent-commands), stores them, reads them
 * back and checks them in init(). Each driver typed that out again, with its
 * own messages. Here it is once, the way glib-networking's tls/base holds
 * what every TLS backend shares: the driver derives from this class and
 * writes only what only it knows.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include "sandbox-backend-base.h"
#include "sandbox-backend-private.h"
#include "sandbox-error.h"

/**
 * SandboxBackendBase:
 *
 * The class a driver's backend derives from, as glib-networking's TLS
 * backends derive from its `tls/base` classes. It implements
 * [iface@Sandbox.Backend]'s properties —
 * [property@Sandbox.Backend:name] (%NULL gives the driver's default name,
 * see [method@Sandbox.BackendBaseClass.set_default_name]),
 * [property@Sandbox.Backend:state-directory] and
 * [property@Sandbox.Backend:max-concurrent-commands] — and #GInitable:
 * g_initable_init() fails with %SANDBOX_ERROR_INVALID for an empty name or
 * an admission limit outside 1 … %SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT,
 * then calls the driver's @init_backend; once it has succeeded, later calls
 * return %TRUE at once.
 *
 * A driver derives from it, implements [iface@Sandbox.Backend] (this
 * class does not, so that a driver module can add it to its dynamic type)
 * with its own `prewarm` and `create` and whatever else it offers, and
 * does not implement #GInitable itself:
 *
 * |[<!-- language="C" -->
 * G_DEFINE_DYNAMIC_TYPE_EXTENDED (MyBackend, my_backend, SANDBOX_TYPE_BACKEND_BASE,
 *                                 G_TYPE_FLAG_FINAL,
 *                                 G_IMPLEMENT_INTERFACE_DYNAMIC (SANDBOX_TYPE_BACKEND,
 *                                                                my_backend_iface_init))
 *
 * static void
 * my_backend_class_init (MyBackendClass *klass)
 * {
 *   SandboxBackendBaseClass *base_class = SANDBOX_BACKEND_BASE_CLASS (klass);
 *
 *   sandbox_backend_base_class_set_default_name (base_class, "mine");
 *   base_class->init_backend = my_backend_init_backend;
 *   // the driver's own properties, numbered from 1
 * }
 * ]|
 *
 * A driver may still implement [iface@Sandbox.Backend] on a plain #GObject
 * instead; this class only saves it the common part.
 */

typedef struct
{
  char *name;   /* NULL: the class's default name */
  char *state_directory;
  guint max_concurrent_commands;
  guint max_background_timeout_ms;
  guint background_idle_timeout_ms;
  guint max_file_bytes;
  gboolean initialized;
  GMutex leases_lock;
  GHashTable *leases;   /* session id -> HeldLease: between the protocol's hooks */
} SandboxBackendBasePrivate;

typedef struct
{
  gpointer lease;
  GDestroyNotify destroy;
} HeldLease;

enum {
  PROP_0,
  PROP_NAME,
  PROP_STATE_DIRECTORY,
  PROP_MAX_CONCURRENT_COMMANDS,
  PROP_MAX_BACKGROUND_TIMEOUT_MS,
  PROP_BACKGROUND_IDLE_TIMEOUT_MS,
  PROP_MAX_FILE_BYTES,
};

static void sandbox_backend_base_initable_iface_init (GInitableIface *iface);

/* Not an implementation of SandboxBackend itself: a driver's module
 * registers its type dynamically, and GTypeModule cannot add an interface
 * a parent type already has. The driver implements it; the properties
 * below are the interface's, which its implementation then finds here. */
G_DEFINE_ABSTRACT_TYPE_WITH_CODE (SandboxBackendBase, sandbox_backend_base, G_TYPE_OBJECT,
                                  G_ADD_PRIVATE (SandboxBackendBase)
                                  G_IMPLEMENT_INTERFACE (G_TYPE_INITABLE,
                                                         sandbox_backend_base_initable_iface_init))

/* The class is looked up when the name is read, never in instance init:
 * there the instance's class is still this one, not the driver's. */
static const char *
effective_name (SandboxBackendBase        *self,
                SandboxBackendBasePrivate *priv)
{
  const char *name = priv->name != NULL ? priv->name
                                        : SANDBOX_BACKEND_BASE_GET_CLASS (self)->default_name;

  return name != NULL ? name : "";
}

static gboolean
sandbox_backend_base_initable_init (GInitable     *initable,
                                    GCancellable  *cancellable,
                                    GError       **error)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (initable);
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);
  SandboxBackendBaseClass *klass = SANDBOX_BACKEND_BASE_GET_CLASS (self);

  if (priv->initialized)
    return TRUE;

  if (effective_name (self, priv)[0] == '\0')
    {
      g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                           "Backend name must be a non-empty string");
      return FALSE;
    }
  if (priv->max_concurrent_commands < 1 ||
      priv->max_concurrent_commands > SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT)
    {
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_INVALID,
                   "max-concurrent-commands must be between 1 and %d, not %u",
                   SANDBOX_MAX_CONCURRENT_COMMANDS_LIMIT, priv->max_concurrent_commands);
      return FALSE;
    }

  if (klass->init_backend != NULL && !klass->init_backend (self, cancellable, error))
    return FALSE;
  priv->initialized = TRUE;
  return TRUE;
}

static void
sandbox_backend_base_get_property (GObject    *object,
                                   guint       prop_id,
                                   GValue     *value,
                                   GParamSpec *pspec)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (object);
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_NAME:
      g_value_set_string (value, effective_name (self, priv));
      break;
    case PROP_STATE_DIRECTORY:
      g_value_set_string (value, priv->state_directory);
      break;
    case PROP_MAX_CONCURRENT_COMMANDS:
      g_value_set_uint (value, priv->max_concurrent_commands);
      break;
    case PROP_MAX_BACKGROUND_TIMEOUT_MS:
      g_value_set_uint (value, priv->max_background_timeout_ms);
      break;
    case PROP_BACKGROUND_IDLE_TIMEOUT_MS:
      g_value_set_uint (value, priv->background_idle_timeout_ms);
      break;
    case PROP_MAX_FILE_BYTES:
      g_value_set_uint (value, priv->max_file_bytes);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
sandbox_backend_base_set_property (GObject      *object,
                                   guint         prop_id,
                                   const GValue *value,
                                   GParamSpec   *pspec)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (object);
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);

  switch (prop_id)
    {
    case PROP_NAME:
      /* NULL is the driver's own name. */
      g_free (priv->name);
      priv->name = g_value_dup_string (value);
      break;
    case PROP_STATE_DIRECTORY:
      g_free (priv->state_directory);
      priv->state_directory = g_value_dup_string (value);
      break;
    case PROP_MAX_CONCURRENT_COMMANDS:
      priv->max_concurrent_commands = g_value_get_uint (value);
      break;
    case PROP_MAX_BACKGROUND_TIMEOUT_MS:
      priv->max_background_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_BACKGROUND_IDLE_TIMEOUT_MS:
      priv->background_idle_timeout_ms = g_value_get_uint (value);
      break;
    case PROP_MAX_FILE_BYTES:
      priv->max_file_bytes = g_value_get_uint (value);
      break;
    default:
      G_OBJECT_WARN_INVALID_PROPERTY_ID (object, prop_id, pspec);
    }
}

static void
held_lease_free (gpointer data)
{
  HeldLease *held = data;

  if (held->destroy != NULL)
    held->destroy (held->lease);
  g_free (held);
}

static void
sandbox_backend_base_finalize (GObject *object)
{
  SandboxBackendBase *self = SANDBOX_BACKEND_BASE (object);
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);

  g_free (priv->name);
  g_free (priv->state_directory);
  g_hash_table_unref (priv->leases);
  g_mutex_clear (&priv->leases_lock);

  G_OBJECT_CLASS (sandbox_backend_base_parent_class)->finalize (object);
}

/* What g_object_class_override_property() does for an implementation of
 * the interface: the property is the interface's, with its docs and range. */
static void
install_interface_property (GObjectClass *object_class,
                            guint         prop_id,
                            const char   *name)
{
  gpointer iface = g_type_default_interface_ref (SANDBOX_TYPE_BACKEND);
  GParamSpec *overridden = g_object_interface_find_property (iface, name);

  g_object_class_install_property (object_class, prop_id,
                                   g_param_spec_override (name, overridden));
  g_type_default_interface_unref (iface);
}

static void
sandbox_backend_base_class_init (SandboxBackendBaseClass *klass)
{
  GObjectClass *object_class = G_OBJECT_CLASS (klass);

  object_class->get_property = sandbox_backend_base_get_property;
  object_class->set_property = sandbox_backend_base_set_property;
  object_class->finalize = sandbox_backend_base_finalize;

  install_interface_property (object_class, PROP_NAME, "name");
  install_interface_property (object_class, PROP_STATE_DIRECTORY, "state-directory");
  install_interface_property (object_class, PROP_MAX_CONCURRENT_COMMANDS,
                              "max-concurrent-commands");

  /**
   * SandboxBackendBase:max-background-timeout-ms:
   *
   * The longest deadline a background command of the backend's sessions
   * may have ([method@Sandbox.Session.spawn_background]), in milliseconds:
   * a command asking for more is refused, and the background default
   * (%SANDBOX_COMMAND_DEFAULT_BACKGROUND_TIMEOUT_MS) is lowered to it.
   */
  g_object_class_install_property (object_class, PROP_MAX_BACKGROUND_TIMEOUT_MS,
    g_param_spec_uint ("max-background-timeout-ms", NULL, NULL,
                       1, SANDBOX_COMMAND_MAX_TIMEOUT_MS,
                       SANDBOX_DEFAULT_MAX_BACKGROUND_TIMEOUT_MS,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBackendBase:background-idle-timeout-ms:
   *
   * How long a session may go without a call before its background
   * commands are ended, in milliseconds; 0 (the default) never ends them
   * for that. A call is anything asked of the session (a command, a file
   * operation, listing or looking up its background commands, exposing a
   * port, a network policy) or of one of its background commands (reading
   * its output, signalling it). A command ended this way fails with
   * %SANDBOX_ERROR_LIMIT; the session itself stays open.
   */
  g_object_class_install_property (object_class, PROP_BACKGROUND_IDLE_TIMEOUT_MS,
    g_param_spec_uint ("background-idle-timeout-ms", NULL, NULL,
                       0, SANDBOX_COMMAND_MAX_TIMEOUT_MS, 0,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));

  /**
   * SandboxBackendBase:max-file-bytes:
   *
   * The bound on one workspace file read or written through a session's
   * file operations (and so the coding tools'), in bytes: a larger write,
   * or a read of a larger file, fails with %SANDBOX_ERROR_LIMIT. The
   * whole file is held in memory, hence the ceiling of 1 GiB. Commands
   * inside the sandbox are not bound by it.
   */
  g_object_class_install_property (object_class, PROP_MAX_FILE_BYTES,
    g_param_spec_uint ("max-file-bytes", NULL, NULL,
                       1, 1 << 30, SANDBOX_MAX_FILE_BYTES,
                       G_PARAM_READWRITE | G_PARAM_CONSTRUCT_ONLY | G_PARAM_STATIC_STRINGS));
}

static void
sandbox_backend_base_init (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);

  priv->max_concurrent_commands = SANDBOX_DEFAULT_MAX_CONCURRENT_COMMANDS;
  priv->max_background_timeout_ms = SANDBOX_DEFAULT_MAX_BACKGROUND_TIMEOUT_MS;
  priv->max_file_bytes = SANDBOX_MAX_FILE_BYTES;
  g_mutex_init (&priv->leases_lock);
  priv->leases = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, held_lease_free);
}

static void
sandbox_backend_base_initable_iface_init (GInitableIface *iface)
{
  iface->init = sandbox_backend_base_initable_init;
}

/**
 * sandbox_backend_base_class_set_default_name:
 * @klass: a driver's backend class
 * @name: the name its backends have when none is given, usually the
 *   driver's own (`bubblewrap`, `memory`)
 *
 * For a driver's class_init(): sets the default of [property@Sandbox.Backend:name].
 * Without it the default is empty, which g_initable_init() refuses, so a
 * name must then be given.
 */
void
sandbox_backend_base_class_set_default_name (SandboxBackendBaseClass *klass,
                                             const char              *name)
{
  g_return_if_fail (SANDBOX_IS_BACKEND_BASE_CLASS (klass));
  g_return_if_fail (name != NULL);

  klass->default_name = g_intern_string (name);
}

/**
 * sandbox_backend_base_get_name:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.Backend:name], for the driver's own code.
 *
 * Returns: (transfer none): the backend's name
 */
const char *
sandbox_backend_base_get_name (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), NULL);

  priv = sandbox_backend_base_get_instance_private (self);
  return effective_name (self, priv);
}

/**
 * sandbox_backend_base_get_state_directory:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.Backend:state-directory], for the driver's own code.
 *
 * Returns: (transfer none) (nullable): the state directory as given, or as
 *   the driver resolved it (see [method@Sandbox.BackendBase.set_state_directory])
 */
const char *
sandbox_backend_base_get_state_directory (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), NULL);

  priv = sandbox_backend_base_get_instance_private (self);
  return priv->state_directory;
}

/**
 * sandbox_backend_base_set_state_directory:
 * @self: a [class@Sandbox.BackendBase]
 * @directory: (nullable): the state directory
 *
 * For a driver's @init_backend: records the state directory in the form
 * the driver resolved it to (absolute, without links), which
 * [property@Sandbox.Backend:state-directory] then reads back.
 */
void
sandbox_backend_base_set_state_directory (SandboxBackendBase *self,
                                          const char         *directory)
{
  SandboxBackendBasePrivate *priv;
  char *copy;

  g_return_if_fail (SANDBOX_IS_BACKEND_BASE (self));

  priv = sandbox_backend_base_get_instance_private (self);
  copy = g_strdup (directory);
  g_free (priv->state_directory);
  priv->state_directory = copy;
}

/**
 * sandbox_backend_base_get_max_concurrent_commands:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.Backend:max-concurrent-commands], for the driver's
 * own code.
 *
 * Returns: the admission limit of each session
 */
guint
sandbox_backend_base_get_max_concurrent_commands (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), 0);

  priv = sandbox_backend_base_get_instance_private (self);
  return priv->max_concurrent_commands;
}

/* For the session protocol (sandbox-backend-protocol.c). */
gboolean
sandbox_backend_base_is_initialized (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv = sandbox_backend_base_get_instance_private (self);

  return priv->initialized;
}

/**
 * sandbox_backend_base_get_max_background_timeout_ms:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.BackendBase:max-background-timeout-ms].
 *
 * Returns: the longest deadline of a background command, in milliseconds
 */
guint
sandbox_backend_base_get_max_background_timeout_ms (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), 0);

  priv = sandbox_backend_base_get_instance_private (self);
  return priv->max_background_timeout_ms;
}

/**
 * sandbox_backend_base_get_background_idle_timeout_ms:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.BackendBase:background-idle-timeout-ms].
 *
 * Returns: how long a session may go without a call before its background
 *   commands are ended, in milliseconds; 0 for never
 */
guint
sandbox_backend_base_get_background_idle_timeout_ms (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), 0);

  priv = sandbox_backend_base_get_instance_private (self);
  return priv->background_idle_timeout_ms;
}

/**
 * sandbox_backend_base_get_max_file_bytes:
 * @self: a [class@Sandbox.BackendBase]
 *
 * The backend's [property@Sandbox.BackendBase:max-file-bytes].
 *
 * Returns: the bound on one workspace file read or write, in bytes
 */
guint
sandbox_backend_base_get_max_file_bytes (SandboxBackendBase *self)
{
  SandboxBackendBasePrivate *priv;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), SANDBOX_MAX_FILE_BYTES);

  priv = sandbox_backend_base_get_instance_private (self);
  return priv->max_file_bytes;
}

/**
 * sandbox_backend_base_hold_lease: (skip)
 * @self: a [class@Sandbox.BackendBase]
 * @session_id: the session whose lease a hook took
 * @lease: (transfer full): the driver's lease (a lock, an epoch, …)
 * @destroy: (nullable): frees @lease if the backend goes while holding it
 *
 * Keeps a lease from the hook that takes it to the one that uses or ends
 * it: the session protocol's hooks pass a session id only. @take_lease,
 * @take_over_lease or @new_session holds it here; @new_handle,
 * @release_lease or @remove_session takes it back with
 * `sandbox_backend_base_steal_lease()`. A lease is exclusive: a
 * session has one held at most, and holding another frees the first.
 */
void
sandbox_backend_base_hold_lease (SandboxBackendBase *self,
                                 const char         *session_id,
                                 gpointer            lease,
                                 GDestroyNotify      destroy)
{
  SandboxBackendBasePrivate *priv;
  HeldLease *held;

  g_return_if_fail (SANDBOX_IS_BACKEND_BASE (self));
  g_return_if_fail (session_id != NULL);

  priv = sandbox_backend_base_get_instance_private (self);
  held = g_new (HeldLease, 1);
  held->lease = lease;
  held->destroy = destroy;
  g_mutex_lock (&priv->leases_lock);
  g_hash_table_replace (priv->leases, g_strdup (session_id), held);
  g_mutex_unlock (&priv->leases_lock);
}

/**
 * sandbox_backend_base_steal_lease: (skip)
 * @self: a [class@Sandbox.BackendBase]
 * @session_id: a session
 *
 * Takes back the lease of @session_id that
 * `sandbox_backend_base_hold_lease()` holds: it is no longer held,
 * and the caller frees it.
 *
 * Returns: (transfer full) (nullable): the lease, or %NULL if none is held
 */
gpointer
sandbox_backend_base_steal_lease (SandboxBackendBase *self,
                                  const char         *session_id)
{
  SandboxBackendBasePrivate *priv;
  g_autofree char *key = NULL;
  g_autofree HeldLease *held = NULL;

  g_return_val_if_fail (SANDBOX_IS_BACKEND_BASE (self), NULL);
  g_return_val_if_fail (session_id != NULL, NULL);

  priv = sandbox_backend_base_get_instance_private (self);
  g_mutex_lock (&priv->leases_lock);
  g_hash_table_steal_extended (priv->leases, session_id, (gpointer *) &key, (gpointer *) &held);
  g_mutex_unlock (&priv->leases_lock);
  return held != NULL ? held->lease : NULL;
}
