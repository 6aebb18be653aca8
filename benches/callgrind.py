#!/usr/bin/env python3
"""Instructions per request of one companion build under callgrind (load-independent).

  python3 benches/callgrind.py --bin BIN [--demo DEMO_BIN] [--fast 1|0] [--calls K] [--lists L]
      [--reps R] [--extra-tools T] [--activity on|off] [--measure companion|bridge|companion-via-bridge] [--keep DIR]
      [--url URL]

One session: a temp config with the test server (`DEMO_BIN demo-server --test-tools`; DEMO_BIN
defaults to BIN, give the same one to every build compared so the server's answers are equal),
`BIN serve` on a temp socket, then one raw NDJSON client: initialize, 50 warm-up `tools/call`,
then R times: K `tools/call` (`mcp_demo_echo`) and L `tools/list`. The measured process runs
under `valgrind --tool=callgrind --trace-children=no` (the companion, or `BIN bridge`, which the
client then talks to over stdio); the other runs natively. Each phase of K calls (or L listings)
is counted alone: `callgrind_control --zero` before it and `--dump` after it, so start-up,
warm-up and shut-down are not in it. Prints one JSON line per phase: instructions (Ir) per
request. Instruction counts do not depend on machine load; timer-driven work in the phase does
grow with its wall time (about 30 k instructions per idle second in a debug build: negligible).
HOME and XDG dirs point into the temp dir, so nothing of the user's is read or written. With
`--url` the companion serves that remote server (its `echo` tool, e.g. server-everything started
with `streamableHttp` on a loopback port) in place of the test server.
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time


class Conn:
    """Newline-delimited JSON-RPC over a Unix socket or a child's stdio."""

    def __init__(self, sock=None, proc=None):
        self.sock, self.proc = sock, proc
        if sock:
            self.r, self.w = sock.makefile("rb"), sock.makefile("wb")
        else:
            self.r, self.w = proc.stdout, proc.stdin
        self.rid = 0

    def send(self, obj):
        self.w.write(json.dumps(obj, separators=(",", ":")).encode() + b"\n")
        self.w.flush()

    def request(self, method, params=None):
        self.rid += 1
        msg = {"jsonrpc": "2.0", "id": self.rid, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        while True:
            line = self.r.readline()
            if not line:
                raise EOFError(f"peer closed the stream during {method}")
            m = json.loads(line)
            if m.get("id") == self.rid and ("result" in m or "error" in m):
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]

    def initialize(self):
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "callgrind-bench", "version": "0.1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close(self):
        if self.sock:
            self.sock.close()
        else:
            self.proc.stdin.close()


