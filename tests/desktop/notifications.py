"""Desktop notifications in the e2e test: runs tests/desktop/notification_daemon.py,
a stand-in notification server on the test's D-Bus session, and reads what the app asked of it.
Also hides and finds the app's window through X (xdotool), to check that a click on the
notification brings the window back."""
import json
import os
import subprocess
import time

HERE = os.path.dirname(os.path.abspath(__file__))
# The daemon needs PyGObject, which the system Python has (python3-gi), not a pyenv one.
SYSTEM_PYTHON = "/usr/bin/python3"
WINDOW_TITLE = "^MCP Companion$"


class Daemon:
    """The stand-in notification server and its record (see notification_daemon.py)."""

    def __init__(self, work):
        self.log_path = os.path.join(work, "notifications.jsonl")
        self.proc = subprocess.Popen([SYSTEM_PYTHON, os.path.join(HERE, "notification_daemon.py"),
                                      self.log_path])
        deadline = time.time() + 20
        while not os.path.exists(self.log_path + ".ready"):
            if self.proc.poll() is not None or time.time() > deadline:
                raise RuntimeError(f"the stand-in notification server did not start (rc {self.proc.poll()})")
            time.sleep(0.1)

    def entries(self):
        """Every recorded call and signal, oldest first."""
        try:
            with open(self.log_path) as f:
                return [json.loads(line) for line in f if line.strip()]
        except FileNotFoundError:
            return []

    def wait(self, pred, timeout):
        """The first entry matching `pred` within `timeout` seconds, else None."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for entry in self.entries():
                if pred(entry):
                    return entry
            time.sleep(0.2)
        return None

    def notified(self, summary, after=0, timeout=20):
        """The first `Notify` with `summary` and an id above `after`."""
        return self.wait(lambda e: e.get("call") == "Notify" and e["summary"] == summary
                         and e["id"] > after, timeout)

    def closed(self, nid, timeout=20):
        """Whether the app withdrew notification `nid` (`CloseNotification`)."""
        return self.wait(lambda e: e.get("call") == "CloseNotification" and e["id"] == nid, timeout) is not None

    def click(self, nid):
        """The person clicks notification `nid`: ActionInvoked(nid, "default")."""
        with open(self.log_path + ".click", "w") as f:
            f.write(str(nid))

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def visible_windows():
    """X ids of the app's mapped top-level windows."""
    r = subprocess.run(["xdotool", "search", "--onlyvisible", "--name", WINDOW_TITLE],
                       capture_output=True, text=True, timeout=10)
    return r.stdout.split()


def hide_windows(ids):
    """Unmaps `ids`, as a window manager does when the person minimises the window."""
    for wid in ids:
        subprocess.run(["xdotool", "windowunmap", "--sync", wid], check=False, timeout=10)
