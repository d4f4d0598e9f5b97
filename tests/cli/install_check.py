#!/usr/bin/env python3
"""`cmake --install` puts the binary and the rendered man pages in place (README's install step).

usage: install_check.py CMAKE BUILD_DIR MAN_SOURCE_DIR HAVE_SCDOC
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    cmake, build, man_src, have_scdoc = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] not in ("", "0", "OFF", "FALSE")
    prefix = tempfile.mkdtemp(prefix="binlogctl-install-")
    failures = []
    try:
        p = subprocess.run([cmake, "--install", build, "--prefix", prefix], capture_output=True, text=True)
        if p.returncode != 0:
            print("cmake --install failed:", p.stderr[-500:])
            return 1
        exe = os.path.join(prefix, "bin", "binlogctl")
        v = subprocess.run([exe, "--version"], capture_output=True, text=True)
        if v.returncode != 0 or not v.stdout.startswith("binlogctl "):
            failures.append(f"installed binary: {v.returncode} {v.stdout!r}")
        if have_scdoc:
            for src in sorted(glob.glob(os.path.join(man_src, "*.scd"))):
                page = os.path.join(prefix, "share", "man", "man1", os.path.basename(src)[:-4])
                if not os.path.isfile(page) or b".TH" not in open(page, "rb").read(4096):
                    failures.append(f"man page not installed: {page}")
        else:
            print("scdoc not found: man pages not checked")
    finally:
        shutil.rmtree(prefix, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print("ok" if not failures else f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