def unix(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    return s


def wait_ready(sock_path, deadline_s=300):
    """Waits until the socket lists the test server's echo tool. The first check comes after a
    fixed pause, so most sessions poll exactly once and the polls cost the same every session."""
    t0, polls = time.time(), 0
    while not os.path.exists(sock_path):
        if time.time() - t0 > deadline_s:
            sys.exit("socket never appeared")
        time.sleep(0.2)
    time.sleep(4)
    while True:
        polls += 1
        try:
            c = Conn(sock=unix(sock_path))
            c.initialize()
            names, cursor = [], None
            while True:
                page = c.request("tools/list", {"cursor": cursor} if cursor else None)
                names += [t["name"] for t in page["tools"]]
                cursor = page.get("nextCursor")
                if not cursor:
                    break
            c.close()
            if "mcp_demo_echo" in names:
                return polls
        except (OSError, EOFError, RuntimeError):
            pass
        if time.time() - t0 > deadline_s:
            sys.exit("test server not listed in time")
        time.sleep(2)


def cg(pid, cmd):
    """`callgrind_control --zero|--dump PID`; returns once callgrind has done it."""
    subprocess.run(["callgrind_control", cmd, str(pid)], check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def drive(c, pid, a, outbase):
    """Warm-up, then the measured phases; returns [(kind, n, dump file)]."""
    c.initialize()
    call = {"name": "mcp_demo_echo", "arguments": {"message": "hi"}}
    for _ in range(50):
        c.request("tools/call", call)
    c.request("tools/list")
    phases, dumps = [], 0
    for _ in range(a.reps):
        for kind, n in (("tools/call", a.calls), ("tools/list", a.lists)):
            if n == 0:
                continue
            cg(pid, "--zero")
            for _ in range(n):
                r = c.request(kind, call if kind == "tools/call" else None)
                if r.get("isError"):
                    sys.exit(f"call failed: {r}")
            cg(pid, "--dump")
            dumps += 1
            phases.append((kind, n, f"{outbase}.{dumps}"))
    c.close()
    return phases


def ir_of(path):
    with open(path) as f:
        for line in f:
            m = re.match(r"totals:\s+(\d+)", line)
            if m:
                return int(m.group(1))
    return None


def stop(p, grace=120):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
    try:
        p.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--demo")
    ap.add_argument("--fast", default="1")
    ap.add_argument("--calls", type=int, default=2000)
    ap.add_argument("--lists", type=int, default=200)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--measure", default="companion",
                    choices=["companion", "bridge", "companion-via-bridge"])
    ap.add_argument("--extra-tools", type=int, default=0,
                    help="the test server lists this many more tools (a bigger tools/list)")
    ap.add_argument("--activity", default="on", choices=["on", "off"],
                    help="off: the companion runs with the activity log off, to count its cost")
    ap.add_argument("--keep", help="keep the callgrind files in this directory")
    ap.add_argument("--url", help="serve this remote MCP server (on loopback) as `demo` instead of "
                    "the test server, e.g. server-everything's streamable HTTP endpoint")
    a = ap.parse_args()
    d = tempfile.mkdtemp(prefix="cg-")
    out = os.path.join(a.keep or d, "callgrind.out")
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    cfg = os.path.join(d, "config.json")
    sock = os.path.join(d, "mcp.sock")
    if a.url:
        config = {"ssrfWhitelist": ["127.0.0.1/32"], "mcpServers": {"demo": {"url": a.url}}}
    else:
        config = {"mcpServers": {"demo": {"command": a.demo or a.bin,
                                          "args": ["demo-server", "--test-tools"]
                                          + (["--extra-tools", str(a.extra_tools)]
                                             if a.extra_tools else [])}}}
    if a.activity == "off":
        config["activity"] = {"enabled": False}
    with open(cfg, "w") as f:
        json.dump(config, f)
    env = dict(os.environ, HOME=d, XDG_DATA_HOME=d + "/data", XDG_CONFIG_HOME=d + "/config",
               XDG_STATE_HOME=d + "/state", XDG_RUNTIME_DIR=d, MCP_COMPANION_FAST_PATH=a.fast)
    vg = ["valgrind", "--tool=callgrind", "--trace-children=no", f"--callgrind-out-file={out}"]
    serve = [a.bin, "--config", cfg, "--socket", sock, "serve", "--log-level", "warn"]
    under = a.measure in ("companion", "companion-via-bridge")
    log = open(os.path.join(d, "serve.log"), "w")
    comp = subprocess.Popen((vg if under else []) + serve, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=log)
    try:
        wait_ready(sock)
        if a.measure == "companion":
            phases = drive(Conn(sock=unix(sock)), comp.pid, a, out)
        else:
            bridge = [a.bin, "--socket", sock, "bridge"]
            b = subprocess.Popen((vg if a.measure == "bridge" else []) + bridge, env=env,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
            pid = b.pid if a.measure == "bridge" else comp.pid
            phases = drive(Conn(proc=b), pid, a, out)
            try:
                b.wait(timeout=120)
            except subprocess.TimeoutExpired:
                stop(b)
    finally:
        stop(comp)
    for kind, n, path in phases:
        ir = ir_of(path)
        print(json.dumps({"bin": a.bin, "fast": a.fast, "measure": a.measure, "kind": kind,
                          "extra_tools": a.extra_tools, "n": n, "ir": ir, "ir_per": round(ir / n) if ir else None}))
    if not a.keep:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
