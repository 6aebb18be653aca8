#!/usr/bin/env python3
"""Runs the INSTALLED desktop app (/usr/bin/mcp-companion-desktop from the .deb), run by
tests/package/deb.sh inside Xvfb + a tray host + a D-Bus session, with a private HOME.

Checks: the app serves the default socket; the official Python SDK calls a tool through the
installed `/usr/bin/mcp-companion bridge` (no --socket: the default path rules alone); the
Connect page shows the installed CLI path; SIGTERM (what Quit does) stops every server.
Reuses the WebDriver client of tests/desktop/drive.py. Exit 0 when every check passed.
"""
import json
import os
import signal
import socket
import subprocess
import sys
import time

APP = "/usr/bin/mcp-companion-desktop"
CLI = "/usr/bin/mcp-companion"
# drive.py reads its settings at import; only its helpers are used here.
os.environ.update(APP=APP, CLI=CLI, MCP_COMPANION_SOCKET="unused-by-this-test")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "desktop"))
import drive  # noqa: E402
del os.environ["MCP_COMPANION_SOCKET"]

AGENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers", "agent.py")


def agent_call(name, args):
    """The SDK agent with a minimal environment, through the installed bridge."""
    r = subprocess.run([os.environ["PEERS_PYTHON"], AGENT, "--call", name, json.dumps(args), "--", CLI, "bridge"],
                       capture_output=True, text=True, timeout=90,
                       env={"PATH": os.environ["PATH"], "HOME": os.environ["HOME"]})
    try:
        out = json.loads(r.stdout)
    except json.JSONDecodeError:
        return f"agent printed no JSON (rc {r.returncode}): {r.stderr[-500:]}"
    calls = out.get("calls") or [{}]
    return calls[0].get("result", {}).get("content", [{}])[0].get("text", out.get("error"))


def main():
    port = drive.free_port()
    log = open(os.path.join(drive.OUT, "webkitwebdriver.log"), "w")
    wd_proc = subprocess.Popen(["WebKitWebDriver", f"--port={port}"], stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
    wd = drive.WebDriver(port)
    app_pid = None
    try:
        drive.wait_for(lambda: socket.create_connection(("127.0.0.1", port), timeout=1), 20, "WebKitWebDriver")
        wd.start(APP)
        servers, report = drive.wait_for(
            lambda: (lambda st: st if st[0].get("demo", {}).get("state") == "running" else None)(drive.status()),
            60, "the demo server running in the installed app")
        app_pid = report["pid"]
        drive.check(True, f"installed app (pid {app_pid}) serves {report['socket']}")
        text = agent_call("mcp_demo_echo", {"message": "hello from the installed bridge"})
        drive.check(text == "hello from the installed bridge",
                    f"SDK agent through {CLI} bridge called mcp_demo_echo -> {text!r}")
        wd.go("#/connect")
        cmd = drive.wait_for(lambda: wd.text("#bridge-command"), 20, "bridge command")
        drive.check(cmd == f"{CLI} bridge", f"Connect page shows the installed CLI: {cmd!r}")
        snippet = wd.js("return document.body.innerText;") or ""
        drive.check(f'"command": "{CLI}"' in snippet, "the Connect snippets name the installed CLI")
        wd.screenshot("connect-installed.png")
        before = drive.descendants(app_pid)
        os.kill(app_pid, signal.SIGTERM)  # exits like Quit (src-tauri/src/lib.rs exit_on_signal)
        drive.wait_for(lambda: not drive.alive(app_pid), 30, "app exit after SIGTERM")
        time.sleep(1.0)
        left = {p: c for p, c in before.items() if drive.alive(p)}
        drive.check(not left, f"no process left after quitting (before: {len(before)}, left: {left})")
        app_pid = None
    except Exception as e:  # noqa: BLE001 - reported as a failure
        drive.failures.append(f"exception: {e}")
        drive.log(f"FAIL exception: {e}")
    finally:
        wd.close()
        if app_pid and drive.alive(app_pid):
            os.kill(app_pid, signal.SIGKILL)
        try:
            os.killpg(wd_proc.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        wd_proc.wait(timeout=10)
    drive.log(f"{len(drive.failures)} failure(s)" + "".join(f"\n  - {f}" for f in drive.failures))
    return 1 if drive.failures else 0


if __name__ == "__main__":
    sys.exit(main())
