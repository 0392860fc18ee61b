#!/usr/bin/python3
"""hub_server.py — a stand-in for the HuggingFace hub, for tests/hub/test_hub.sh.

Serves the checkpoint folders under --root with the hub's URL layout,
    GET /{owner}/{name}/resolve/{revision}/{file}
on 127.0.0.1 only, at a free port written to --port-file, and stops by
itself after --timeout seconds. Every request is appended to --log as one
line: "GET PATH range=RANGE auth=AUTHORIZATION".

Like the hub: weight files (*.safetensors, *.bin, kept in LFS there) get a
302 to a CDN path on the same server under another host name
(http://localhost:PORT/cdn/..., so that a client must treat it as another
host, as it would the hub's CDN), with X-Linked-Etag: "<sha256>",
X-Linked-Size and ETag; other files are sent directly with the git blob's
sha1 as ETag. The CDN path honours Range (206, Content-Range; 416 past the
end). A 404 carries X-Error-Code: RepositoryNotFound, RevisionNotFound or
EntryNotFound. Revisions: main, v1.0 and refs/pr/1 (all the same files).

The owner picks a fault, so one server serves every test case:
    test           none
    drop           a weight file requested without Range: half its bytes,
                   then the connection is closed (a Range request is served)
    badsum         the hub's sha256 of weight files is wrong
    nosafetensors  model.safetensors is 404 (pytorch_model.bin is served)
    noweights      neither weights file exists
    private        needs "Authorization: Bearer hf_test_token": 401 without
                   it, 403 with another token
    slow           weight bytes in 16 KiB pieces every 10 ms
    stall          a weight file requested without Range: half its bytes,
                   then nothing until the client hangs up (or --timeout),
                   so that a test can interrupt a download surely under way
                   (a Range request is served)
A name roformer_chinese_sim_X serves the reference model X, standing in for
the RoFormer-Sim repositories (which pull with a linear pooler).
"""
import argparse
import hashlib
import http.server
import os
import socket
import sys
import threading
import time
import urllib.parse

OWNERS = {"test", "drop", "badsum", "nosafetensors", "noweights", "private", "slow", "stall"}
REVISIONS = {"main", "v1.0", "refs/pr/1"}
WEIGHTS = {"model.safetensors", "pytorch_model.bin"}
TOKEN = "hf_test_token"

args = None
log_lock = threading.Lock()
sha_cache = {}


def model_folder(name):
    return os.path.join(args.root, name.removeprefix("roformer_chinese_sim_"))


def sha256_of(path):
    if path not in sha_cache:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        sha_cache[path] = h.hexdigest()
    return sha_cache[path]


def git_blob_sha1(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class Hub(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *a):
        pass

    def log_request_line(self):
        with log_lock, open(args.log, "a") as f:
            f.write("%s %s range=%s auth=%s\n" % (self.command, self.path,
                    self.headers.get("Range", "-"),
                    (self.headers.get("Authorization") or "-").replace(" ", "_")))

    def reply(self, status, headers=(), body=b""):
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def not_found(self, code):
        self.reply(404, [("X-Error-Code", code)], (code + "\n").encode())

    def do_GET(self):
        self.log_request_line()
        path = urllib.parse.urlsplit(self.path).path
        parts = path.split("/")
        if len(parts) == 6 and parts[0] == "" and parts[1] == "cdn":
            return self.cdn(parts[2], parts[3], urllib.parse.unquote(parts[4]), parts[5])
        if len(parts) < 6 or parts[0] != "" or parts[3] != "resolve":
            return self.reply(400, body=b"bad path\n")
        # a file may be in a folder (1_Pooling/config.json)
        owner, name, revision = parts[1], parts[2], urllib.parse.unquote(parts[4])
        file = "/".join(parts[5:])
        folder = model_folder(name)
        if owner == "private":
            auth = self.headers.get("Authorization")
            if auth is None:
                return self.reply(401, [("X-Error-Code", "RepositoryNotFound")], b"unauthorized\n")
            if auth != "Bearer " + TOKEN:
                return self.reply(403, [("X-Error-Code", "GatedRepo")], b"forbidden\n")
        if owner not in OWNERS or "/" in name or name.startswith(".") or not os.path.isdir(folder):
            return self.not_found("RepositoryNotFound")
        if revision not in REVISIONS:
            return self.not_found("RevisionNotFound")
        local = os.path.join(folder, file)
        if (not os.path.isfile(local) or ".." in parts[5:] or
                (owner == "nosafetensors" and file == "model.safetensors") or
                (owner == "noweights" and file in WEIGHTS)):
            return self.not_found("EntryNotFound")
        if file in WEIGHTS:
            sha = sha256_of(local)
            if owner == "badsum":
                sha = hashlib.sha256(b"not these bytes").hexdigest()
            location = "http://localhost:%d/cdn/%s/%s/%s/%s" % (
                self.server.server_address[1], owner, name, urllib.parse.quote(revision, safe=""),
                file)
            return self.reply(302, [("Location", location), ("X-Linked-Etag", '"%s"' % sha),
                                    ("X-Linked-Size", str(os.path.getsize(local))),
                                    ("ETag", '"%s"' % sha)])
        with open(local, "rb") as f:
            data = f.read()
        self.reply(200, [("ETag", '"%s"' % git_blob_sha1(data)), ("Content-Type", "text/plain")],
                   data)

    def cdn(self, owner, name, revision, file):
        local = os.path.join(model_folder(name), file)
        if "/" in name or name.startswith(".") or not os.path.isfile(local):
            return self.reply(404, body=b"no such object\n")
        with open(local, "rb") as f:
            data = f.read()
        rng = self.headers.get("Range")
        start = 0
        if rng:
            if not rng.startswith("bytes=") or not rng.endswith("-"):
                return self.reply(400, body=b"only bytes=N- ranges\n")
            start = int(rng[6:-1])
            if start >= len(data):
                return self.reply(416, [("Content-Range", "bytes */%d" % len(data))])
        body = data[start:]
        self.send_response(206 if rng else 200)
        self.send_header("Accept-Ranges", "bytes")
        self.send_header("ETag", '"cdn-%s"' % hashlib.md5(data).hexdigest())
        if rng:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1, len(data)))
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if owner == "drop" and not rng:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        if owner == "stall" and not rng:
            self.wfile.write(body[:len(body) // 2])
            self.wfile.flush()
            # the client sends nothing more: recv returns when it hangs up
            self.connection.settimeout(args.timeout)
            try:
                self.connection.recv(1)
            except OSError:
                pass
            self.close_connection = True
            return
        if owner == "slow":
            for i in range(0, len(body), 16384):
                self.wfile.write(body[i:i + 16384])
                self.wfile.flush()
                time.sleep(0.01)
            return
        self.wfile.write(body)


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # a client that hangs up (a test stopping a download) is no error
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


def main():
    global args
    p = argparse.ArgumentParser()
    p.add_argument("--root", required=True)
    p.add_argument("--port-file", required=True)
    p.add_argument("--log", required=True)
    p.add_argument("--timeout", type=float, default=300)
    args = p.parse_args()
    server = Server(("127.0.0.1", 0), Hub)
    threading.Timer(args.timeout, server.shutdown).start()
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(tmp, args.port_file)
    server.serve_forever()
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
