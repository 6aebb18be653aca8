#!/usr/bin/env python3
"""The fixture MCP registry for the desktop e2e: the generic registry API's read side
(GET /v0.1/servers, /v0.1/servers/{name}/versions, /v0.1/servers/{name}/versions/{version})
on 127.0.0.1, serving tests/fixtures/registry/*.json (the documents the Rust tests use).
Usage: registry_fixture.py PORT_FILE   (writes the port it listens on to PORT_FILE)."""
import json
import os
import sys
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HERE = os.path.dirname(os.path.abspath(__file__))
DIR = os.path.join(HERE, "..", "fixtures", "registry")
DOCS = [json.load(open(os.path.join(DIR, f))) for f in sorted(os.listdir(DIR)) if f.endswith(".json")]


def name(d):
    return d["server"]["name"]


def latest(d):
    return d.get("_meta", {}).get("io.modelcontextprotocol.registry/official", {}).get("isLatest", True)


class Handler(BaseHTTPRequestHandler):
    def send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):  # noqa: N802 - http.server's name
        url = urllib.parse.urlsplit(self.path)
        q = dict(urllib.parse.parse_qsl(url.query))
        parts = [urllib.parse.unquote(p) for p in url.path.split("/")[1:]]
        if parts == ["v0.1", "servers"]:
            found = sorted((d for d in DOCS if latest(d) and q.get("search", "") in name(d)), key=name)
            if "cursor" in q:
                found = [d for d in found if name(d) > q["cursor"]]
            limit = int(q.get("limit", "30"))
            page = found[:limit]
            nxt = name(page[-1]) if len(found) > limit else None
            return self.send(200, {"servers": page, "metadata": {"nextCursor": nxt, "count": len(page)}})
        if len(parts) >= 4 and parts[:2] == ["v0.1", "servers"] and parts[3] == "versions":
            versions = sorted((d for d in DOCS if name(d) == parts[2]), key=lambda d: not latest(d))
            if len(parts) == 4 and versions:
                return self.send(200, {"servers": versions, "metadata": {"count": len(versions)}})
            if len(parts) == 5:
                for d in versions:
                    if d["server"]["version"] == parts[4] or (parts[4] == "latest" and latest(d)):
                        return self.send(200, d)
        return self.send(404, {"error": "Server not found"})

    def log_message(self, *args):
        pass


if __name__ == "__main__":
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    with open(sys.argv[1] + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    server.serve_forever()
