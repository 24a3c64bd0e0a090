"""An OTLP/HTTP trace receiver for tests/it (the OpenTelemetry project's own protobuf
definitions, `opentelemetry-proto`, decode what aptitude sends).

    .venv-tests/bin/python tests/consumers/otlp_receiver.py OUT.jsonl

Listens on 127.0.0.1 (a free port, printed as the first stdout line), takes
`POST /v1/traces` with `content-type: application/x-protobuf` as an OpenTelemetry
Collector's OTLP/HTTP receiver does, and appends each request to OUT.jsonl as the
protobuf's canonical JSON with its headers (one line per request). A body that does not decode as an
`ExportTraceServiceRequest` gets a 400 and is written as {"error": ...}; other paths get a
404. It answers a decoded request as the Collector does: 200 with an empty
`ExportTraceServiceResponse`.

A real OpenTelemetry Collector could not be installed from the registries CI reaches
(its releases are on GitHub only), so this receiver is the consumer: it rejects anything
the official definitions do not accept.
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

OUT = sys.argv[1]


class Receiver(BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length", "0"))
        body = self.rfile.read(length)
        if self.path != "/v1/traces":
            self.send_response(404)
            self.end_headers()
            return
        record = {
            "content_type": self.headers.get("content-type"),
            "headers": {k.lower(): v for k, v in self.headers.items()},
        }
        status = 200
        try:
            request = ExportTraceServiceRequest()
            request.ParseFromString(body)
            record["request"] = MessageToDict(request)
        except Exception as e:  # noqa: BLE001 - any decode failure is the finding
            record["error"] = str(e)
            status = 400
        with open(OUT, "a", encoding="utf-8") as f:
            f.write(json.dumps(record) + "\n")
        reply = ExportTraceServiceResponse().SerializeToString() if status == 200 else b""
        self.send_response(status)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
print(server.server_address[1], flush=True)
server.serve_forever()
