#!/usr/bin/env python3
"""Every long option `binlogctl CMD --help` prints must appear in man/binlogctl-CMD.1.scd, and
every option the man page documents must exist.  usage: help_vs_man.py BINLOGCTL CMD MANPAGE"""
import re
import subprocess
import sys

exe, cmd, man = sys.argv[1:4]
helptext = subprocess.run([exe, cmd, "--help"], capture_output=True, text=True).stdout
opts = set(re.findall(r"(--[a-z][a-z0-9-]+)", helptext)) - {"--help"}
page = open(man, encoding="utf-8").read()
documented = set(re.findall(r"^\*(--[a-z][a-z0-9-]+)", page, re.M))
missing = sorted(o for o in opts if o not in page)
extra = sorted(o for o in documented if o not in opts and o != "--help")
for o in missing:
    print(f"{o}: in --help, not in {man}")
for o in extra:
    print(f"{o}: documented in {man}, not in --help")
sys.exit(1 if missing or extra else 0)
