#!/usr/bin/env python3
"""Generates the app and tray icons (8-bit RGBA PNGs and icon.ico) with the standard library only.

Run from anywhere: `python3 icons/generate.py`. The output is committed; rerun after editing.
App icon: a rounded blue square with a white hub (one dot, three spokes). Tray variants share the
hub shape on a coloured disc: green (all running), amber (some failing), grey (none running).
"""
import math
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def png(width, height, pixels):
    """pixels: list of rows, each a list of (r, g, b, a)."""
    raw = b"".join(b"\x00" + bytes(c for px in row for c in px) for row in pixels)

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)

    ihdr = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def coverage(inside, x, y, samples=4):
    """Anti-aliased coverage of pixel (x, y) by the shape `inside(fx, fy)` in unit coordinates."""
    hits = 0
    for i in range(samples):
        for j in range(samples):
            hits += inside(x + (i + 0.5) / samples, y + (j + 0.5) / samples)
    return hits / (samples * samples)


def hub_shape(cx, cy, r):
    """A dot with three spokes ending in smaller dots, inside a circle of radius r."""
    ends = [(cx + 0.62 * r * math.cos(a), cy + 0.62 * r * math.sin(a)) for a in (-math.pi / 2, math.pi / 6, 5 * math.pi / 6)]

    def seg_dist(px, py, ax, ay, bx, by):
        vx, vy, wx, wy = bx - ax, by - ay, px - ax, py - ay
        t = max(0.0, min(1.0, (wx * vx + wy * vy) / (vx * vx + vy * vy)))
        return math.hypot(px - (ax + t * vx), py - (ay + t * vy))

    def inside(px, py):
        if math.hypot(px - cx, py - cy) < 0.24 * r:
            return True
        for ex, ey in ends:
            if math.hypot(px - ex, py - ey) < 0.17 * r or seg_dist(px, py, cx, cy, ex, ey) < 0.07 * r:
                return True
        return False

    return inside


def render(size, bg, rounded):
    s = float(size)
    c = s / 2

    def in_bg(px, py):
        if rounded:
            rad = 0.22 * s
            qx = max(abs(px - c) - (c - rad), 0)
            qy = max(abs(py - c) - (c - rad), 0)
            return math.hypot(qx, qy) <= rad
        return math.hypot(px - c, py - c) <= c - 0.5

    fg = hub_shape(c, c, c * (0.9 if rounded else 0.95))
    rows = []
    for y in range(size):
        row = []
        for x in range(size):
            a_bg = coverage(in_bg, x, y)
            a_fg = coverage(fg, x, y)
            r = round(bg[0] * (1 - a_fg) + 255 * a_fg)
            g = round(bg[1] * (1 - a_fg) + 255 * a_fg)
            b = round(bg[2] * (1 - a_fg) + 255 * a_fg)
            row.append((r, g, b, round(255 * a_bg)))
        rows.append(row)
    return png(size, size, rows)


def ico(pngs):
    """An .ico embedding PNG images (Vista+ format), pngs: list of (size, bytes)."""
    header = struct.pack("<HHH", 0, 1, len(pngs))
    offset = 6 + 16 * len(pngs)
    entries, blobs = b"", b""
    for size, data in pngs:
        dim = 0 if size >= 256 else size
        entries += struct.pack("<BBBBHHII", dim, dim, 0, 0, 1, 32, len(data), offset + len(blobs))
        blobs += data
    return header + entries + blobs


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    blue = (37, 99, 235)
    app = {size: render(size, blue, True) for size in (32, 128, 256)}
    write("32x32.png", app[32])
    write("128x128.png", app[128])
    write("icon.png", app[256])
    write("icon.ico", ico([(32, app[32]), (256, app[256])]))
    for name, colour in (("ok", (22, 163, 74)), ("degraded", (217, 119, 6)), ("off", (107, 114, 128))):
        write(f"tray-{name}.png", render(64, colour, False))


if __name__ == "__main__":
    main()
