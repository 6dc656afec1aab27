/* test-gateway-event.c — the names of a gateway event's enums
 *
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * sandbox_gateway_decision_to_string() and
 * sandbox_gateway_arrival_to_string() give every value the name logs and
 * sandboxctl's JSON use (the enum types' nicks), and NULL for a number
 * that is no value.
 */

#include <sandbox.h>

static void
test_decision_names (void)
{
  g_assert_cmpstr (sandbox_gateway_decision_to_string (SANDBOX_GATEWAY_DECISION_ALLOWED), ==,
                   "allowed");
  g_assert_cmpstr (sandbox_gateway_decision_to_string (SANDBOX_GATEWAY_DECISION_DENIED), ==,
                   "denied");
  g_assert_cmpstr (sandbox_gateway_decision_to_string (SANDBOX_GATEWAY_DECISION_BUSY), ==,
                   "busy");
  g_assert_cmpstr (sandbox_gateway_decision_to_string (SANDBOX_GATEWAY_DECISION_FAILED), ==,
                   "failed");
  g_assert_cmpstr (sandbox_gateway_decision_to_string (SANDBOX_GATEWAY_DECISION_BAD_REQUEST),
                   ==, "bad-request");
  g_assert_null (sandbox_gateway_decision_to_string ((SandboxGatewayDecision) 1000));
}

static void
test_arrival_names (void)
{
  g_assert_cmpstr (sandbox_gateway_arrival_to_string (SANDBOX_GATEWAY_ARRIVAL_SOCKET), ==,
                   "socket");
  g_assert_cmpstr (sandbox_gateway_arrival_to_string (SANDBOX_GATEWAY_ARRIVAL_PROXY), ==,
                   "proxy");
  g_assert_cmpstr (sandbox_gateway_arrival_to_string (SANDBOX_GATEWAY_ARRIVAL_TUNNEL), ==,
                   "tunnel");
  g_assert_null (sandbox_gateway_arrival_to_string ((SandboxGatewayArrival) -1));
}

int
main (int    argc,
      char **argv)
{
  g_test_init (&argc, &argv, NULL);
  g_test_add_func ("/sandbox/gateway-event/decision-names", test_decision_names);
  g_test_add_func ("/sandbox/gateway-event/arrival-names", test_arrival_names);
  return g_test_run ();
}
