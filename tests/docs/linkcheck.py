#!/usr/bin/env python3
"""Checks the internal links of the built user guide and of the README.

Usage: linkcheck.py BOOK_DIR [README.md]

BOOK_DIR is what `mdbook build docs` wrote (docs/book). Every `href` and `src` in every built
page that is not an outside URL (scheme, `//`, `mailto:`) must name a file that exists in the
book, and its `#fragment` an `id` (or `name`) in that file. mdBook turns `page.md` links into
`page.html`, so a link to a missing page or a renamed heading shows up here.

README.md (optional) is checked the same way in its own terms: each relative link must name a
file in the repository; a link into `docs/src/PAGE.md#anchor` must find that anchor in the built
`PAGE.html`, and a bare `#anchor` a heading of the README (GitHub's slug rule).

Exit status 1 lists every broken link as `file: link (why)`; outside sites are never fetched.
"""
import html.parser
import os
import re
import sys
import urllib.parse

OUTSIDE = re.compile(r"^([a-zA-Z][a-zA-Z0-9+.-]*:|//)")


class Page(html.parser.HTMLParser):
    """Collects the ids and the links of one HTML page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids = set()
        self.links = []

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if value is None:
                continue
            if name in ("id",) or (tag == "a" and name == "name"):
                self.ids.add(value)
            if name in ("href", "src") and tag in ("a", "img", "link", "script"):
                self.links.append(value)


def parse(path, cache):
    if path not in cache:
        page = Page()
        with open(path, encoding="utf-8") as f:
            page.feed(f.read())
        cache[path] = page
    return cache[path]


def check_book(book, cache):
    broken = []
    for root, _, files in os.walk(book):
        for name in files:
            if not name.endswith(".html"):
                continue
            here = os.path.join(root, name)
            for link in sorted(set(parse(here, cache).links)):
                if OUTSIDE.match(link):
                    continue
                target, _, fragment = link.partition("#")
                target = urllib.parse.unquote(target)
                path = os.path.normpath(os.path.join(root, target)) if target else here
                why = missing(path, urllib.parse.unquote(fragment), cache)
                if why:
                    broken.append(f"{os.path.relpath(here, book)}: {link} ({why})")
    return broken


def missing(path, fragment, cache):
    """Why `path#fragment` does not resolve, or None when it does."""
    if os.path.isdir(path):
        path = os.path.join(path, "index.html")
    if not os.path.isfile(path):
        return "no such file"
    if fragment and path.endswith(".html") and fragment not in parse(path, cache).ids:
        return f'no id "{fragment}" in {os.path.basename(path)}'
    return None


def github_slug(heading):
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces to '-'."""
    text = re.sub(r"`|\*|_(?=\W)|(?<=\W)_", "", heading.strip().lower())
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def check_readme(readme, book, cache):
    broken = []
    repo = os.path.dirname(os.path.abspath(readme))
    label = os.path.basename(readme)
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    slugs = {github_slug(h) for h in re.findall(r"^#{1,6} (.*)$", prose, flags=re.M)}
    for link in re.findall(r"\]\(([^)\s]+)\)", prose):
        if OUTSIDE.match(link):
            continue
        target, _, fragment = link.partition("#")
        why = None
        if not target:
            if fragment not in slugs:
                why = f'no heading "#{fragment}" in {label}'
        elif not os.path.exists(os.path.join(repo, target)):
            why = "no such file"
        elif fragment:
            rel = os.path.relpath(os.path.join(repo, target), os.path.join(repo, "docs", "src"))
            if rel.startswith("..") or not rel.endswith(".md"):
                why = "an anchor into a file outside docs/src cannot be checked"
            else:
                why = missing(os.path.join(book, rel[:-3] + ".html"), fragment, cache)
        if why:
            broken.append(f"{label}: {link} ({why})")
    return broken


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    book = sys.argv[1]
    if not os.path.isfile(os.path.join(book, "index.html")):
        sys.exit(f"linkcheck: {book} holds no built book (run `mdbook build docs` first)")
    cache = {}
    broken = check_book(book, cache)
    if len(sys.argv) == 3:
        broken += check_readme(sys.argv[2], book, cache)
    for line in broken:
        print(f"broken link: {line}")
    pages = sum(1 for p in cache if p.endswith(".html"))
    print(f"linkcheck: {pages} pages read, {len(broken)} broken links")
    sys.exit(1 if broken else 0)


if __name__ == "__main__":
    main()
