#!/usr/bin/python3
# The reference guide's network gateway example from Python: an allow-list
# policy whose rule holds a host credential, a guest request that reaches the
# upstream with the credential injected, a denied request answered with the
# Sandbox-Error header, and the audit stream.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import http.client
import http.server
import json
import os
import socket
import sys
import threading
import unittest

from sandboxtest import (GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable, new_backend)

CREDENTIAL = 'Bearer host-held-secret'


class Upstream(http.server.BaseHTTPRequestHandler):
    """Answers with what it received, as JSON (except the credential's value,
    which it only confirms: an upstream that reflects headers would leak it)."""

    def do_GET(self):
        body = json.dumps({
            'path': self.path,
            'authorized': self.headers.get('authorization') == CREDENTIAL,
            'headers': sorted(name.lower() for name in self.headers.keys()),
        }).encode()
        self.send_response(200)
        self.send_header('Content-Type', 'application/json')
        self.send_header('X-Upstream-Only', 'dropped by the gateway')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class EventUpstream(http.server.BaseHTTPRequestHandler):
    """Server-sent events: the first at once, the second only once the test
    has read the first (a buffering gateway would deadlock it)."""
    protocol_version = 'HTTP/1.1'
    first_read = None  # a threading.Event, set by the test

    def write_chunk(self, data):
        self.wfile.write(b'%x\r\n%s\r\n' % (len(data), data))
        self.wfile.flush()

    def do_GET(self):
        self.send_response(200)
        self.send_header('Content-Type', 'text/event-stream')
        self.send_header('Transfer-Encoding', 'chunked')
        self.end_headers()
        self.write_chunk(b'data: 1\n\n')
        in_time = EventUpstream.first_read.wait(5)
        self.write_chunk(b'data: 2\n\n' if in_time else b'data: late\n\n')
        self.write_chunk(b'')

    def log_message(self, *args):
        pass


class UnixHTTPConnection(http.client.HTTPConnection):
    def __init__(self, path, host):
        super().__init__(host)
        self.socket_path = path

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(self.socket_path)


class GatewayTestCase(SandboxTestCase):
    def setUp(self):
        super().setUp()
        self.server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Upstream)
        self.addCleanup(self.server.server_close)
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        self.addCleanup(self.server.shutdown)
        self.host = '127.0.0.1:%d' % self.server.server_address[1]
        self.policy = Sandbox.NetworkPolicy.new_from_json(json.dumps({
            'allow': [{'origin': 'http://%s' % self.host,
                       'headers': {'authorization': CREDENTIAL}}],
        }))


class StandaloneGatewayTests(GatewayTestCase):
    """SandboxGateway itself, as a driver uses it, with the guest's side
    played by an HTTP client on the socket."""

    def request(self, gateway, host, path='/resource?x=1', method='GET'):
        connection = UnixHTTPConnection(gateway.get_socket_path(), host)
        try:
            connection.request(method, path, headers={'Host': host, 'Accept': 'application/json',
                                                      'X-Guest-Header': 'not forwarded'})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), response.read()
        finally:
            connection.close()

    def drain(self):
        context = GLib.MainContext.default()
        while context.iteration(False):
            pass

    def test_allowed_request_gets_the_credential(self):
        gateway = Sandbox.Gateway.new(self.policy)
        self.addCleanup(gateway.close)
        events = []
        gateway.connect('audit', lambda gateway, event: events.append(event))
        self.assertEqual(os.stat(gateway.get_socket_path()).st_mode & 0o777, 0o600)

        status, headers, body = self.request(gateway, self.host)
        self.assertEqual(status, 200)
        seen = json.loads(body)
        self.assertEqual(seen['path'], '/resource?x=1')
        self.assertTrue(seen['authorized'])
        self.assertNotIn('x-guest-header', seen['headers'])
        self.assertNotIn('X-Upstream-Only', headers)
        self.assertNotIn(CREDENTIAL, json.dumps(headers))

        self.drain()
        self.assertEqual(len(events), 1)
        event = events[0]
        self.assertEqual(event.get_decision(), Sandbox.GatewayDecision.ALLOWED)
        self.assertEqual(event.get_arrival(), Sandbox.GatewayArrival.SOCKET)
        self.assertEqual((event.get_method(), event.get_host()), ('GET', self.host))
        self.assertEqual(event.get_upstream_status(), 200)

    def test_denied_request_says_why(self):
        gateway = Sandbox.Gateway.new(self.policy)
        self.addCleanup(gateway.close)
        events = []
        gateway.connect('audit', lambda gateway, event: events.append(event))

        status, headers, body = self.request(gateway, 'example.com')
        self.assertEqual(status, 403)
        self.assertEqual(headers.get(Sandbox.GATEWAY_ERROR_HEADER), 'SANDBOX_NETWORK_DENIED')
        status, headers, body = self.request(gateway, self.host, method='TRACE')
        self.assertEqual(status, 403)

        self.drain()
        self.assertEqual([e.get_decision() for e in events],
                         [Sandbox.GatewayDecision.DENIED, Sandbox.GatewayDecision.DENIED])

    def test_proxy_listener_takes_absolute_form(self):
        gateway = Sandbox.Gateway.new(self.policy)
        self.addCleanup(gateway.close)
        events = []
        gateway.connect('audit', lambda gateway, event: events.append(event))
        listener = Gio.Socket.new(Gio.SocketFamily.IPV4, Gio.SocketType.STREAM,
                                  Gio.SocketProtocol.TCP)
        listener.bind(Gio.InetSocketAddress.new_from_string('127.0.0.1', 0), False)
        listener.listen()
        port = listener.get_local_address().get_port()
        listener_id = gateway.add_proxy_listener(listener)
        self.assertNotEqual(listener_id, 0)

        connection = http.client.HTTPConnection('127.0.0.1', port, timeout=10)
        try:
            connection.request('GET', 'http://%s/resource?x=1' % self.host,
                               headers={'Host': self.host})
            response = connection.getresponse()
            self.assertEqual(response.status, 200)
            self.assertTrue(json.loads(response.read())['authorized'])
        finally:
            connection.close()
        gateway.remove_proxy_listener(listener_id)
        with self.assertRaises(ConnectionRefusedError):
            socket.create_connection(('127.0.0.1', port), timeout=10)

        self.drain()
        self.assertEqual([e.get_arrival() for e in events], [Sandbox.GatewayArrival.PROXY])

    def test_streamed_answer_arrives_as_it_comes(self):
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), EventUpstream)
        self.addCleanup(server.server_close)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        self.addCleanup(server.shutdown)
        EventUpstream.first_read = threading.Event()
        host = '127.0.0.1:%d' % server.server_address[1]
        builder = Sandbox.NetworkPolicyBuilder.new()
        builder.add_origin('http://%s' % host)
        builder.set_stream('http://%s' % host, 0, 0, 60000)
        policy = builder.build()
        self.assertEqual(policy.get_rule_stream(0), (True, 0, 0, 60000))
        self.assertIn('"stream":{"timeoutMs":60000}', policy.to_redacted_json())

        gateway = Sandbox.Gateway.new(policy)
        self.addCleanup(gateway.close)
        connection = UnixHTTPConnection(gateway.get_socket_path(), host)
        self.addCleanup(connection.close)
        connection.request('GET', '/events', headers={'Host': host})
        response = connection.getresponse()
        self.assertEqual(response.status, 200)
        self.assertEqual(response.getheader('Content-Type'), 'text/event-stream')
        self.assertEqual(response.readline(), b'data: 1\n')
        EventUpstream.first_read.set()
        self.assertEqual(response.read(), b'\ndata: 2\n\n')

    def test_policy_replacement_rotates_credentials(self):
        gateway = Sandbox.Gateway.new(self.policy)
        self.addCleanup(gateway.close)
        gateway.set_policy(Sandbox.NetworkPolicy.new_deny_all())
        status, headers, body = self.request(gateway, self.host)
        self.assertEqual(status, 403)
        self.assertEqual(gateway.dup_policy().get_kind(), Sandbox.NetworkPolicyKind.DENY_ALL)


