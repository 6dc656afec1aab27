/* gated-session.c — a test session whose file I/O waits for cancellation
 *
 * The coding tools check their cancellable before the work starts, so a
 * cancellation that arrives *during* the I/O can only be tested with I/O
 * that is in progress when it comes: these operations announce that they
 * have started (gate_wait_entered()), then wait until the cancellable is
 * cancelled and fail with G_IO_ERROR_CANCELLED, as real I/O interrupted by
 * a cancellation does.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include <string.h>

#include "gated-session.h"

struct _Gate
{
  GMutex lock;
  GCond cond;
  GateOps blocking;
  guint entered;
  guint writes;
  GBytes *contents;
};

static void
gate_free (Gate *gate)
{
  g_mutex_clear (&gate->lock);
  g_cond_clear (&gate->cond);
  g_bytes_unref (gate->contents);
  g_free (gate);
}

static void
gate_wake (GCancellable *cancellable,
           Gate         *gate)
{
  g_mutex_lock (&gate->lock);
  g_cond_broadcast (&gate->cond);
  g_mutex_unlock (&gate->lock);
}

/* Returns FALSE with G_IO_ERROR_CANCELLED once @cancellable is cancelled
 * when @op blocks; TRUE at once otherwise. */
static gboolean
gate_pass (Gate          *gate,
           GateOps        op,
           GCancellable  *cancellable,
           GError       **error)
{
  gulong handler;

  if (!(gate->blocking & op))
    return TRUE;
  g_assert_nonnull (cancellable);

  handler = g_cancellable_connect (cancellable, G_CALLBACK (gate_wake), gate, NULL);
  g_mutex_lock (&gate->lock);
  gate->entered++;
  g_cond_broadcast (&gate->cond);
  while (!g_cancellable_is_cancelled (cancellable))
    g_cond_wait (&gate->cond, &gate->lock);
  g_mutex_unlock (&gate->lock);
  g_cancellable_disconnect (cancellable, handler);

  g_assert_true (g_cancellable_set_error_if_cancelled (cancellable, error));
  return FALSE;
}

void
gate_wait_entered (Gate *gate)
{
  gint64 deadline = g_get_monotonic_time () + 30 * G_USEC_PER_SEC;

  g_mutex_lock (&gate->lock);
  while (gate->entered == 0)
    if (!g_cond_wait_until (&gate->cond, &gate->lock, deadline))
      g_error ("no operation entered the gate within 30 s");
  g_mutex_unlock (&gate->lock);
}

guint
gate_get_entered (Gate *gate)
{
  guint entered;

  g_mutex_lock (&gate->lock);
  entered = gate->entered;
  g_mutex_unlock (&gate->lock);
  return entered;
}

guint
gate_get_writes (Gate *gate)
{
  guint writes;

  g_mutex_lock (&gate->lock);
  writes = gate->writes;
  g_mutex_unlock (&gate->lock);
  return writes;
}

/* Driver ------------------------------------------------------------------- */

#define GATED_TYPE_DRIVER (gated_driver_get_type ())
G_DECLARE_FINAL_TYPE (GatedDriver, gated_driver, GATED, DRIVER, GObject)

struct _GatedDriver
{
  GObject parent_instance;
  Gate *gate;
};

static void gated_driver_iface_init (SandboxDriverInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (GatedDriver, gated_driver, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_DRIVER, gated_driver_iface_init))

static GBytes *
gated_driver_read_bytes (SandboxDriver  *driver,
                         const char     *path,
                         GCancellable   *cancellable,
                         GError        **error)
{
  GatedDriver *self = GATED_DRIVER (driver);

  if (!gate_pass (self->gate, GATE_READ, cancellable, error))
    return NULL;
  if (g_strcmp0 (path, "/workspace/file.txt") != 0)
    {
      g_set_error (error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND, "No such file");
      return NULL;
    }
  return g_bytes_ref (self->gate->contents);
}

static gboolean
gated_driver_write_bytes (SandboxDriver  *driver,
                          const char     *path,
                          GBytes         *contents,
                          GCancellable   *cancellable,
                          GError        **error)
{
  GatedDriver *self = GATED_DRIVER (driver);

  g_mutex_lock (&self->gate->lock);
  self->gate->writes++;
  g_mutex_unlock (&self->gate->lock);
  return gate_pass (self->gate, GATE_WRITE, cancellable, error);
}

static gboolean
gated_driver_remove_path (SandboxDriver  *driver,
                          const char     *path,
                          GCancellable   *cancellable,
                          GError        **error)
{
  return TRUE;
}

static SandboxProcess *
gated_driver_spawn (SandboxDriver   *driver,
                    SandboxCommand  *command,
                    GCancellable    *cancellable,
                    GError         **error)
{
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "No commands here");
  return NULL;
}

static gboolean
gated_driver_set_network_policy (SandboxDriver         *driver,
                                 SandboxNetworkPolicy  *policy,
                                 GCancellable          *cancellable,
                                 GError               **error)
{
  return TRUE;
}

static void
gated_driver_iface_init (SandboxDriverInterface *iface)
{
  iface->read_bytes = gated_driver_read_bytes;
  iface->write_bytes = gated_driver_write_bytes;
  iface->remove_path = gated_driver_remove_path;
  iface->spawn = gated_driver_spawn;
  iface->set_network_policy = gated_driver_set_network_policy;
}

static void
gated_driver_finalize (GObject *object)
{
  g_clear_pointer (&GATED_DRIVER (object)->gate, gate_free);
  G_OBJECT_CLASS (gated_driver_parent_class)->finalize (object);
}

static void
gated_driver_class_init (GatedDriverClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gated_driver_finalize;
}

static void
gated_driver_init (GatedDriver *self)
{
}

