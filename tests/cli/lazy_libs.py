#!/usr/bin/env python3
"""libcrypto, libssl and libmariadb are loaded when first needed (lib/src/base/lazy_library.h).

usage: lazy_libs.py BINLOGCTL

- dump, verify and convert of a clear file load none of the three (the dynamic loader's own
  account, LD_DEBUG=files, lists every object it maps);
- dump of an encrypted MariaDB file with --key-file loads libcrypto, and only it, and reads it;
- when libcrypto cannot be loaded (a damaged copy first on LD_LIBRARY_PATH), that dump ends with
  status 127 and a message naming the library and what needed it, while dump of a clear file
  still works.
"""
import os
import subprocess
import sys
import tempfile

BIN = os.path.abspath(sys.argv[1])
HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "..", "testdata", "mariadb-10.11")
CLEAR = os.path.join(DATA, "basic", "binlogs", "mariadb-bin.000001")
ENC = os.path.join(DATA, "encrypted", "binlogs", "mariadb-bin.000001")
KEYS = os.path.join(DATA, "encrypted", "keys.txt")
LIBS = ("libcrypto.so", "libssl.so", "libmariadb.so")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL:", what)


def loaded(args, env=None):
    """(exit status, stderr without the loader's lines, the libraries of LIBS the loader mapped)."""
    e = dict(os.environ, LD_DEBUG="files")
    e.update(env or {})
    r = subprocess.run([BIN] + args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=e)
    err = r.stderr.decode(errors="replace").splitlines()
    mapped = set()
    for line in err:
        if "file=" in line and "generating link map" in line:
            name = line.split("file=", 1)[1].split()[0].rsplit("/", 1)[-1]
            for lib in LIBS:
                if name.startswith(lib):
                    mapped.add(lib)
    rest = "\n".join(l for l in err if not l.lstrip().split(":", 1)[0].strip().isdigit())
    return r.returncode, rest, mapped


for args in (["dump", CLEAR], ["dump", "--format", "json", CLEAR], ["verify", CLEAR],
             ["convert", "--format", "json", CLEAR]):
    rc, err, mapped = loaded(args)
    check(rc == 0, f"{args[0]} {args[1]}: exit {rc}: {err}")
    check(not mapped, f"{' '.join(args[:3])}: loaded {sorted(mapped)} for a clear file")

rc, err, mapped = loaded(["dump", "--key-file", KEYS, ENC])
check(rc == 0, f"dump --key-file: exit {rc}: {err}")
check(mapped == {"libcrypto.so"}, f"dump --key-file: loaded {sorted(mapped)}, expected libcrypto only")

with tempfile.TemporaryDirectory() as tmp:
    open(os.path.join(tmp, "libcrypto.so.3"), "wb").write(b"not a library\n")
    env = {"LD_LIBRARY_PATH": tmp}
    rc, err, _ = loaded(["dump", "--key-file", KEYS, ENC], env)
    check(rc == 127, f"dump --key-file without a loadable libcrypto: exit {rc}, expected 127")
    check("libcrypto.so.3 is needed for encrypted binlogs" in err and "cannot be loaded" in err,
          f"dump --key-file without a loadable libcrypto: message {err!r}")
    rc, err, _ = loaded(["dump", CLEAR], env)
    check(rc == 0, f"dump of a clear file without a loadable libcrypto: exit {rc}: {err}")

if failures:
    print(f"{len(failures)} failure(s)")
    sys.exit(1)
print("ok")
