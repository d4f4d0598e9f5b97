#!/usr/bin/env python3
"""The examples of the RENDERED man pages work when pasted (issue 36, item 7).

usage: man_examples.py BINLOGCTL RENDERED_MAN_DIR

Each page is rendered by man(1) as a reader sees it (markers put around its literal blocks
first, so that they can be found in the text). Then:
  * every literal block that holds a command (a line whose first word is binlogctl, or a
    pipeline or loop around one) must parse as a shell script (bash -n);
  * so must every other line of the page that reads as a binlogctl command (an example written
    as an indented paragraph, which man fills), and it must not go on on the next line (filled
    and wrapped at 80 columns: pasted, each line would run alone);
  * no line of a literal block starts with an option (a trailing backslash lost in rendering);
  * in every such command, `binlogctl` appears only as a command word (never as an argument of
    the command before it), its subcommand exists, and each --option it passes is one that
    `binlogctl SUBCOMMAND --help` lists.
Exit 77 (skipped) when the pages were not rendered (no scdoc) or man is absent.
"""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys

BEGIN, END = "XXEXAMPLEBEGINXX", "XXEXAMPLEENDXX"


def render(page):
    """The page as `man -l` shows it (no hyphenation, wide), with markers around literal blocks."""
    roff = open(page, encoding="utf-8").read()
    roff = re.sub(r"^\.nf$", BEGIN + "\n.br\n.nf", roff, flags=re.M)
    roff = re.sub(r"^\.fi$", ".fi\n" + END + "\n.br", roff, flags=re.M)
    tmp = page + ".marked"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(".nh\n" + roff)
    try:
        env = dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat", LC_ALL="C.UTF-8")
        p = subprocess.run(["man", "-l", tmp], capture_output=True, text=True, env=env)
        text = subprocess.run(["col", "-b"], input=p.stdout, capture_output=True, text=True).stdout
    finally:
        os.unlink(tmp)
    return text


def main():
    binary, mandir = sys.argv[1], sys.argv[2]
    pages = sorted(glob.glob(os.path.join(mandir, "*.1")))
    if not pages or not shutil.which("man") or not shutil.which("col"):
        print("SKIP: no rendered pages or no man(1)")
        return 77
    subcommands = {}
    failures = []

    def options_of(sub):
        if sub not in subcommands:
            p = subprocess.run([binary, sub, "--help"], capture_output=True, text=True)
            subcommands[sub] = set(re.findall(r"(--[a-z][a-z0-9-]*)", p.stdout)) if p.returncode == 0 else None
        return subcommands[sub]

    def check_script(page, where, script):
        p = subprocess.run(["bash", "-n"], input=script, capture_output=True, text=True)
        if p.returncode != 0:
            failures.append(f"{page} {where}: does not parse: {p.stderr.strip()}\n{script}")
            return
        joined = re.sub(r"\\\n", " ", script)
        for line in joined.split("\n"):
            if line.lstrip().startswith("-"):
                failures.append(f"{page} {where}: a line that starts with an option (a lost trailing backslash?): {line}")
            try:
                lex = shlex.shlex(line, posix=True, punctuation_chars=True)
                lex.whitespace_split = True
                lex.commenters = "#"
                words = list(lex)
            except ValueError:
                continue
            for i, w in enumerate(words):
                if w not in ("binlogctl", "build/binlogctl"):
                    continue
                prev = words[i - 1] if i > 0 else ""
                if i > 0 and not re.fullmatch(r"[|;&()]+|do|then|else|time|\$\(|`|.*=.*", prev):
                    failures.append(f"{page} {where}: binlogctl as an argument of another command (lines joined?): {line}")
                    continue
                if i + 1 >= len(words) or words[i + 1].startswith("-"):
                    continue
                sub = words[i + 1]
                known = options_of(sub)
                if known is None:
                    failures.append(f"{page} {where}: no subcommand {sub!r}: {line}")
                    continue
                for w2 in words[i + 2:]:
                    if re.fullmatch(r"[|;&()]+", w2):
                        break
                    opt = w2.split("=", 1)[0]
                    if re.fullmatch(r"--[a-z][a-z0-9-]*", opt) and opt not in known:
                        failures.append(f"{page} {where}: binlogctl {sub} has no option {opt}: {line}")

    # A line of prose or of an indented paragraph that is a command: binlogctl SUBCOMMAND then an
    # option, a path or a file name (not the NAME and SYNOPSIS lines).
    command_line = re.compile(r"^\s*(\$ )?([A-Z_]+=\S+ )*(build/)?binlogctl [a-z]+ (-\S|\S*[./])")
    blocks = 0
    for page in pages:
        name = os.path.basename(page)
        text = render(page)
        inside = False
        block = []
        section = ""
        for n, line in enumerate(text.split("\n"), 1):
            if line.strip() == BEGIN:
                inside, block = True, []
                continue
            if line.strip() == END:
                inside = False
                lines = [b for b in block if b.strip()]
                indent = min((len(b) - len(b.lstrip()) for b in lines), default=0)
                script = "\n".join(b[indent:] for b in block).strip("\n") + "\n"
                if any(re.match(r"\s*(\$ )?([A-Z_]+=\S+ )*(for |while |\S+ \| )?.*\bbinlogctl [a-z]+", b)
                       for b in lines) and not any(b.lstrip().startswith(("{", "[", "<")) for b in lines):
                    blocks += 1
                    check_script(name, f"block ending at line {n}", re.sub(r"^\$ ", "", script, flags=re.M))
                continue
            if re.match(r"^[A-Z][A-Z -]*$", line):
                section = line.strip()
            if inside:
                block.append(line)
            elif section not in ("NAME", "SYNOPSIS") and command_line.match(line):
                blocks += 1
                check_script(name, f"line {n}", re.sub(r"^\s*\$ ", "", line.strip()) + "\n")
                # A command in a filled paragraph that the page wraps: pasted, each line runs alone.
                lines_after = text.split("\n")[n:n + 1]
                indent = len(line) - len(line.lstrip())
                if lines_after and lines_after[0].strip() and len(lines_after[0]) - len(lines_after[0].lstrip()) == indent:
                    failures.append(f"{name} line {n}: a command wrapped onto the next line (write it as a literal block):\n"
                                    f"{line}\n{lines_after[0]}")
    # README's `man -l build/man/binlogctl.1` after scripts/demo.sh, which builds the binlogctl
    # target only: the pages must come with that target (checked in the generated Makefiles).
    build_dir = sys.argv[3] if len(sys.argv) > 3 else None
    makefile2 = os.path.join(build_dir, "CMakeFiles", "Makefile2") if build_dir else None
    if makefile2 and os.path.exists(makefile2):
        deps = open(makefile2, encoding="utf-8", errors="replace").read()
        if not re.search(r"^CMakeFiles/binlogctl\.dir/all: CMakeFiles/man\.dir/all$", deps, re.M):
            failures.append("building the binlogctl target (as scripts/demo.sh does) does not render the man pages")
    for f in failures:
        print("FAIL:", f)
    print(f"man_examples: {blocks} examples in {len(pages)} pages, {len(failures)} failure(s)")
    if blocks == 0:
        print("FAIL: no example found: the markers did not survive rendering")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
