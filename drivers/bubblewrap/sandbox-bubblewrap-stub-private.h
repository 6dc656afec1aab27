/* sandbox-bubblewrap-stub-private.h — the host's side of the trusted stub
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */

#pragma once

#include "sandbox-bubblewrap-private.h"

G_BEGIN_DECLS

/**
 * SANDBOX_BUBBLEWRAP_STUB_NAME:
 *
 * The stub's process name (its comm), by which lease recovery knows a
 * sandbox's init.
 */
#define SANDBOX_BUBBLEWRAP_STUB_NAME "sandbox-stub"

/**
 * SANDBOX_BUBBLEWRAP_PROXY_PORT:
 *
 * The port on the sandbox's own 127.0.0.1 where, under an allow-list, the
 * guest's HTTP clients reach the gateway: every command gets
 * `http_proxy=http://127.0.0.1:3128` (and its kin), and the stub binds the
 * listener there before the guest runs (stub/sandbox-stub-proxy.c). 3128 is
 * the port HTTP proxies customarily use. Fixed: each sandbox has a network
 * namespace of its own, so no two ever compete for it.
 */
#define SANDBOX_BUBBLEWRAP_PROXY_PORT 3128u

/**
 * SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE:
 *
 * Where, under an allow-list, the guest finds the certificate of the CA
 * the gateway ends its TLS with (the proxy's tunnels): every command's
 * `SSL_CERT_FILE`, `CURL_CA_BUNDLE` and their kin name it.
 */
#define SANDBOX_BUBBLEWRAP_GATEWAY_CA_FILE "/run/sandbox-gateway-ca.pem"

const char *sandbox_bubblewrap_stub_get_path       (GError         **error);
int         sandbox_bubblewrap_stub_open           (GError         **error);
gboolean    sandbox_bubblewrap_stub_check_static   (GError         **error);
GBytes     *sandbox_bubblewrap_stub_message_new    (SandboxCommand  *command,
                                                    gboolean         proxy,
                                                    GError         **error);
int         sandbox_bubblewrap_stub_steal_passed_fd (GSocketControlMessage **messages,
                                                     gint                    n_messages,
                                                     guint                  *n_fds);
gboolean    sandbox_bubblewrap_stub_handoff_open   (int              fds[2],
                                                    GError         **error);
int         sandbox_bubblewrap_stub_handoff_receive (GSocket        *channel,
                                                    guint32         *kind,
                                                    GError         **error);
gboolean    sandbox_bubblewrap_stub_receive_answer (GSocket         *socket,
                                                    char             expected,
                                                    int             *fd,
                                                    GError         **error);

G_END_DECLS
