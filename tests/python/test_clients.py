#!/usr/bin/python3
# Real package managers inside real sandboxes, through the allow-list's
# proxy, over HTTPS the gateway ends: `pip install` from a simple index,
# `npm install` from a registry (metadata and tarball served statically)
# and `git clone` through `git http-backend` — each from a loopback HTTPS
# upstream with a CA this test makes (trusted by the gateway through the
# backend's upstream-ca-file), each request carrying the rule's credential,
# which the guest never sees; and each refused when its origin is not
# allowed (nothing reaches the upstream).
#
# npm is not in ./dev's list: Debian's npm conflicts with the nodejs that
# ships its own (NodeSource's); the npm case runs wherever /usr/bin/npm is
# and is skipped, saying so, elsewhere.
#
# The upstream's certificate names localhost, which the guest's no_proxy
# exempts from the proxy: the guest's commands clear no_proxy (a real
# registry is no localhost).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import hashlib
import http.server
import io
import json
import os
import shutil
import ssl
import subprocess
import tarfile
import tempfile
import threading
import unittest
import zipfile

from sandboxtest import GLib, Sandbox, SandboxTestCase, bubblewrap_usable

CREDENTIAL = 'Bearer registry-token-9f4a'
CLIENTS = {'pip': '/usr/lib/python3/dist-packages/pip', 'npm': '/usr/bin/npm',
           'git': '/usr/lib/git-core/git-http-backend'}


def make_certificates(directory):
    """A CA and a leaf for localhost signed by it (the openssl CLI)."""
    def openssl(*args):
        subprocess.run(['openssl', *args], cwd=directory, check=True, capture_output=True)
    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1',
            '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=clients CA',
            '-addext', 'basicConstraints=critical,CA:TRUE',
            '-addext', 'keyUsage=critical,keyCertSign')
    openssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes',
            '-keyout', 'leaf.key', '-out', 'leaf.csr', '-subj', '/CN=localhost')
    with open(os.path.join(directory, 'leaf.ext'), 'w') as f:
        f.write('subjectAltName=DNS:localhost\nbasicConstraints=CA:FALSE\n')
    openssl('x509', '-req', '-in', 'leaf.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key',
            '-CAcreateserial', '-out', 'leaf.pem', '-days', '2', '-extfile', 'leaf.ext')
    return os.path.join(directory, 'ca.pem')


def make_wheel():
    """demo 1.0 as a pure-Python wheel."""
    files = {
        'demo/__init__.py': b'GREETING = "hello from demo"\n',
        'demo-1.0.dist-info/METADATA': b'Metadata-Version: 2.1\nName: demo\nVersion: 1.0\n',
        'demo-1.0.dist-info/WHEEL': (b'Wheel-Version: 1.0\nGenerator: test\n'
                                     b'Root-Is-Purelib: true\nTag: py3-none-any\n'),
    }
    record = ''.join('%s,,\n' % name for name in files) + 'demo-1.0.dist-info/RECORD,,\n'
    files['demo-1.0.dist-info/RECORD'] = record.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, 'w') as wheel:
        for name, data in files.items():
            wheel.writestr(name, data)
    return buffer.getvalue()


def make_npm_tarball():
    """demo-pkg 1.0.0 as npm packs it (everything under package/)."""
    files = {
        'package/package.json': json.dumps({'name': 'demo-pkg', 'version': '1.0.0',
                                            'main': 'index.js'}).encode(),
        'package/index.js': b'module.exports = "hello from demo-pkg";\n',
    }
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode='w:gz') as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o644
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def make_git_repository(root):
    """A bare repository demo.git with one commit, served by git http-backend."""
    work = os.path.join(root, 'work')
    os.makedirs(work)
    environment = dict(os.environ, GIT_AUTHOR_NAME='t', GIT_AUTHOR_EMAIL='t@example.com',
                       GIT_COMMITTER_NAME='t', GIT_COMMITTER_EMAIL='t@example.com',
                       HOME=root)

    def git(*args, cwd=work):
        subprocess.run(['git', *args], cwd=cwd, check=True, capture_output=True, env=environment)
    git('init', '-q', '-b', 'main')
    with open(os.path.join(work, 'README'), 'w') as f:
        f.write('hello from demo.git\n')
    git('add', 'README')
    git('commit', '-q', '-m', 'first')
    git('clone', '-q', '--bare', work, os.path.join(root, 'demo.git'), cwd=root)
    git('config', 'http.receivepack', 'false', cwd=os.path.join(root, 'demo.git'))


