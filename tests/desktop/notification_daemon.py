#!/usr/bin/python3
"""A notification server for the desktop e2e test: owns org.freedesktop.Notifications on the
session bus (freedesktop Desktop Notifications spec 1.2) and records every call, one JSON
object per line, in LOG:

  {"call": "Notify", "id": 1, "app": ..., "summary": ..., "body": ..., "actions": [...], "expire": ms}
  {"call": "CloseNotification", "id": 1}
  {"signal": "ActionInvoked", "id": 1, "action": "default"}

A click is simulated by writing a notification id into LOG + ".click": the daemon emits
ActionInvoked(id, "default") then NotificationClosed(id, 2), as a real server does when the
person clicks the notification's body. LOG + ".ready" appears once the name is owned.

Runs under the system Python (/usr/bin/python3, python3-gi). Usage: notification_daemon.py LOG
"""
import json
import os
import sys

from gi.repository import Gio, GLib

XML = """
<node>
  <interface name="org.freedesktop.Notifications">
    <method name="GetCapabilities"><arg type="as" direction="out"/></method>
    <method name="Notify">
      <arg type="s" direction="in"/><arg type="u" direction="in"/><arg type="s" direction="in"/>
      <arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="as" direction="in"/>
      <arg type="a{sv}" direction="in"/><arg type="i" direction="in"/>
      <arg type="u" direction="out"/>
    </method>
    <method name="CloseNotification"><arg type="u" direction="in"/></method>
    <method name="GetServerInformation">
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
      <arg type="s" direction="out"/><arg type="s" direction="out"/>
    </method>
    <signal name="NotificationClosed"><arg type="u"/><arg type="u"/></signal>
    <signal name="ActionInvoked"><arg type="u"/><arg type="s"/></signal>
  </interface>
</node>
"""
PATH = "/org/freedesktop/Notifications"
IFACE = "org.freedesktop.Notifications"

log_path = sys.argv[1]
click_path = log_path + ".click"
state = {"next": 0, "open": set(), "conn": None}
loop = GLib.MainLoop()


def record(entry):
    with open(log_path, "a") as f:
        f.write(json.dumps(entry) + "\n")


def emit(name, args):
    state["conn"].emit_signal(None, PATH, IFACE, name, args)


def on_call(conn, sender, path, iface, method, params, invocation):
    args = params.unpack()
    if method == "GetCapabilities":
        invocation.return_value(GLib.Variant("(as)", (["actions", "body"],)))
    elif method == "GetServerInformation":
        invocation.return_value(GLib.Variant("(ssss)", ("e2e", "mcp-companion tests", "1", "1.2")))
    elif method == "Notify":
        app, replaces, _icon, summary, body, actions, _hints, expire = args
        nid = replaces or state["next"] + 1
        state["next"] = max(state["next"], nid)
        state["open"].add(nid)
        record({"call": "Notify", "id": nid, "app": app, "summary": summary, "body": body,
                "actions": actions, "expire": expire})
        invocation.return_value(GLib.Variant("(u)", (nid,)))
    elif method == "CloseNotification":
        (nid,) = args
        record({"call": "CloseNotification", "id": nid})
        if nid in state["open"]:
            state["open"].discard(nid)
            emit("NotificationClosed", GLib.Variant("(uu)", (nid, 3)))
        invocation.return_value(None)


def poll_clicks():
    if os.path.exists(click_path):
        with open(click_path) as f:
            text = f.read().strip()
        os.remove(click_path)
        if text.isdigit():
            nid = int(text)
            record({"signal": "ActionInvoked", "id": nid, "action": "default"})
            emit("ActionInvoked", GLib.Variant("(us)", (nid, "default")))
            state["open"].discard(nid)
            emit("NotificationClosed", GLib.Variant("(uu)", (nid, 2)))
    return True


def on_bus(conn, _name):
    state["conn"] = conn
    node = Gio.DBusNodeInfo.new_for_xml(XML)
    conn.register_object(PATH, node.interfaces[0], on_call, None, None)
    # The bus going away (dbus-run-session ending) ends the daemon.
    conn.connect("closed", lambda *_: loop.quit())


def on_name(_conn, _name):
    open(log_path + ".ready", "w").close()


Gio.bus_own_name(Gio.BusType.SESSION, IFACE, Gio.BusNameOwnerFlags.NONE, on_bus, on_name,
                 lambda *_: loop.quit())
GLib.timeout_add(100, poll_clicks)
loop.run()
