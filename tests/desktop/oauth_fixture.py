#!/usr/bin/env python3
"""An OAuth-protected MCP server on 127.0.0.1 for the desktop e2e test (the Python twin of
tests/integration/oauth_fixture.rs; standard library only).

  /.well-known/oauth-protected-resource/mcp  protected resource metadata (RFC 9728)
  /.well-known/oauth-authorization-server    authorization server metadata (RFC 8414)
  /authorize   "clicks Allow": redirects at once to redirect_uri with a code and the state
  /token       authorization_code (PKCE S256 checked) and refresh_token grants; the client must
               be the pre-registered CLIENT_ID and authenticate with the client secret (HTTP
               Basic or form body)
  /mcp         streamable HTTP MCP (JSON answers, no SSE stream) with one tool, `echo`; without a
               valid bearer token it answers 401 with a `WWW-Authenticate` challenge. Every MCP
               request must also carry the header `X-Fixture-Key: <key>` (a value the test keeps
               in the keychain as `${secret:…}`), else 403.
  /_fixture    what it saw, as JSON (for the test's assertions; no token values in it)

Usage: oauth_fixture.py PORT_FILE CLIENT_ID CLIENT_SECRET KEY ACCESS_TOKEN REFRESH_TOKEN
The port is written to PORT_FILE once listening. The tokens it hands out are the given values
(the access token gets a `-N` suffix after the first), so the test can look for them.
"""
import base64
import hashlib
import json
import os
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PORT_FILE, CLIENT_ID, CLIENT_SECRET, KEY, ACCESS, REFRESH = sys.argv[1:7]

lock = threading.Lock()
seen = {"authorize": 0, "token": [], "refused": 0, "forbidden": 0, "mcp": [], "calls": 0}
valid = set()
codes = {}  # code -> code_challenge


