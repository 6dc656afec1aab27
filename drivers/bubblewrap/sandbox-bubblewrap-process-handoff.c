/* sandbox-bubblewrap-process-handoff.c — what a sandbox's stub hands the host
 *
 * Every sandbox's stub hands the host descriptors on a handoff socket (see
 * "Life of a command" in sandbox-bubblewrap-process.c and
 * stub/sandbox-stub-message.h): the process takes our end of the socket
 * when it is prepared, and the launcher thread takes what comes. Under an
 * allow-list the proxy's listener goes to the session's gateway, and is
 * removed from it when the command is over; a terminal and the guest's
 * pidfd go to sandbox-bubblewrap-process-live.c.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <unistd.h>

#include "sandbox-bubblewrap-process-fields-private.h"
#include "sandbox-bubblewrap-stub-private.h"
#include "stub/sandbox-stub-message.h"

/* The sandbox's proxy listener stops serving: its command is over. */
void
sandbox_bubblewrap_process_close_handoff (SandboxBubblewrapProcess *self)
{
  sandbox_bubblewrap_source_destroy (&self->handoff_source);
  g_clear_object (&self->handoff);
  if (self->proxy_listener_id != 0)
    sandbox_gateway_remove_proxy_listener (self->gateway, self->proxy_listener_id);
  self->proxy_listener_id = 0;
}

/* The proxy's listener goes to the gateway; a second one, or one for a
 * sandbox without a gateway, is refused. Takes @fd. */
static gboolean
take_proxy_listener (SandboxBubblewrapProcess  *self,
                     int                        fd,
                     GError                   **error)
{
  g_autoptr(GSocket) listener = NULL;

  if (self->gateway == NULL || self->proxy_listener_id != 0)
    {
      close (fd);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "The sandbox stub handed over a listener nobody asked for");
      return FALSE;
    }
  listener = g_socket_new_from_fd (fd, error);
  if (listener == NULL)
    {
      close (fd);
      return FALSE;
    }
  self->proxy_listener_id = sandbox_gateway_add_proxy_listener (self->gateway, listener, error);
  return self->proxy_listener_id != 0;
}

/* A terminal only for a command that asked for one, and once. Takes @fd. */
static gboolean
take_terminal (SandboxBubblewrapProcess  *self,
               int                        fd,
               GError                   **error)
{
  if (!self->wants_terminal || self->terminal_handed)
    {
      close (fd);
      g_set_error_literal (error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                           "The sandbox stub handed over a terminal nobody asked for");
      return FALSE;
    }
  self->terminal_handed = TRUE;
  sandbox_bubblewrap_process_take_terminal (self, fd);
  return TRUE;
}

static gboolean
take_handed (SandboxBubblewrapProcess  *self,
             guint32                    kind,
             int                        fd,
             GError                   **error)
{
  switch (kind)
    {
    case STUB_HANDOFF_PROXY_LISTENER:
      return take_proxy_listener (self, fd, error);
    case STUB_HANDOFF_TERMINAL:
      return take_terminal (self, fd, error);
    case STUB_HANDOFF_GUEST:
      sandbox_bubblewrap_process_take_guest (self, fd);
      return TRUE;
    default:
      g_assert_not_reached ();
    }
}

/**
 * sandbox_bubblewrap_process_receive_handoffs:
 * @self: a launched process
 *
 * Takes whatever the stub handed over and waits in the socket, without
 * blocking. Anything malformed or unasked for means a broken stub: the
 * socket is closed (what was given already stays: a proxy listener serves
 * on). Launcher thread.
 */
void
sandbox_bubblewrap_process_receive_handoffs (SandboxBubblewrapProcess *self)
{
  while (self->handoff != NULL)
    {
      g_autoptr(GError) error = NULL;
      guint32 kind;
      int handed;

      handed = sandbox_bubblewrap_stub_handoff_receive (self->handoff, &kind, &error);
      if (handed < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return;
      if (handed >= 0 && take_handed (self, kind, handed, &error))
        continue;
      if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CLOSED))
        g_debug ("A sandbox's stub handed over nothing usable: %s", error->message);
      /* Not sandbox_bubblewrap_process_close_handoff(): a listener given already serves on. */
      sandbox_bubblewrap_source_destroy (&self->handoff_source);
      g_clear_object (&self->handoff);
    }
}

/* Launcher thread: the stub handed something over, or is gone. */
gboolean
sandbox_bubblewrap_process_handoff_cb (int          fd,
                                       GIOCondition condition,
                                       gpointer     data)
{
  /* Destroys this source once the socket is closed. */
  sandbox_bubblewrap_process_receive_handoffs (data);
  return G_SOURCE_CONTINUE;
}

/* Our end of the stub's handoff socket (@fd, taken), non-blocking. */
gboolean
sandbox_bubblewrap_process_take_handoff (SandboxBubblewrapProcess  *self,
                                         int                        fd,
                                         GError                   **error)
{
  g_autoptr(GError) cause = NULL;

  self->handoff = g_socket_new_from_fd (fd, &cause);
  if (self->handoff == NULL)
    {
      close (fd);
      g_set_error (error, SANDBOX_ERROR, SANDBOX_ERROR_UNAVAILABLE,
                   "Sandbox process could not start: %s", cause->message);
      return FALSE;
    }
  g_socket_set_blocking (self->handoff, FALSE);
  return TRUE;
}
