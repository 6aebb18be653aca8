#!/usr/bin/env python3
"""Print the target of a Windows shortcut (.lnk) and its arguments, one per line.

Usage: lnk_target.py FILE.lnk
Output: line 1 the target's path as the shortcut stores it (LinkInfo's local base path, e.g.
C:\\users\\me\\AppData\\Local\\Programs\\MCP Companion\\mcp-companion-desktop.exe), line 2 its
command-line arguments ("" when none). Exits 2 on a file that is not a shell link or that holds
no local path. The format is [MS-SHLLINK] (Shell Link Binary File Format), sections 2.1-2.4.
"""
import struct
import sys

HAS_ID_LIST, HAS_LINK_INFO, HAS_NAME, HAS_RELATIVE_PATH = 0x1, 0x2, 0x4, 0x8
HAS_WORKING_DIR, HAS_ARGUMENTS, IS_UNICODE = 0x10, 0x20, 0x80
VOLUME_ID_AND_LOCAL_BASE_PATH = 0x1


def c_string(data: bytes, at: int, wide: bool) -> str:
    if wide:
        end = at
        while data[end : end + 2] != b"\0\0":
            end += 2
        return data[at:end].decode("utf-16-le")
    return data[at : data.index(b"\0", at)].decode("latin-1")


def parse(data: bytes) -> tuple[str, str]:
    if len(data) < 76 or struct.unpack_from("<I", data, 0)[0] != 0x4C:
        raise ValueError("not a shell link (no 76-byte header)")
    flags = struct.unpack_from("<I", data, 20)[0]
    at = 76
    if flags & HAS_ID_LIST:
        at += 2 + struct.unpack_from("<H", data, at)[0]
    target = None
    if flags & HAS_LINK_INFO:
        size, header, info_flags, _vol, base, _net, suffix = struct.unpack_from("<7I", data, at)
        if info_flags & VOLUME_ID_AND_LOCAL_BASE_PATH:
            if header >= 0x24:
                base_w = struct.unpack_from("<I", data, at + 28)[0]
                target = c_string(data, at + base_w, True)
            else:
                target = c_string(data, at + base, False) + c_string(data, at + suffix, False)
        at += size
    wide = bool(flags & IS_UNICODE)
    strings = {}
    for flag in (HAS_NAME, HAS_RELATIVE_PATH, HAS_WORKING_DIR, HAS_ARGUMENTS):
        if flags & flag:
            count = struct.unpack_from("<H", data, at)[0]
            at += 2
            width = 2 if wide else 1
            raw = data[at : at + count * width]
            strings[flag] = raw.decode("utf-16-le") if wide else raw.decode("latin-1")
            at += count * width
    if target is None:
        raise ValueError("the shortcut holds no local target path")
    return target, strings.get(HAS_ARGUMENTS, "")


def main() -> int:
    try:
        with open(sys.argv[1], "rb") as f:
            target, arguments = parse(f.read())
    except (OSError, ValueError, struct.error, IndexError) as e:
        print(f"{sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    print(target)
    print(arguments)
    return 0


if __name__ == "__main__":
    sys.exit(main())