def client_ok(handler, form):
    """The client id and secret, from HTTP Basic (client_secret_basic) or the form body."""
    auth = handler.headers.get("Authorization", "")
    if auth.startswith("Basic "):
        try:
            user, _, pw = base64.b64decode(auth[6:]).decode().partition(":")
        except ValueError:
            return False
        user, pw = urllib.parse.unquote_plus(user), urllib.parse.unquote_plus(pw)
        return user == CLIENT_ID and pw == CLIENT_SECRET
    return form.get("client_id") == CLIENT_ID and form.get("client_secret") == CLIENT_SECRET


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):  # noqa: N802 - quiet; the test reads /_fixture
        pass

    def base(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send(self, status, body=b"", ctype="application/json", headers=()):
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def body(self):
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n else b""

    def do_GET(self):  # noqa: N802
        url = urllib.parse.urlsplit(self.path)
        base = self.base()
        if url.path == "/.well-known/oauth-protected-resource/mcp":
            self.send(200, {"resource": f"{base}/mcp", "authorization_servers": [base],
                            "scopes_supported": ["echo"]})
        elif url.path == "/.well-known/oauth-authorization-server":
            self.send(200, {"issuer": base, "authorization_endpoint": f"{base}/authorize",
                            "token_endpoint": f"{base}/token", "response_types_supported": ["code"],
                            "grant_types_supported": ["authorization_code", "refresh_token"],
                            "code_challenge_methods_supported": ["S256"],
                            "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"]})
        elif url.path == "/authorize":
            q = dict(urllib.parse.parse_qsl(url.query))
            if q.get("client_id") != CLIENT_ID or q.get("code_challenge_method") != "S256":
                self.send(400, {"error": "invalid_request"})
                return
            code = f"code-{len(codes)}"
            with lock:
                seen["authorize"] += 1
                codes[code] = q.get("code_challenge", "")
            sep = "&" if "?" in q["redirect_uri"] else "?"
            to = q["redirect_uri"] + sep + urllib.parse.urlencode({"code": code, "state": q.get("state", "")})
            self.send(302, b"", "text/plain", [("Location", to)])
        elif url.path == "/_fixture":
            with lock:
                self.send(200, seen)
        elif url.path == "/mcp":
            self.send(405, b"no SSE stream", "text/plain", [("Allow", "POST, DELETE")])
        else:
            self.send(404, b"not found", "text/plain")

    def do_DELETE(self):  # noqa: N802
        self.send(200 if self.path == "/mcp" else 404, b"", "text/plain")

    def do_POST(self):  # noqa: N802
        path = urllib.parse.urlsplit(self.path).path
        if path == "/token":
            self.token(dict(urllib.parse.parse_qsl(self.body().decode())))
        elif path == "/mcp":
            self.mcp(self.body())
        else:
            self.send(404, b"not found", "text/plain")

    def token(self, form):
        grant = form.get("grant_type")
        with lock:
            seen["token"].append({"grant_type": grant, "client_authenticated": client_ok(self, form),
                                  "resource": form.get("resource")})
        if not client_ok(self, form):
            self.send(401, {"error": "invalid_client", "error_description": "client authentication failed"})
            return
        if grant == "authorization_code":
            challenge = codes.pop(form.get("code", ""), None)
            verifier = form.get("code_verifier", "")
            computed = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if challenge is None or challenge != computed:
                self.send(400, {"error": "invalid_grant", "error_description": "bad code or PKCE mismatch"})
                return
        elif grant != "refresh_token" or form.get("refresh_token") != REFRESH:
            self.send(400, {"error": "invalid_grant"})
            return
        with lock:
            access = ACCESS if not valid else f"{ACCESS}-{len(valid)}"
            valid.add(access)
        self.send(200, {"access_token": access, "token_type": "Bearer", "expires_in": 3600,
                        "refresh_token": REFRESH, "scope": "echo"})

    def mcp(self, raw):
        auth = self.headers.get("Authorization", "")
        if not (auth.startswith("Bearer ") and auth[7:] in valid):
            with lock:
                seen["refused"] += 1
            challenge = f'Bearer resource_metadata="{self.base()}/.well-known/oauth-protected-resource/mcp", scope="echo"'
            self.send(401, b"unauthorized", "text/plain", [("WWW-Authenticate", challenge)])
            return
        if self.headers.get("X-Fixture-Key") != KEY:
            with lock:
                seen["forbidden"] += 1
            self.send(403, b"missing or wrong X-Fixture-Key", "text/plain")
            return
        try:
            msg = json.loads(raw)
        except json.JSONDecodeError:
            self.send(400, {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "parse error"}})
            return
        method = msg.get("method")
        with lock:
            seen["mcp"].append(method)
        if "id" not in msg:  # a notification or a response
            self.send(202, b"", "text/plain")
            return
        result = self.answer(method, msg.get("params") or {})
        if result is None:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": f"method not found: {method}"}}
        else:
            reply = {"jsonrpc": "2.0", "id": msg["id"], "result": result}
        self.send(200, reply, headers=[("Mcp-Session-Id", "fixture-session")])

    def answer(self, method, params):
        if method == "initialize":
            return {"protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}}, "serverInfo": {"name": "oauth-fixture", "version": "1.0.0"}}
        if method == "ping":
            return {}
        if method == "tools/list":
            return {"tools": [{"name": "echo", "description": "Echoes the message back",
                               "inputSchema": {"type": "object", "properties": {"message": {"type": "string"}},
                                               "required": ["message"]}}]}
        if method == "tools/call" and params.get("name") == "echo":
            with lock:
                seen["calls"] += 1
            text = str((params.get("arguments") or {}).get("message", ""))
            return {"content": [{"type": "text", "text": text}], "isError": False}
        return None


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    with open(PORT_FILE + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.replace(PORT_FILE + ".tmp", PORT_FILE)
    server.serve_forever()


if __name__ == "__main__":
    main()
