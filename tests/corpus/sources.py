#!/usr/bin/env python3
"""sources.py DIR -- the copied manifests under DIR (tests/corpus) and SOURCES.md agree.

Every file DIR/<owner>__<repo>/<name> has exactly one row in the "Sources" table of SOURCES.md, the
row's blob column is the file's git blob id (sha1 of "blob <size>\\0" + content, what
`git hash-object` prints), its license is Apache-2.0, MIT or MIT-0 (or a "+" list of them, for the
rendered files), and every row names a file that exists. Every <owner>__<repo>/ directory has a
NOTICE, and the license texts the rows name are in DIR/LICENSES/. Prints one line per problem and
exits 1 when there is any.
"""
import hashlib
import os
import re
import sys

ALLOWED = {"Apache-2.0": "Apache-2.0.txt", "MIT": "MIT.txt", "MIT-0": "MIT-0.txt"}
MANIFEST = re.compile(r".*\.(ya?ml|json)$")


def git_blob(path):
    with open(path, "rb") as f:
        data = f.read()
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def rows(sources):
    """(local file, blob, license) of each row of the table under "## Sources"."""
    out, on = [], False
    with open(sources, encoding="utf-8") as f:
        for line in f:
            if line.startswith("## "):
                on = line.strip() == "## Sources"
                continue
            if on and re.match(r"\| \d+ \| `", line):
                cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
                if len(cells) != 9:
                    out.append((None, line.strip()[:80], None))
                    continue
                out.append((cells[1].strip("`"), cells[6].strip("`"), cells[7]))
    return out


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    problems = []
    files = set()
    for d in sorted(os.listdir(top)):
        full = os.path.join(top, d)
        if not os.path.isdir(full) or d == "LICENSES" or d.startswith("."):
            continue
        if not os.path.isfile(os.path.join(full, "NOTICE")):
            problems.append(f"{d}/: no NOTICE")
        for name in sorted(os.listdir(full)):
            if MANIFEST.match(name):
                files.add(f"{d}/{name}")
    listed = {}
    for local, blob, lic in rows(os.path.join(top, "SOURCES.md")):
        if local is None:
            problems.append(f"SOURCES.md: a row without 9 columns: {blob}")
            continue
        if local in listed:
            problems.append(f"SOURCES.md: {local} is listed twice")
        listed[local] = True
        path = os.path.join(top, local)
        if local not in files:
            problems.append(f"SOURCES.md: {local} is listed but not in the corpus")
            continue
        if not re.fullmatch(r"[0-9a-f]{40}", blob):
            problems.append(f"SOURCES.md: {local}: blob column {blob!r} is not a full git blob id")
        elif git_blob(path) != blob:
            problems.append(f"{local}: git blob {git_blob(path)} differs from SOURCES.md ({blob})")
        for one in (x.strip() for x in lic.split("+")):
            if one not in ALLOWED:
                problems.append(f"{local}: license {lic!r} is not Apache-2.0, MIT or MIT-0")
            elif not os.path.isfile(os.path.join(top, "LICENSES", ALLOWED[one])):
                problems.append(f"{local}: LICENSES/{ALLOWED[one]} is missing")
    for local in sorted(files - set(listed)):
        problems.append(f"{local}: no row in SOURCES.md (source, commit, blob, license)")
    if not files:
        problems.append(f"{top}: no manifests")
    for p in problems:
        print(f"corpus: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
