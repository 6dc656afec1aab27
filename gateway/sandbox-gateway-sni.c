/* sandbox-gateway-sni.c — the server name a guest's TLS asks for
 *
 * A tunnel's TLS must ask for the host its CONNECT named: a guest that
 * names one host to the proxy and another to TLS is fronting a domain. GIO
 * 2.74 does not tell a GTlsServerConnection what name the client asked
 * for, so the tunnel reads it before GIO's handshake begins, from the
 * bytes of the ClientHello peeked (not read) off the socket.
 *
 * Nothing of TLS is parsed here: the bytes go to a throw-away OpenSSL
 * server on memory BIOs, whose server-name callback gets the name as
 * OpenSSL parsed it and then ends that handshake; nothing is written back
 * to the guest. The ClientHello is incomplete while OpenSSL wants to read
 * more.
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#undef G_LOG_DOMAIN
#define G_LOG_DOMAIN "Sandbox-Gateway"

#include "config.h"

#include <openssl/err.h>
#include <openssl/ssl.h>

#include "sandbox-gateway-sni-private.h"

typedef struct
{
  gboolean called;
  char *name;
} ServerName;

static int
on_server_name (SSL      *ssl,
                int      *alert,
                void     *user_data)
{
  ServerName *server_name = SSL_get_app_data (ssl);

  server_name->called = TRUE;
  server_name->name = g_strdup (SSL_get_servername (ssl, TLSEXT_NAMETYPE_host_name));
  /* Seen all that is needed: this handshake goes no further. */
  *alert = SSL_AD_UNRECOGNIZED_NAME;
  return SSL_TLSEXT_ERR_ALERT_FATAL;
}

/* One for the process: OpenSSL contexts are safe to share between
 * threads once set up. */
static SSL_CTX *
context_get (void)
{
  static SSL_CTX *context;
  static gsize made = 0;

  if (g_once_init_enter (&made))
    {
      context = SSL_CTX_new (TLS_server_method ());
      if (context == NULL)
        g_error ("Could not make an OpenSSL context");
      /* Each handshake's own result is its SSL's application data. */
      SSL_CTX_set_tlsext_servername_callback (context, on_server_name);
      g_once_init_leave (&made, 1);
    }
  return context;
}

/*
 * sandbox_gateway_sni_read:
 * @data: the first bytes the guest sent in the tunnel
 * @server_name: (out) (transfer full) (nullable): the name its ClientHello
 *   asks for, or %NULL when it names none
 *
 * May be called from any thread.
 *
 * Returns: whether @data holds a whole ClientHello, and the name is read
 */
SandboxGatewaySniResult
sandbox_gateway_sni_read (const guint8  *data,
                          gsize          length,
                          char         **server_name)
{
  ServerName found = { 0 };
  SSL *ssl;
  BIO *input;
  BIO *output;
  int result;
  int reason;

  *server_name = NULL;
  if (length == 0 || length > G_MAXINT)
    return length == 0 ? SANDBOX_GATEWAY_SNI_INCOMPLETE : SANDBOX_GATEWAY_SNI_INVALID;

  ssl = SSL_new (context_get ());
  input = BIO_new_mem_buf (data, (int) length);
  output = BIO_new (BIO_s_mem ());
  if (ssl == NULL || input == NULL || output == NULL)
    g_error ("Out of memory reading a ClientHello");
  /* At the end of @data, "retry" rather than end of file: more may come. */
  BIO_set_mem_eof_return (input, -1);
  SSL_set_bio (ssl, input, output);
  SSL_set_accept_state (ssl);
  SSL_set_app_data (ssl, &found);

  result = SSL_do_handshake (ssl);
  reason = SSL_get_error (ssl, result);
  SSL_free (ssl);
  ERR_clear_error ();

  if (found.called)
    {
      *server_name = found.name;
      return SANDBOX_GATEWAY_SNI_READ;
    }
  return reason == SSL_ERROR_WANT_READ ? SANDBOX_GATEWAY_SNI_INCOMPLETE : SANDBOX_GATEWAY_SNI_INVALID;
}
