#!/usr/bin/env python3
"""Regenerates the checked-in seed corpora under tests/fuzz/corpus/.

Inputs come from the conformance vectors (validation.jsonl, template-keys.jsonl)
in $SANDBOX_CONFORMANCE_DIR, default tests/vectors/ (vendored from the design),
plus a few hand-written seeds for what the vectors do not cover (paths, JSON
edge cases, raw HTTP). File names are the SHA-1 of the contents, as libFuzzer
names corpus files, so regenerating is idempotent.
"""
import base64
import hashlib
import json
import os
import pathlib

here = pathlib.Path(__file__).resolve().parent
repo = here.parent.parent
conformance = pathlib.Path(os.environ.get("SANDBOX_CONFORMANCE_DIR",
                                          repo / "tests" / "vectors"))
corpus = here / "corpus"


def add(target, data):
    if isinstance(data, str):
        data = data.encode("utf-8")
    directory = corpus / target
    directory.mkdir(parents=True, exist_ok=True)
    (directory / hashlib.sha1(data).hexdigest()).write_bytes(data)


kinds = {"network-policy": "fuzz-network-policy", "state": "fuzz-state", "command": "fuzz-command"}
with open(conformance / "validation.jsonl", encoding="utf-8") as vectors:
    for line in vectors:
        if not line.strip():
            continue
        row = json.loads(line)
        text = json.dumps(row["input"], ensure_ascii=False)
        add(kinds[row["kind"]], text)
        add("fuzz-json", text)
        if isinstance(row["input"], dict) and "cwd" in row["input"]:
            add("fuzz-path", row["input"]["cwd"])

with open(conformance / "template-keys.jsonl", encoding="utf-8") as vectors:
    for line in vectors:
        if not line.strip():
            continue
        row = json.loads(line)
        fields = [row["name"].encode(), row["template"].encode()]
        for path, contents in row["files_base64"].items():
            fields += [path.encode(), base64.b64decode(contents).replace(b"\0", b"")]
        add("fuzz-template", b"\0".join(fields))
        add("fuzz-json", row["canonical_json"])

for path in ["/workspace", ".", "a.txt", "/workspace/a/b.txt", "dir/ü.txt", "/workspace/",
             "a//b", "./a", "a/../b", "..", "/etc/passwd", "a\\b", "/workspace/workspace",
             "a/.", "\xff", ".hidden/..x"]:
    add("fuzz-path", path.encode("utf-8", "surrogateescape") if path != "\xff" else b"\xff")

for text in ['{"a":[1,2.5e10,-0,true,false,null,"\\u00e9\\ud83d\\ude00"]}', '"\\u0000"',
             '{"a":1,"a":2}', "[1,]", "/* c */ 1", "'x'", "1e999", "[[[[[[[[[[]]]]]]]]]]",
             '"\\ud800"', "\ufeff{}", '{"k":"v"} x', "[9223372036854775808,-9223372036854775809]"]:
    add("fuzz-json", text)

add("fuzz-command", '{"executable":"x","timeoutMs":18446744073709551617}')

# The cluster driver's etcd reply parsers, fed replies of a real etcd 3.4
# gateway (captured with curl); the first byte picks the parser:
# 0 range, 1 txn, 2 lease grant, 3 keepalive.
etcd_replies = {
    0: [
        "{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"2\",\"raft_term\":\"2\"},\"kvs\":[{\"key\":\"L2xpYnNhbmRib3gvc2Vzc2lvbnMvczEvb3duZXI=\",\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"eyJob3N0IjoiYSJ9\",\"lease\":\"4111120391383625221\"}],\"count\":\"1\"}",
        "{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"2\",\"raft_term\":\"2\"}}",
        "{\"error\":\"illegal base64 data at input byte 0\",\"message\":\"illegal base64 data at input byte 0\",\"code\":3}",
    ],
    1: [
        "{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"2\",\"raft_term\":\"2\"},\"succeeded\":true,\"responses\":[{\"response_put\":{\"header\":{\"revision\":\"2\"}}}]}",
        "{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"2\",\"raft_term\":\"2\"},\"responses\":[{\"response_range\":{\"header\":{\"revision\":\"2\"},\"kvs\":[{\"key\":\"L2xpYnNhbmRib3gvc2Vzc2lvbnMvczEvb3duZXI=\",\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"eyJob3N0IjoiYSJ9\",\"lease\":\"4111120391383625221\"}],\"count\":\"1\"}}]}",
    ],
    2: [
        "{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"1\",\"raft_term\":\"2\"},\"ID\":\"4111120391383625221\",\"TTL\":\"10\"}",
    ],
    3: [
        "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"1\",\"raft_term\":\"2\"},\"ID\":\"4111120391383625221\",\"TTL\":\"10\"}}",
        "{\"result\":{\"header\":{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\",\"revision\":\"3\",\"raft_term\":\"2\"},\"ID\":\"4111120391383625221\"}}",
    ],
}
for parser, replies in etcd_replies.items():
    for reply in replies:
        add("fuzz-cluster-etcd", bytes([parser]) + reply.encode())
        # A reply to the wrong call must be refused or read, never crash.
        add("fuzz-cluster-etcd", bytes([(parser + 1) % 4]) + reply.encode())

