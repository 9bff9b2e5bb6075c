#!/usr/bin/env python3
"""A stand-in for a fleet store in tally's push tests: Grafana Pyroscope's push API
(POST /push.v1.PusherService/Push, connect protocol), decoded with python3-protobuf from
tally's own proto/pyroscope files (compiled here by protoc into a descriptor set); with
--format otlp an OTLP/HTTP profiles endpoint (POST /v1development/profiles), decoded from
proto/otlp, each request summarized (summarize_otlp) into its requests.jsonl line.

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
import time

from google.protobuf import descriptor_pb2, message_factory


OTLP_SERVICE = "opentelemetry/proto/collector/profiles/v1development/profiles_service.proto"
OTLP_PACKAGE = "opentelemetry.proto.collector.profiles.v1development."


def compile_protos(proto_root, proto):
    # A descriptor set, not *_pb2 modules: a generated package "types" would clash with
    # Python's own types module.
    out = tempfile.mkdtemp(prefix="tally-receiver-")
    descriptors = os.path.join(out, "push.desc")
    subprocess.run(["protoc", "-I", proto_root, "--include_imports",
                    "--descriptor_set_out=" + descriptors, proto], check=True)
    files = descriptor_pb2.FileDescriptorSet()
    with open(descriptors, "rb") as f:
        files.ParseFromString(f.read())
    return message_factory.GetMessages(files.file)


def any_value(value):
    kind = value.WhichOneof("value")
    return None if kind is None else getattr(value, kind)


def summarize_otlp(request):
    """What the tests check of an ExportProfilesServiceRequest, computed here from the
    decoded message: per resource its attributes, per profile its sample type, totals and,
    as pprof computes them, each function's flat (the leaf location's innermost line) and cum
    (once per sample however often on its stack). `problems` lists breaches of the format's
    rules: entry 0 of a table not the zero value, an index out of its table, duplicate or
    unreferenced dictionary entries, samples without exactly one value or repeated."""
    d = request.dictionary
    problems = []
    tables = {"mapping_table": d.mapping_table, "location_table": d.location_table,
              "function_table": d.function_table, "link_table": d.link_table,
              "attribute_table": d.attribute_table, "stack_table": d.stack_table}
    for name, table in tables.items():
        if len(table) == 0:
            problems.append(name + " is empty")
            continue
        zero = table[0]
        if name == "link_table":
            if any(zero.trace_id) or any(zero.span_id):
                problems.append("link_table[0] is not zero")
        elif zero.ByteSize() != 0:
            problems.append(name + "[0] is not the zero value")
        seen = set()
        for i, entry in enumerate(table):
            key = entry.SerializeToString(deterministic=True)
            if key in seen:
                problems.append("%s[%d] is a duplicate" % (name, i))
            seen.add(key)
    if len(d.string_table) == 0 or d.string_table[0] != "":
        problems.append('string_table[0] is not ""')
    if len(set(d.string_table)) != len(d.string_table):
        problems.append("string_table has duplicates")
    used = {name: {0} for name in tables}
    used["string_table"] = {0}

    def at(table, index, what):
        if not 0 <= index < len(tables[table] if table in tables else d.string_table):
            problems.append("%s %d out of %s" % (what, index, table))
            return None
        used[table].add(index)
        return (tables[table] if table in tables else d.string_table)[index]

    def string(index, what):
        text = at("string_table", index, what)
        return "" if text is None else text

    def attributes(indices, what):
        result = {}
        for a in indices:
            entry = at("attribute_table", a, what)
            if entry is None:
                continue
            key = string(entry.key_strindex, "attribute key")
            if key in result:
                problems.append("%s: attribute key %s twice" % (what, key))
            string(entry.unit_strindex, "attribute unit")
            result[key] = any_value(entry.value)
        return result

    def function_name(index):
        f = at("function_table", index, "function_index")
        return "" if f is None else string(f.name_strindex, "function name")

    mappings = {}
    for m in d.mapping_table[1:]:
        string(m.filename_strindex, "mapping filename")
    for loc in d.location_table[1:]:
        for line in loc.lines:
            f = at("function_table", line.function_index, "function_index")
            if f is not None:
                for field in ("system_name_strindex", "filename_strindex"):
                    string(getattr(f, field), field)
    resources = []
    for rp in request.resource_profiles:
        resource = {"attributes": {kv.key: any_value(kv.value) for kv in rp.resource.attributes},
                    "scopes": []}
        for sp in rp.scope_profiles:
            scope = {"name": sp.scope.name, "version": sp.scope.version, "profiles": []}
            for profile in sp.profiles:
                summary = {"sample_type": string(profile.sample_type.type_strindex, "type") + "/" +
                           string(profile.sample_type.unit_strindex, "unit"),
                           "period_type": string(profile.period_type.type_strindex, "type") + "/" +
                           string(profile.period_type.unit_strindex, "unit"),
                           "period": profile.period, "time_unix_nano": profile.time_unix_nano,
                           "duration_nano": profile.duration_nano,
                           "profile_id": profile.profile_id.hex(), "samples": 0, "total": 0,
                           "flat": {}, "cum": {}, "sample_attributes": {}}
                identities = set()
                for sample in profile.samples:
                    if len(sample.values) != 1:
                        problems.append("a sample with %d values" % len(sample.values))
                        continue
                    identity = (sample.stack_index, tuple(sorted(sample.attribute_indices)),
                                sample.link_index)
                    if identity in identities:
                        problems.append("two samples of one identity")
                    identities.add(identity)
                    value = sample.values[0]
                    summary["samples"] += 1
                    summary["total"] += value
                    for key, v in attributes(sample.attribute_indices, "sample").items():
                        summary["sample_attributes"].setdefault(key, 0)
                        summary["sample_attributes"][key] += 1
                    stack = at("stack_table", sample.stack_index, "stack_index")
                    if stack is None or not stack.location_indices:
                        problems.append("a sample without a stack")
                        continue
                    names = set()
                    for depth, index in enumerate(stack.location_indices):
                        loc = at("location_table", index, "location index")
                        if loc is None:
                            continue
                        if loc.mapping_index != 0:
                            m = at("mapping_table", loc.mapping_index, "mapping_index")
                            if m is not None:
                                mappings[string(m.filename_strindex, "filename")] = attributes(
                                    m.attribute_indices, "mapping")
                        for k, line in enumerate(loc.lines):
                            name = function_name(line.function_index)
                            names.add(name)
                            if depth == 0 and k == 0:
                                summary["flat"][name] = summary["flat"].get(name, 0) + value
                    for name in names:
                        summary["cum"][name] = summary["cum"].get(name, 0) + value
                scope["profiles"].append(summary)
            resource["scopes"].append(scope)
        resources.append(resource)
    for name in list(tables) + ["string_table"]:
        size = len(tables[name]) if name in tables else len(d.string_table)
        unused = size - len(used[name])
        if unused > 0 and name != "link_table":
            problems.append("%d unreferenced %s entries" % (unused, name))
    return {"resources": resources, "mappings": mappings, "problems": problems,
            "strings": len(d.string_table), "stacks": len(d.stack_table)}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--proto-root", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    parser.add_argument("--status", type=int, default=200)
    # Seconds to wait before answering, after writing OUT/receiving: a request in flight.
    parser.add_argument("--delay", type=float, default=0)
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--format", choices=["pyroscope", "otlp"], default="pyroscope")
    args = parser.parse_args()
    otlp = args.format == "otlp"
    if otlp:
        classes = compile_protos(args.proto_root, OTLP_SERVICE)
        PushRequest = classes[OTLP_PACKAGE + "ExportProfilesServiceRequest"]
        PushResponse = classes[OTLP_PACKAGE + "ExportProfilesServiceResponse"]
        api_path, content_type = "/v1development/profiles", "application/x-protobuf"
    else:
        classes = compile_protos(args.proto_root, "push/v1/push.proto")
        PushRequest, PushResponse = classes["push.v1.PushRequest"], classes["push.v1.PushResponse"]
        api_path, content_type = "/push.v1.PusherService/Push", "application/proto"
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
            if args.delay:
                with lock, open(os.path.join(args.out, "receiving"), "a") as f:
                    f.write("%d\n" % len(body))
                time.sleep(args.delay)
            if self.path != api_path:
                return self.refuse("unexpected path " + self.path)
            if self.headers.get("Content-Type") != content_type:
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
            if otlp:
                record.update(summarize_otlp(request))
                with lock, open(os.path.join(args.out, "requests.jsonl"), "a") as f:
                    f.write(json.dumps(record, sort_keys=True) + "\n")
                return self.answer(200, PushResponse().SerializeToString(), content_type)
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