class BubblewrapGatewayTests(GatewayTestCase):
    """The guide's example end to end: curl inside bubblewrap, through the
    gateway socket at /run/sandbox-network.sock."""

    def setUp(self):
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        if not os.path.exists('/usr/bin/curl'):
            self.skipTest('/usr/bin/curl is not installed')
        super().setUp()
        self.backend = new_backend('bubblewrap', state_directory=self.state_directory)
        template = Sandbox.Template.new('gateway')
        self.key, _ = self.backend.prewarm(template, None)

    def create_with_allow_list(self):
        try:
            return self.backend.create(self.key, None, self.policy, None)
        except GLib.Error as error:
            if error.matches(Sandbox.error_quark(), Sandbox.Error.UNAVAILABLE):
                self.skipTest('the bubblewrap driver refuses allow-list policies here: '
                              + error.message)
            raise

    def curl(self, session, host, *extra):
        command = Sandbox.Command.new('/usr/bin/curl')
        command.set_args(['-sS', '-i', '--unix-socket', Sandbox.GATEWAY_GUEST_SOCKET, *extra,
                          'http://%s/resource' % host])
        return session.run(command, None)

    def test_guest_request_through_the_gateway(self):
        handle = self.create_with_allow_list()
        self.addCleanup(handle.delete, None)
        session = handle.get_session()
        errors = []
        self.backend.connect('gateway-error', lambda backend, cause: errors.append(cause))

        result = self.curl(session, self.host)
        self.assertEqual(result.get_exit_status(), 0, result.dup_stderr_text())
        output = result.dup_stdout_text()
        self.assertIn(' 200', output.splitlines()[0])
        self.assertTrue(json.loads(output.split('\r\n\r\n', 1)[1])['authorized'])

        denied = self.curl(session, 'example.com')
        self.assertIn(' 403', denied.dup_stdout_text().splitlines()[0])
        self.assertIn(('%s: SANDBOX_NETWORK_DENIED' % Sandbox.GATEWAY_ERROR_HEADER).lower(),
                      denied.dup_stdout_text().lower())

        # The credential never reaches the guest's environment or the state.
        env = session.run(Sandbox.Command.new('/usr/bin/env'), None)
        self.assertNotIn('host-held-secret', env.dup_stdout_text())
        self.assertNotIn('host-held-secret', handle.capture_state().to_json())

    def test_policy_change_while_busy(self):
        handle = self.create_with_allow_list()
        self.addCleanup(handle.delete, None)
        session = handle.get_session()
        sleep = Sandbox.Command.new('/usr/bin/sleep')
        sleep.add_arg('30')
        process = session.spawn(sleep, None)
        with self.assertRaises(GLib.Error) as raised:
            session.set_network_policy(Sandbox.NetworkPolicy.new_deny_all(), None)
        self.assertSandboxError(raised, Sandbox.Error.BUSY)
        process.stop(None)
        session.set_network_policy(Sandbox.NetworkPolicy.new_deny_all(), None)
        result = self.curl(session, self.host, '--max-time', '5')
        self.assertNotEqual(result.get_exit_status(), 0)


if __name__ == '__main__':
    unittest.main(testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