class Registry(http.server.BaseHTTPRequestHandler):
    """The three registries on one HTTPS origin; every request must carry
    the credential (401 otherwise), and each is counted."""

    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, status, body, content_type='application/octet-stream', headers=()):
        self.send_response(status)
        self.send_header('Content-Type', content_type)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def authorized(self):
        server = self.server
        with server.lock:
            server.requests.append((self.command, self.path,
                                    self.headers.get('Authorization') == CREDENTIAL))
        if self.headers.get('Authorization') != CREDENTIAL:
            self.reply(401, b'no credential\n', 'text/plain')
            return False
        return True

    def do_GET(self):
        if not self.authorized():
            return
        files = self.server.files
        path = self.path.split('?', 1)[0]
        if path.startswith('/git/'):
            self.git_backend(b'')
        elif path in files:
            content_type, body = files[path]
            self.reply(200, body, content_type)
        else:
            self.reply(404, b'not found\n', 'text/plain')

    def do_POST(self):
        if not self.authorized():
            return
        body = self.rfile.read(int(self.headers.get('Content-Length', '0')))
        self.git_backend(body)

    def git_backend(self, body):
        path, _, query = self.path.partition('?')
        environment = dict(os.environ, GIT_PROJECT_ROOT=self.server.git_root,
                           GIT_HTTP_EXPORT_ALL='1', PATH_INFO=path[len('/git'):],
                           QUERY_STRING=query, REQUEST_METHOD=self.command,
                           CONTENT_TYPE=self.headers.get('Content-Type', ''),
                           CONTENT_LENGTH=str(len(body)), REMOTE_ADDR='127.0.0.1')
        output = subprocess.run(['/usr/lib/git-core/git-http-backend'], input=body,
                                capture_output=True, env=environment).stdout
        head, _, payload = output.partition(b'\r\n\r\n')
        status, content_type, headers = 200, 'text/plain', []
        for line in head.decode('latin-1').split('\r\n'):
            name, _, value = line.partition(':')
            value = value.strip()
            if name.lower() == 'status':
                status = int(value.split()[0])
            elif name.lower() == 'content-type':
                content_type = value
            elif name:
                headers.append((name, value))
        self.reply(status, payload, content_type, headers)


