/* sandbox-bubblewrap-process-handoff.c — what a sandbox's stub hands the host
 *
 * Under an allow-list the stub hands the host the proxy's listener on a
 * handoff socket (see "Life of a command" in sandbox-bubblewrap-process.c
 * and stub/sandbox-stub-message.h): the process takes our end of the
 * socket when it is prepared, the launcher thread gives the listener to the
 * session's gateway, and it is removed from the gateway when the command is
 * over.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#include "config.h"

#include <unistd.h>

#include "sandbox-bubblewrap-process-fields-private.h"
#include "sandbox-bubblewrap-stub-private.h"

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

/* Launcher thread: what the stub handed over. The proxy's listener goes to
 * the gateway; anything else, or a second listener, means a broken stub,
 * and the socket is closed (the guest then has no proxy). */
gboolean
sandbox_bubblewrap_process_handoff_cb (int          fd,
                                       GIOCondition condition,
                                       gpointer     data)
{
  SandboxBubblewrapProcess *self = data;

  for (;;)
    {
      g_autoptr(GError) error = NULL;
      g_autoptr(GSocket) listener = NULL;
      guint32 kind;
      int handed;

      handed = sandbox_bubblewrap_stub_handoff_receive (self->handoff, &kind, &error);
      if (handed < 0 && g_error_matches (error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK))
        return G_SOURCE_CONTINUE;
      if (handed >= 0 && (self->gateway == NULL || self->proxy_listener_id != 0))
        {
          close (handed);
          g_set_error_literal (&error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                               "The sandbox stub handed over a listener nobody asked for");
        }
      else if (handed >= 0)
        {
          listener = g_socket_new_from_fd (handed, &error);
          if (listener == NULL)
            close (handed);
        }
      if (listener != NULL)
        self->proxy_listener_id = sandbox_gateway_add_proxy_listener (self->gateway, listener,
                                                                      &error);
      if (self->proxy_listener_id == 0 || error != NULL)
        {
          if (!g_error_matches (error, G_IO_ERROR, G_IO_ERROR_CLOSED))
            g_debug ("No proxy for a sandbox: %s", error != NULL ? error->message : "none");
          /* Not sandbox_bubblewrap_process_close_handoff(): a listener given already serves on. */
          sandbox_bubblewrap_source_destroy (&self->handoff_source);
          g_clear_object (&self->handoff);
          return G_SOURCE_REMOVE;
        }
    }
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
