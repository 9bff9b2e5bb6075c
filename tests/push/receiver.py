#!/usr/bin/env python3
"""A stand-in for a fleet store in tally's push tests: Grafana Pyroscope's push API
(POST /push.v1.PusherService/Push, connect protocol), decoded with python3-protobuf from
tally's own proto/pyroscope files (compiled here by protoc into a descriptor set).

Each request is checked (path, Content-Type, gzip) and decoded; every raw_profile is written
to OUT/profiles/<ID>.pb.gz for the real pprof to read, and one JSON line per request goes to
OUT/requests.jsonl (labels, sample ids, headers). A sample id seen before is counted in
OUT/duplicates. --status makes every answer that HTTP status (with a Connect error body for
4xx), for the error-path tests. The chosen port is written to --port-file once listening."""
import argparse
import gzip
import http.server
import json
import os
import ssl
import subprocess
import sys
import tempfile
import threading

from google.protobuf import descriptor_pb2, message_factory


def compile_protos(proto_root):
    # A descriptor set, not *_pb2 modules: a generated package "types" would clash with
    # Python's own types module.
    out = tempfile.mkdtemp(prefix="tally-receiver-")
    descriptors = os.path.join(out, "push.desc")
    subprocess.run(["protoc", "-I", proto_root, "--include_imports",
                    "--descriptor_set_out=" + descriptors, "push/v1/push.proto"], check=True)
    files = descriptor_pb2.FileDescriptorSet()
    with open(descriptors, "rb") as f:
        files.ParseFromString(f.read())
    classes = message_factory.GetMessages(files.file)
    return classes["push.v1.PushRequest"], classes["push.v1.PushResponse"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proto-root", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--status", type=int, default=200)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    args = parser.parse_args()
    PushRequest, PushResponse = compile_protos(args.proto_root)
    os.makedirs(os.path.join(args.out, "profiles"), exist_ok=True)
    lock = threading.Lock()

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *_):
            pass

        def answer(self, status, body, content_type):
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def refuse(self, why):
            with lock, open(os.path.join(args.out, "errors"), "a") as f:
                f.write(why + "\n")
            body = json.dumps({"code": "invalid_argument", "message": why}).encode()
            self.answer(400, body, "application/json")

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.path != "/push.v1.PusherService/Push":
                return self.refuse("unexpected path " + self.path)
            if self.headers.get("Content-Type") != "application/proto":
                return self.refuse("unexpected Content-Type %s" % self.headers.get("Content-Type"))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            request = PushRequest()
            request.ParseFromString(body)
            if args.status != 200:
                # Recorded before the answer: the test reads it once the client is done.
                with lock, open(os.path.join(args.out, "refused"), "a") as f:
                    f.write("%d\n" % args.status)
                if args.status < 500 and args.status != 429:
                    text = json.dumps({"code": "invalid_argument",
                                       "message": "test store says no"}).encode()
                    self.answer(args.status, text, "application/json")
                else:
                    self.answer(args.status, b"overloaded", "text/plain")
                return
            record = {"headers": {k: v for k, v in self.headers.items()}, "series": []}
            with lock:
                for series in request.series:
                    labels = {pair.name: pair.value for pair in series.labels}
                    ids = []
                    for sample in series.samples:
                        gzip.decompress(sample.raw_profile)  # must be gzip
                        path = os.path.join(args.out, "profiles", sample.ID + ".pb.gz")
                        if os.path.exists(path):
                            with open(os.path.join(args.out, "duplicates"), "a") as f:
                                f.write(sample.ID + "\n")
                        with open(path, "wb") as f:
                            f.write(sample.raw_profile)
                        ids.append(sample.ID)
                    record["series"].append({"labels": labels, "ids": ids})
                with open(os.path.join(args.out, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(record, sort_keys=True) + "\n")
            self.answer(200, PushResponse().SerializeToString(), "application/proto")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)
    if args.tls_cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(args.tls_cert, args.tls_key)
        server.socket = context.wrap_socket(server.socket, server_side=True)
    with open(args.port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