@unittest.skipIf(bubblewrap_usable(), bubblewrap_usable())
class ClientsTests(SandboxTestCase):

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(prefix='sandbox-clients-')
        ca = make_certificates(cls.work)
        cls.ca_file = ca
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(os.path.join(cls.work, 'leaf.pem'),
                                os.path.join(cls.work, 'leaf.key'))
        server = http.server.ThreadingHTTPServer(('127.0.0.1', 0), Registry)
        server.socket = context.wrap_socket(server.socket, server_side=True)
        server.lock = threading.Lock()
        server.requests = []
        cls.port = server.server_address[1]
        cls.origin = 'https://localhost:%d' % cls.port
        wheel = make_wheel()
        tarball = make_npm_tarball()
        wheel_name = 'demo-1.0-py3-none-any.whl'
        index = ('<html><body><a href="/files/%s#sha256=%s">%s</a></body></html>'
                 % (wheel_name, hashlib.sha256(wheel).hexdigest(), wheel_name))
        metadata = {
            'name': 'demo-pkg', 'dist-tags': {'latest': '1.0.0'},
            'versions': {'1.0.0': {
                'name': 'demo-pkg', 'version': '1.0.0', 'main': 'index.js',
                'dist': {'tarball': cls.origin + '/npm/demo-pkg/-/demo-pkg-1.0.0.tgz',
                         'shasum': hashlib.sha1(tarball).hexdigest()}}},
        }
        server.files = {
            '/simple/demo/': ('text/html', index.encode()),
            '/files/' + wheel_name: ('application/octet-stream', wheel),
            '/npm/demo-pkg': ('application/json', json.dumps(metadata).encode()),
            '/npm/demo-pkg/-/demo-pkg-1.0.0.tgz': ('application/octet-stream', tarball),
        }
        server.git_root = os.path.join(cls.work, 'git')
        make_git_repository(server.git_root)
        cls.server = server
        cls.thread = threading.Thread(target=server.serve_forever, daemon=True)
        cls.thread.start()

    @classmethod
    def tearDownClass(cls):
        cls.server.shutdown()
        cls.server.server_close()
        shutil.rmtree(cls.work, ignore_errors=True)

    def setUp(self):
        super().setUp()
        with self.server.lock:
            self.server.requests.clear()
        self.backend = Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory,
                                           upstream_ca_file=self.ca_file)
        template = Sandbox.Template.new('clients')
        template.add_file('README.txt', b'clients\n')
        self.key, _reused = self.backend.prewarm(template)

    def open_session(self, origin):
        policy = Sandbox.NetworkPolicy.new_from_json(json.dumps(
            {'allow': [{'origin': origin, 'headers': {'Authorization': CREDENTIAL}}]}))
        handle = self.backend.create(self.key, None, policy)
        self.addCleanup(handle.delete)
        return handle.get_session()

    def guest(self, session, script):
        command = Sandbox.Command(['/bin/sh', '-c', 'unset no_proxy NO_PROXY; ' + script],
                                  timeout_ms=120000)
        return session.run(command)

    def requests(self):
        with self.server.lock:
            return list(self.server.requests)

    def assertThroughGateway(self, result, wanted):
        output = result.stdout.decode(errors='replace') + result.stderr.decode(errors='replace')
        self.assertEqual(result.exit_status, 0, output[-3000:])
        self.assertIn(wanted, output)
        requests = self.requests()
        self.assertTrue(requests)
        self.assertTrue(all(authorized for _method, _path, authorized in requests), requests)

    def assertRefused(self, result):
        self.assertNotEqual(result.exit_status, 0)
        self.assertEqual(self.requests(), [])

    @unittest.skipUnless(os.path.isdir(CLIENTS['pip']), 'python3-pip is not installed')
    def test_pip_install(self):
        script = ('/usr/bin/python3 -m pip install --no-cache-dir --disable-pip-version-check '
                  '--index-url {origin}/simple/ --target /workspace/site demo && '
                  'PYTHONPATH=/workspace/site /usr/bin/python3 -c '
                  '"import demo; print(demo.GREETING)"')
        result = self.guest(self.open_session(self.origin), script.format(origin=self.origin))
        self.assertThroughGateway(result, 'hello from demo')
        other = 'https://localhost:%d' % (self.port + 1)
        with self.server.lock:
            self.server.requests.clear()
        refused = self.guest(self.open_session(other), script.format(origin=self.origin))
        self.assertRefused(refused)

    @unittest.skipUnless(os.path.exists(CLIENTS['npm']), 'npm is not installed')
    def test_npm_install(self):
        script = ('cd /workspace && npm install --no-audit --no-fund --cache /tmp/npm-cache '
                  '--registry {origin}/npm/ demo-pkg && '
                  'node -e "console.log(require(\'demo-pkg\'))"')
        result = self.guest(self.open_session(self.origin), script.format(origin=self.origin))
        self.assertThroughGateway(result, 'hello from demo-pkg')
        with self.server.lock:
            self.server.requests.clear()
        refused = self.guest(self.open_session('https://localhost:%d' % (self.port + 1)),
                             script.format(origin=self.origin))
        self.assertRefused(refused)

    @unittest.skipUnless(os.path.exists(CLIENTS['git']), 'git is not installed')
    def test_git_clone(self):
        script = ('git clone -q {origin}/git/demo.git /workspace/demo && '
                  'cat /workspace/demo/README')
        result = self.guest(self.open_session(self.origin), script.format(origin=self.origin))
        self.assertThroughGateway(result, 'hello from demo.git')
        self.assertTrue(any(method == 'POST' for method, _path, _ok in self.requests()),
                        'the smart protocol (git-upload-pack) was used')
        with self.server.lock:
            self.server.requests.clear()
        refused = self.guest(self.open_session('https://localhost:%d' % (self.port + 1)),
                             script.format(origin=self.origin))
        self.assertRefused(refused)


if __name__ == '__main__':
    unittest.main(verbosity=2)
