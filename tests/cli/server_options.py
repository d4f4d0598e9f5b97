#!/usr/bin/env python3
"""Options for a live server are a usage error on files (issue 36, item 4).

usage: server_options.py BINLOGCTL FIXTURE_DIR

Each connection option (--host, --port, --socket, --user, --password, --ssl-*,
--connection-server-id) and --start-gtid and --stop-never, given without -R to a subcommand that
reads files: exit 2, nothing on stdout, a message naming the option and -R; --start-gtid's says
what to use on files instead (--exclude-gtids ..GTID), and that suggestion selects what a
replica at that position would still apply.
"""
import subprocess
import sys
import os


def run(*args):
    return subprocess.run(list(args), capture_output=True, stdin=subprocess.DEVNULL)


def main():
    binary, fixture = sys.argv[1], sys.argv[2]
    chain = os.path.join(fixture, "basic", "binlogs")
    failures = []

    def check(cond, what):
        if not cond:
            failures.append(what)
            print("FAIL:", what)

    options = [["--host", "db1"], ["--port", "3307"], ["--socket", "/tmp/nowhere.sock"], ["--user", "repl"],
               ["--password=secret"], ["--ssl-mode", "REQUIRED"], ["--ssl-ca", "/etc/ssl/ca.pem"],
               ["--ssl-cert", "c.pem"], ["--ssl-key", "k.pem"], ["--connection-server-id", "77"],
               ["--start-gtid", "1-1011-1000"], ["--stop-never"]]
    for cmd in ("dump", "convert", "verify", "stats", "schema", "replay"):
        for opt in options:
            if cmd == "replay" and opt == ["--stop-never"]:
                continue  # replay refuses it anyway: it needs an end (with or without -R)
            p = run(binary, cmd, *opt, chain)
            name = opt[0].split("=")[0].encode()
            check(p.returncode == 2, f"{cmd} {opt} FILES: exit {p.returncode}, expected 2")
            check(name in p.stderr and b"-R" in p.stderr, f"{cmd} {opt}: stderr {p.stderr[:300]!r}")
            check(p.stdout == b"", f"{cmd} {opt}: wrote {len(p.stdout)} bytes on stdout")
    p = run(binary, "convert", "--start-gtid", "1-1011-1000", chain)
    check(b"--exclude-gtids ..1-1011-1000" in p.stderr, f"--start-gtid: no suggestion: {p.stderr[:300]!r}")
    # The suggestion does what was asked: the transactions after 1-1011-1000 only.
    p = run(binary, "convert", "--format", "json", "--exclude-gtids", "..1-1011-1000", chain)
    check(p.returncode == 0 and p.stdout and b'"gtid":"1-1011-1000"' not in p.stdout
          and b'"gtid":"1-1011-1001"' in p.stdout, "the suggested --exclude-gtids does not start after the GTID")
    # The defaults of the group are no "given" option (--ssl-mode has one).
    p = run(binary, "dump", chain)
    check(p.returncode == 0, f"dump FILES: exit {p.returncode}: {p.stderr[:300]!r}")
    print(f"server_options: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
