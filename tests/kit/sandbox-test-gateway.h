/* sandbox-test-gateway.h — a gateway, its upstream and raw guests, for the gateway's tests
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * A fixture with a SandboxTestUpstream and a SandboxGateway that allows it,
 * collecting the gateway's audit events and upstream errors in the main
 * context; and guests that are raw byte clients on the gateway's Unix
 * socket, so hostile requests arrive exactly as written and answers are
 * read exactly as the gateway wrote them. Suites with more state embed
 * SandboxTestGatewayFixture first in their own fixture.
 */

#pragma once

#include <gio/gio.h>

#include <sandbox.h>

#include "sandbox-test-upstream.h"

G_BEGIN_DECLS

/* The credential sandbox_test_gateway_policy() injects upstream. */
#define SANDBOX_TEST_GATEWAY_SECRET "Bearer host-secret-7f3a"

typedef struct
{
  SandboxTestUpstream *upstream;
  SandboxGateway *gateway;
  GPtrArray *events;   /* SandboxGatewayEvent, as audited */
  GPtrArray *errors;   /* GError, as "upstream-error" gave them */
  char *host;          /* the upstream's host as a Host header names it */
  guint16 proxy_port;  /* a proxy listener's on 127.0.0.1, once added */
} SandboxTestGatewayFixture;

/* One answer as a guest read it. */
typedef struct
{
  guint status;        /* 0 when the connection ended without a response */
  GHashTable *headers; /* lowercase name → value */
  GBytes *body;
} SandboxTestResponse;

void                  sandbox_test_response_free           (SandboxTestResponse *response);
G_DEFINE_AUTOPTR_CLEANUP_FUNC (SandboxTestResponse, sandbox_test_response_free)

SandboxNetworkPolicy *sandbox_test_gateway_policy          (guint16                    port);
void                  sandbox_test_gateway_set_up_full     (SandboxTestGatewayFixture *fixture,
                                                            SandboxTestUpstreamFlags   flags,
                                                            SoupServerCallback         handler,
                                                            gpointer                   data);
void                  sandbox_test_gateway_set_up          (SandboxTestGatewayFixture *fixture,
                                                            gconstpointer              data);
void                  sandbox_test_gateway_tear_down       (SandboxTestGatewayFixture *fixture,
                                                            gconstpointer              data);
void                  sandbox_test_gateway_start           (SandboxTestGatewayFixture *fixture,
                                                            SandboxNetworkPolicy      *policy,
                                                            guint                      request_timeout_ms,
                                                            guint                      header_timeout_ms);

void                  sandbox_test_gateway_adopt           (SandboxTestGatewayFixture *fixture,
                                                            SandboxGateway            *gateway);
void                  sandbox_test_gateway_wait_for_events (SandboxTestGatewayFixture *fixture,
                                                            guint                      count);
void                  sandbox_test_gateway_wait_for_exactly (SandboxTestGatewayFixture *fixture,
                                                             guint                      count);
GError               *sandbox_test_gateway_first_error     (SandboxTestGatewayFixture *fixture);
SandboxGatewayEvent  *sandbox_test_gateway_last_event      (SandboxTestGatewayFixture *fixture);
void                  sandbox_test_assert_event            (SandboxGatewayEvent       *event,
                                                            SandboxGatewayDecision     decision,
                                                            const char                *reason,
                                                            guint                      status);
void                  sandbox_test_assert_refused_head     (SandboxGatewayEvent       *event,
                                                            const char                *reason,
                                                            guint                      status);

GSocketConnection    *sandbox_test_guest_connect           (SandboxTestGatewayFixture *fixture);
guint                 sandbox_test_gateway_add_proxy       (SandboxTestGatewayFixture *fixture);
GSocketConnection    *sandbox_test_proxy_connect           (SandboxTestGatewayFixture *fixture);
SandboxTestResponse  *sandbox_test_proxy_request           (SandboxTestGatewayFixture *fixture,
                                                            const char                *format,
                                                            ...) G_GNUC_PRINTF (2, 3);
void                  sandbox_test_guest_send              (GSocketConnection         *connection,
                                                            const char                *data,
                                                            gsize                      length);
void                  sandbox_test_guest_send_and_half_close (GSocketConnection       *connection,
                                                            const char                *data);
gssize                sandbox_test_guest_read_some         (GSocketConnection         *connection,
                                                            GByteArray                *buffer);
SandboxTestResponse  *sandbox_test_guest_read_response     (GSocketConnection         *connection);
gboolean              sandbox_test_guest_sees_eof          (GSocketConnection         *connection);
SandboxTestResponse  *sandbox_test_guest_exchange          (SandboxTestGatewayFixture *fixture,
                                                            const char                *request,
                                                            gsize                      length);
SandboxTestResponse  *sandbox_test_guest_request           (SandboxTestGatewayFixture *fixture,
                                                            const char                *format,
                                                            ...) G_GNUC_PRINTF (2, 3);

const char           *sandbox_test_response_header         (SandboxTestResponse       *response,
                                                            const char                *name);
void                  sandbox_test_assert_body             (SandboxTestResponse       *response,
                                                            const char                *expected);
void                  sandbox_test_assert_refused          (SandboxTestResponse       *response,
                                                            guint                      status,
                                                            const char                *sandbox_error,
                                                            const char                *body);

G_END_DECLS
