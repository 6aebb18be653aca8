#!/usr/bin/env python3
"""Soak test: many agents call continuously while servers crash, restart and reload.

Usage: soak.py --binary PATH [--duration SECONDS] [--servers N] [--agents N]

Starts `mcp-companion serve` on a private config and socket with N demo servers
(`demo-server --test-tools`), connects N raw agents (newline-delimited JSON-RPC on the Unix
socket, no SDK, several calls in flight each), and runs chaos for the duration: a server crashes
mid-call (`crash` tool), is killed with SIGKILL, is restarted / stopped and started through the
CLI, or has its entry changed and the config reloaded. Failed servers are started again, as a
person would.

Claims checked (exit 1 and a FAIL line for each that does not hold):
- every request gets exactly one response (no loss, no duplicate, no unknown id);
- an `echo` that succeeds returns exactly the message sent (no cross-talk between calls);
- after the chaos stops and every server is running again: the companion holds as many file
  descriptors and has as many descendant processes as at the baseline (taken before the chaos),
  and its RSS grew < 10 % over the RSS baseline (taken after the first fifth of the chaos, at
  most 30 s, so the one-time growth of the restart paths' first use is not counted as a leak);
- the activity log (on, as by default) holds every call exactly once (or counts it as dropped),
  passes SQLite's integrity check and stays within its 100 MB cap (`check_activity`).

Prints the figures (requests, outcomes, chaos actions, fds, processes, RSS) as one table.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter


def log(msg: str) -> None:
    print(f"[soak {time.strftime('%H:%M:%S')}] {msg}", flush=True)


class Companion:
    """One `serve` process on a private config and socket, plus CLI helpers."""

    def __init__(self, binary: str, tmp: str, servers: int):
        self.binary = binary
        self.tmp = tmp
        self.config = os.path.join(tmp, "config.json")
        self.socket = os.path.join(tmp, "run", "mcp.sock")
        self.names = [f"s{i}" for i in range(servers)]
        self.generation = {n: 0 for n in self.names}
        self.lock = threading.Lock()
        self.write_config()
        # The data dir (activity log, pins) is the soak's own, whatever the runner's XDG_*.
        env = dict(os.environ, HOME=tmp, MCP_COMPANION_GUI_PATH="0",
                   XDG_DATA_HOME=os.path.join(tmp, "data"),
                   XDG_STATE_HOME=os.path.join(tmp, "state"))
        self.activity_db = os.path.join(tmp, "data", "mcp-companion", "activity.db")
        self.log_file = open(os.path.join(tmp, "serve.log"), "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--config", self.config, "--socket", self.socket],
            stdin=subprocess.DEVNULL, stdout=self.log_file, stderr=self.log_file, env=env)

    def write_config(self) -> None:
        servers = {
            n: {"command": self.binary, "args": ["demo-server", "--test-tools"],
                "env": {"SOAK_GENERATION": str(self.generation[n])}, "toolTimeout": 20}
            for n in self.names
        }
        tmp = self.config + ".tmp"
        with open(tmp, "w") as f:
            json.dump({"mcpServers": servers}, f, indent=2)
        os.replace(tmp, self.config)

    def cli(self, *args: str, timeout: float = 30) -> subprocess.CompletedProcess:
        return subprocess.run([self.binary, "--config", self.config, "--socket", self.socket, *args],
                              capture_output=True, text=True, timeout=timeout)

    def status(self) -> list[dict]:
        out = self.cli("status", "--json")
        if out.returncode != 0:
            return []
        data = json.loads(out.stdout)
        return data["servers"] if isinstance(data, dict) else data

    def wait_all_running(self, limit: float) -> bool:
        deadline = time.time() + limit
        while time.time() < deadline:
            states = {s["name"]: s["state"] for s in self.status()}
            if len(states) == len(self.names) and all(v == "running" for v in states.values()):
                return True
            for name, state in states.items():
                if state in ("failed", "stopped"):
                    self.cli("start", name)
            time.sleep(0.5)
        return False

    def descendants(self) -> list[int]:
        children: dict[int, list[int]] = {}
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[1].split()
                if fields[0] == "Z":
                    continue
                children.setdefault(int(fields[1]), []).append(int(entry))
            except (OSError, IndexError):
                continue
        found, todo = [], [self.proc.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def leftovers(self) -> list[int]:
        """Live processes (serve, servers, reaper) whose environment carries our private HOME."""
        marker = f"HOME={self.tmp}".encode()
        found = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if marker in f.read().split(b"\0"):
                        with open(f"/proc/{entry}/stat") as st:
                            if st.read().rsplit(")", 1)[1].split()[0] != "Z":
                                found.append(int(entry))
            except OSError:
                continue
        return found

    def fds(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def rss_kib(self) -> int:
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0


class Agent(threading.Thread):
    """One agent connection: keeps `depth` calls in flight and checks every response."""

    def __init__(self, index: int, path: str, names: list[str], depth: int, stop: threading.Event):
        super().__init__(daemon=True)
        self.index, self.names, self.depth, self.stop = index, names, depth, stop
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(path)
        self.reader = self.sock.makefile("rb")
        self.pending: dict[int, tuple[str, str]] = {}
        self.cond = threading.Condition()
        self.next_id = 0
        self.sent = 0
        self.outcomes: Counter = Counter()
        self.faults: list[str] = []
        self.send({"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": f"soak-{index}", "version": "1"}}})
        while True:
            msg = json.loads(self.reader.readline())
            if msg.get("id") == "init":
                break
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        self.listener = threading.Thread(target=self.read_loop, daemon=True)
        self.listener.start()

    def send(self, msg: dict) -> None:
        self.sock.sendall(json.dumps(msg).encode() + b"\n")

    def read_loop(self) -> None:
        for line in self.reader:
            msg = json.loads(line)
            if "id" not in msg or "method" in msg:
                continue  # notifications (list_changed, progress) and server requests
            with self.cond:
                expected = self.pending.pop(msg["id"], None)
                self.cond.notify_all()
            if expected is None:
                self.faults.append(f"agent {self.index}: response for unknown or answered id {msg['id']}")
                continue
            self.record(expected, msg)

    def record(self, expected: tuple[str, str], msg: dict) -> None:
        tool, message = expected
        if "error" in msg:
            self.outcomes[f"json-rpc error {msg['error'].get('code')}"] += 1
            return
        result = msg.get("result", {})
        if result.get("isError"):
            text = (result.get("content") or [{}])[0].get("text", "")
            self.outcomes["isError: " + re.sub(r"\d+(\.\d+)?", "N", text)[:70]] += 1
            return
        self.outcomes["ok"] += 1
        if tool == "echo":
            text = result.get("content", [{}])[0].get("text")
            if text != message:
                self.faults.append(f"agent {self.index}: echo {message!r} answered {text!r}")

    def run(self) -> None:
        while not self.stop.is_set():
            with self.cond:
                while len(self.pending) >= self.depth and not self.stop.is_set():
                    self.cond.wait(0.5)
                if self.stop.is_set():
                    break
                self.next_id += 1
                rid = self.next_id
                server = random.choice(self.names)
                if random.random() < 0.9:
                    tool, message = "echo", f"a{self.index}-{rid}"
                    args = {"message": message}
                else:
                    tool, message, args = "sleep", "", {"seconds": 0.2}
                self.pending[rid] = (tool, message)
            self.send({"jsonrpc": "2.0", "id": rid, "method": "tools/call",
                       "params": {"name": f"mcp_{server}_{tool}", "arguments": args}})
            self.sent += 1

    def drain(self, limit: float) -> int:
        deadline = time.time() + limit
        with self.cond:
            while self.pending and time.time() < deadline:
                self.cond.wait(0.5)
            return len(self.pending)


def chaos(c: Companion, stop: threading.Event, actions: Counter) -> None:
    while not stop.wait(random.uniform(1.0, 3.0)):
        name = random.choice(c.names)
        action = random.choice(["crash", "kill", "restart", "stop-start", "reload"])
        try:
            if action == "crash":
                # A call too (`mcp-companion call`): the activity log records it.
                actions["crash calls sent"] += 1
                c.cli("call", f"mcp_{name}_crash", '{"exit_code": 3}', timeout=30)
            elif action == "kill":
                pid = next((s.get("pid") for s in c.status() if s["name"] == name), None)
                if not pid:
                    continue
                os.kill(pid, signal.SIGKILL)
            elif action == "restart":
                c.cli("restart", name)
            elif action == "stop-start":
                c.cli("stop", name)
                time.sleep(0.5)
                c.cli("start", name)
            else:
                with c.lock:
                    c.generation[name] += 1
                    c.write_config()
                c.cli("reload")
            actions[action] += 1
            for s in c.status():
                if s["state"] == "failed":
                    c.cli("start", s["name"])
                    actions["start after failed"] += 1
        except (OSError, subprocess.TimeoutExpired) as e:
            actions[f"{action} error: {e}"] += 1


def check_activity(db: str, sent: int) -> list[str]:
    """The activity log after serve stopped (its writer flushes on stop): every call (the
    agents' and the chaos's `call crash`) recorded exactly once (at most `sent` call rows; with
    the entries it counted as dropped, at least `sent`), the database sound and within its
    default 100 MB cap."""
    import sqlite3
    if not os.path.exists(db):
        return [f"no activity log at {db}"]
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
        calls = con.execute("SELECT count(*) FROM entries WHERE kind = 'call'").fetchone()[0]
        dropped = con.execute(
            "SELECT coalesce(sum(count), 0) FROM entries WHERE kind = 'dropped'").fetchone()[0]
    finally:
        con.close()
    size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
    print(f"  {'activity log: calls / dropped / bytes':<38} {calls} / {dropped} / {size}", flush=True)
    out = []
    if integrity != "ok":
        out.append(f"activity log integrity check: {integrity}")
    if calls > sent:
        out.append(f"activity log holds {calls} calls for {sent} sent (a call recorded twice)")
    if calls + dropped < sent:
        out.append(f"activity log holds {calls} calls + {dropped} dropped for {sent} sent")
    if size > 100 * 1024 * 1024:
        out.append(f"activity log is {size} bytes, over its 100 MB cap")
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", required=True)
    ap.add_argument("--duration", type=float, default=300)
    ap.add_argument("--servers", type=int, default=10)
    ap.add_argument("--agents", type=int, default=8)
    ap.add_argument("--depth", type=int, default=4, help="calls in flight per agent")
    ap.add_argument("--seed", type=int, default=None)
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 30)
    random.seed(seed)
    log(f"seed {seed}: {args.servers} servers, {args.agents} agents x {args.depth} in flight, "
        f"{args.duration:.0f} s of chaos")
    failures: list[str] = []
    calls_sent: int | None = None
    with tempfile.TemporaryDirectory(prefix="mcp-soak-") as tmp:
        c = Companion(args.binary, tmp, args.servers)
        try:
            if not c.wait_all_running(60):
                print(open(os.path.join(tmp, "serve.log")).read()[-4000:])
                log("FAIL servers did not all start")
                return 1
            stop_agents = threading.Event()
            agents = [Agent(i, c.socket, c.names, args.depth, stop_agents) for i in range(args.agents)]
            for a in agents:
                a.start()
            time.sleep(min(20.0, args.duration / 5))  # warm up: allocator and buffers settle
            base_fds, base_procs = c.fds(), len(c.descendants())
            log(f"baseline: {base_fds} fds, {base_procs} descendant processes")

            stop_chaos, actions = threading.Event(), Counter()
            chaos_thread = threading.Thread(target=chaos, args=(c, stop_chaos, actions), daemon=True)
            chaos_thread.start()
            # The RSS baseline is taken once the chaos paths (respawns, reconnects, reloads) have
            # run for a while too: their first use grows the allocator's pools once, which is
            # not a leak; a leak keeps growing over the rest of the run.
            warm_chaos = min(30.0, args.duration / 5)
            time.sleep(warm_chaos)
            base_rss = c.rss_kib()
            log(f"RSS baseline after {warm_chaos:.0f} s of chaos: {base_rss} KiB")
            time.sleep(args.duration - warm_chaos)
            stop_chaos.set()
            chaos_thread.join()
            log(f"chaos over: {dict(actions)}; waiting for every server to run again")
            if not c.wait_all_running(90):
                failures.append("servers did not all return to running after the chaos")
            time.sleep(5)  # calls keep flowing on the recovered servers
            stop_agents.set()
            for a in agents:
                a.join()
            unanswered = sum(a.drain(60) for a in agents)
            time.sleep(1)
            end_fds, end_procs, end_rss = c.fds(), len(c.descendants()), c.rss_kib()

            outcomes, sent = Counter(), 0
            for a in agents:
                outcomes.update(a.outcomes)
                sent += a.sent
                failures.extend(a.faults[:10])
            calls_sent = sent + actions["crash calls sent"]
            answered = sum(outcomes.values())
            growth = (end_rss - base_rss) * 100.0 / base_rss if base_rss else 0.0
            rows = [
                ("requests sent", sent), ("responses", answered), ("unanswered", unanswered),
                ("outcomes", dict(outcomes)), ("chaos actions", dict(actions)),
                ("fds baseline / end", f"{base_fds} / {end_fds}"),
                ("descendant processes baseline / end", f"{base_procs} / {end_procs}"),
                ("RSS baseline / end", f"{base_rss} / {end_rss} KiB ({growth:+.1f} %)"),
            ]
            for key, value in rows:
                if isinstance(value, dict):
                    print(f"  {key}:", flush=True)
                    for k, v in sorted(value.items(), key=lambda kv: -kv[1]):
                        print(f"      {v:>8}  {k}", flush=True)
                else:
                    print(f"  {key:<38} {value}", flush=True)
            if unanswered:
                failures.append(f"{unanswered} request(s) got no response")
            if answered != sent - unanswered:
                failures.append(f"{sent} sent, {answered} answered, {unanswered} pending")
            if end_fds > base_fds:
                failures.append(f"file descriptors grew {base_fds} -> {end_fds}")
            if end_procs != base_procs:
                failures.append(f"descendant processes {base_procs} -> {end_procs}")
            if growth >= 10.0:
                failures.append(f"RSS grew {growth:.1f} % (limit 10 %)")
            if outcomes["ok"] == 0:
                failures.append("no call succeeded")
        finally:
            c.proc.send_signal(signal.SIGTERM)
            try:
                c.proc.wait(15)
            except subprocess.TimeoutExpired:
                c.proc.kill()
                failures.append("serve did not exit within 15 s of SIGTERM")
            if calls_sent is not None:
                failures.extend(check_activity(c.activity_db, calls_sent))
            left = c.leftovers()
            if left:
                failures.append(f"processes left after serve exited: {left}")
    for f in failures:
        log(f"FAIL {f}")
    log("PASS" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