# Checkpoint manifests: what sandbox_cluster_manifest_serialize() writes (a
# session's, naming it, or a template's, "session":null), and shapes a hostile
# store could hold instead.
digest = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
v2 = '{"version":2,"session":null,"entries":'
for text in [
    v2 + '[]}',
    '{"version":2,"session":"0f3a9c","entries":[]}',
    '{"version":2,"session":"s1","entries":[{"path":"d","kind":"directory","mode":493},'
    '{"path":"d/f","kind":"file","mode":420,"size":3,"sha256":"%s"},'
    '{"path":"d/l","kind":"symlink","target":"../f"}]}' % digest,
    v2 + '[{"path":"../x","kind":"file","mode":420,"size":3,"sha256":"%s"}]}' % digest,
    v2 + '[{"path":"a/b","kind":"directory","mode":493}]}',
    v2 + '[{"path":"b","kind":"directory","mode":493},'
    '{"path":"a","kind":"directory","mode":493}]}',
    v2 + '[{"path":"f","kind":"file","mode":4095,"size":3,"sha256":"%s"}]}' % digest,
    '{"version":2,"entries":[]}',
    '{"version":2,"session":"","entries":[]}',
    '{"version":2,"session":1,"entries":[]}',
    '{"version":1,"entries":[]}',
    v2 + '[],"extra":0}',
    v2 + '[[[[[[[[[[[[]]]]]]]]]]]]}',
]:
    add("fuzz-cluster-manifest", text)

requests = [
    "GET / HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /echo?q=1 HTTP/1.1\r\nHost: @HOST@\r\nAccept: text/plain\r\nAuthorization: guest\r\n"
    "Cookie: a=b\r\nX-Forwarded-For: 1.2.3.4\r\n\r\n",
    "POST /submit HTTP/1.1\r\nHost: @HOST@\r\nContent-Type: application/json\r\n"
    "Content-Length: 7\r\n\r\n{\"a\":1}",
    "PUT /chunked HTTP/1.1\r\nHost: @HOST@\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5\r\nhello\r\n0\r\n\r\n",
    "HEAD / HTTP/1.1\r\nHost: @HOST@\r\n\r\nGET /second HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /big HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /redirect HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /status HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: @DEAD@\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n",
    "GET //evil.example/ HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET http://evil.example/ HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "CONNECT @HOST@ HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "TRACE / HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: @HOST@\r\nHost: example.com\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: @HOST@\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n"
    "0\r\n\r\n",
    "POST / HTTP/1.1\r\nHost: @HOST@\r\nContent-Length: 99999999\r\n\r\nshort",
    "GET / HTTP/1.0\r\n\r\n",
    "OPTIONS * HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /%00%0d%0a HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: @HOST@\r\nExpect: 100-continue\r\nContent-Length: 3\r\n\r\nabc",
    "GET / HTTP/1.1\r\nHost: @HOST@",
    "\r\n\r\n",
    "",
    # upstream answers without a usable Content-Type
    "GET /untyped HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /ctl-type HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "GET /empty-type HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "HEAD /odd-type HTTP/1.1\r\nHost: @HOST@\r\n\r\nGET /odd-type HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    # absolute-form targets naming the Host's own authority
    "GET http://@HOST@/ HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
    "POST http://@HOST@/x HTTP/1.1\r\nHost: @HOST@\r\nContent-Length: 2\r\n\r\nhi",
    # the streaming rule: a small answer whole, /big cut at 64 KiB, pipelined, HEAD
    "GET / HTTP/1.1\r\nHost: @STRM@\r\n\r\n",
    "GET /big HTTP/1.1\r\nHost: @STRM@\r\n\r\n",
    "GET /a HTTP/1.1\r\nHost: @STRM@\r\n\r\nGET /redirect HTTP/1.1\r\nHost: @STRM@\r\n\r\n"
    "HEAD /untyped HTTP/1.1\r\nHost: @STRM@\r\n\r\n",
    "POST /status HTTP/1.1\r\nHost: @STRM@\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
    # chunked framing, whole and pipelined
    "POST /c HTTP/1.1\r\nHost: @HOST@\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;a=b\r\nhello\r\n0A\r\n0123456789\r\n0\r\n\r\nGET /next HTTP/1.1\r\nHost: @HOST@\r\n\r\n",
]
# malformed chunk framing, each with a smuggled request behind it
for body in ["FFFFFFFFFFFFFFFF1\r\nhello\r\n0\r\n\r\n", "zz\r\nhello\r\n0\r\n\r\n",
             "\r\nhello\r\n0\r\n\r\n", "-1\r\nhello\r\n0\r\n\r\n", "+5\r\nhello\r\n0\r\n\r\n",
             "0x5\r\nhello\r\n0\r\n\r\n", " 5\r\nhello\r\n0\r\n\r\n",
             "5;" + "a" * 130 + "\r\nhello\r\n0\r\n\r\n", "5;a\x01\r\nhello\r\n0\r\n\r\n",
             "5\nhello\r\n0\r\n\r\n", "5\r\nhello\n0\r\n\r\n", "5\r\nhelloXX\r\n0\r\n\r\n",
             "5\r\nhello\r\n0\r\n\n", "5\r\nhello\r\n0\r\nX-Trailer: 1\r\n\r\n",
             "0\r\nGET /evil HTTP/1.1\r\nHost: @HOST@\r\n\r\n"]:
    requests.append("POST /c HTTP/1.1\r\nHost: @HOST@\r\nTransfer-Encoding: chunked\r\n\r\n" + body +
                    "GET /evil HTTP/1.1\r\nHost: @HOST@\r\n\r\n")
for request in requests:
    add("fuzz-gateway", request)
# The scanner on its own: a first byte picks the size of the reads.
for request in requests:
    for piece in [b"\x00", b"\x07", b"\x3f"]:
        add("fuzz-gateway-head", piece + request.replace("@HOST@", "a.example:8080")
                                         .replace("@DEAD@", "b.example")
                                         .replace("@STRM@", "c.example").encode())