/* Coding binding ----------------------------------------------------------- */

#define GATED_TYPE_BINDING (gated_binding_get_type ())
G_DECLARE_FINAL_TYPE (GatedBinding, gated_binding, GATED, BINDING, GObject)

struct _GatedBinding
{
  GObject parent_instance;
  GatedDriver *driver;
};

static void gated_binding_iface_init (SandboxCodingBindingInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE (GatedBinding, gated_binding, G_TYPE_OBJECT,
                               G_IMPLEMENT_INTERFACE (SANDBOX_TYPE_CODING_BINDING,
                                                      gated_binding_iface_init))

static gboolean
gated_binding_check_active (SandboxCodingBinding  *binding,
                            GError               **error)
{
  return TRUE;
}

static char **
gated_binding_get_restrictions (SandboxCodingBinding *binding,
                                guint64              *revision)
{
  const char * const restrictions[] = {
    SANDBOX_RESTRICTION_NETWORK_DENIED, SANDBOX_RESTRICTION_WRITE_CONTAINED,
    SANDBOX_RESTRICTION_PROCESS_CONTAINED, SANDBOX_RESTRICTION_SECRETS_HIDDEN, NULL
  };

  *revision = 1;
  return g_strdupv ((char **) restrictions);
}

static GVariant *
gated_binding_list_directory (SandboxCodingBinding  *binding,
                              const char            *path,
                              guint                  max_entries,
                              gboolean              *truncated,
                              GCancellable          *cancellable,
                              GError               **error)
{
  GatedBinding *self = GATED_BINDING (binding);

  if (!gate_pass (self->driver->gate, GATE_LIST, cancellable, error))
    return NULL;
  *truncated = FALSE;
  return g_variant_new_parsed ("[('file.txt', 'file', @t 5)]");
}

static SandboxProcess *
gated_binding_spawn (SandboxCodingBinding  *binding,
                     SandboxCommand        *command,
                     guint64                revision,
                     GCancellable          *cancellable,
                     GError               **error)
{
  g_set_error_literal (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE, "No commands here");
  return NULL;
}

static void
gated_binding_iface_init (SandboxCodingBindingInterface *iface)
{
  iface->check_active = gated_binding_check_active;
  iface->get_restrictions = gated_binding_get_restrictions;
  iface->list_directory = gated_binding_list_directory;
  iface->spawn = gated_binding_spawn;
}

static void
gated_binding_finalize (GObject *object)
{
  g_clear_object (&GATED_BINDING (object)->driver);
  G_OBJECT_CLASS (gated_binding_parent_class)->finalize (object);
}

static void
gated_binding_class_init (GatedBindingClass *klass)
{
  G_OBJECT_CLASS (klass)->finalize = gated_binding_finalize;
}

static void
gated_binding_init (GatedBinding *self)
{
}

/* Handle ------------------------------------------------------------------- */

#define GATED_TYPE_HANDLE (gated_handle_get_type ())
G_DECLARE_FINAL_TYPE (GatedHandle, gated_handle, GATED, HANDLE, SandboxHandle)

struct _GatedHandle
{
  SandboxHandle parent_instance;
  GatedBinding *binding;
};

G_DEFINE_FINAL_TYPE (GatedHandle, gated_handle, SANDBOX_TYPE_HANDLE)

static gboolean
gated_handle_stop (SandboxHandle  *handle,
                   GCancellable   *cancellable,
                   GError        **error)
{
  return TRUE;
}

static gboolean
gated_handle_delete_session (SandboxHandle  *handle,
                             GCancellable   *cancellable,
                             GError        **error)
{
  return TRUE;
}

static SandboxCodingBinding *
gated_handle_get_coding_binding (SandboxHandle *handle)
{
  return SANDBOX_CODING_BINDING (GATED_HANDLE (handle)->binding);
}

static void
gated_handle_dispose (GObject *object)
{
  /* The base class stops the handle first; the binding is not needed for it. */
  G_OBJECT_CLASS (gated_handle_parent_class)->dispose (object);
  g_clear_object (&GATED_HANDLE (object)->binding);
}

static void
gated_handle_class_init (GatedHandleClass *klass)
{
  SandboxHandleClass *handle_class = SANDBOX_HANDLE_CLASS (klass);

  G_OBJECT_CLASS (klass)->dispose = gated_handle_dispose;
  handle_class->stop = gated_handle_stop;
  handle_class->delete_session = gated_handle_delete_session;
  handle_class->get_coding_binding = gated_handle_get_coding_binding;
}

static void
gated_handle_init (GatedHandle *self)
{
}

SandboxHandle *
gated_handle_new (const char *contents,
                  GateOps     blocking,
                  Gate      **gate_out)
{
  g_autoptr(GatedDriver) driver = g_object_new (GATED_TYPE_DRIVER, NULL);
  g_autoptr(SandboxSession) session = NULL;
  g_autoptr(SandboxState) state = NULL;
  GatedHandle *handle;
  Gate *gate = g_new0 (Gate, 1);

  g_mutex_init (&gate->lock);
  g_cond_init (&gate->cond);
  gate->blocking = blocking;
  gate->contents = g_bytes_new (contents, strlen (contents));
  driver->gate = gate;

  session = sandbox_session_new ("gated", SANDBOX_DRIVER (driver), NULL);
  state = sandbox_state_new ("gated", "gated", "gated", NULL);
  g_assert_nonnull (state);
  handle = g_object_new (GATED_TYPE_HANDLE, "session", session, "state", state, NULL);
  handle->binding = g_object_new (GATED_TYPE_BINDING, NULL);
  handle->binding->driver = g_object_ref (driver);

  *gate_out = gate;
  return SANDBOX_HANDLE (handle);
}
