#!/usr/bin/env python3
"""Installing and packaging: `cmake --install` into a temporary prefix (the
tree, themes found relative to the binary, no build path inside it), the man
page (lint, sections, every command and option of --help), and the Debian
package (`cpack -G DEB`: its Depends against the libraries the binary really
links, its contents), then the packaged binary run against the fault lab.

The package is installed with dpkg -i only when CI=true, as root, on a plain
(not sanitized) build, and when no mcptop package is installed already; it
is removed again at the end. Everywhere else it is unpacked with dpkg -x into
a temporary directory, so a developer's run never changes their system.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_install.py
(the build directory is the binary's directory).
"""

import gzip
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import faultlab  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("install, man page and Debian package")

BUILD_DIR = Path(mcptest.MCPTOP_BIN).resolve().parent
SRC_DIR = mcptest.REPO_DIR.resolve()
CMAKE = shutil.which("cmake")
CPACK = shutil.which("cpack")

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "CONFIGURATION",
            "FAILURE KINDS AND DELIVERED", "ENDINGS", "KEYS", "FILES", "ENVIRONMENT",
            "EXIT STATUS", "EXAMPLES", "SEE ALSO"]

# Paths relative to the prefix that `cmake --install` must create.
TREE = ["bin/mcptop",
        "share/man/man1/mcptop.1.gz",
        "share/bash-completion/completions/mcptop",
        "share/zsh/site-functions/_mcptop",
        "share/fish/vendor_completions.d/mcptop.fish",
        "share/doc/mcptop/LICENSE",
        "share/doc/mcptop/CHANGELOG.md",
        "share/doc/mcptop/README.md",
        "share/doc/mcptop/doc/README.md",
        "share/doc/mcptop/doc/audit.md",
        "share/doc/mcptop/doc/auth.md",
        "share/doc/mcptop/doc/benchmarks.md",
        "share/doc/mcptop/doc/incidents.md",
        "share/doc/mcptop/doc/install.md",
        "share/doc/mcptop/doc/layout.md",
        "share/doc/mcptop/doc/serve.md",
        "share/doc/mcptop/doc/tap.md",
        "share/doc/mcptop/doc/tui.md",
        "share/doc/mcptop/examples/mcptop-serve.json",
        "share/doc/mcptop/examples/mcptop-serve.env",
        "lib/systemd/system/mcptop-serve.service"]
UNIT = "lib/systemd/system/mcptop-serve.service"
SYSTEMD_ANALYZE = shutil.which("systemd-analyze")

_state = {}


def sanitized_build():
    try:
        text = (BUILD_DIR / "CMakeCache.txt").read_text()
    except OSError:
        return False
    return re.search(r"^MCPTOP_SANITIZE:BOOL=(ON|TRUE|1|YES)$", text, re.M | re.I) is not None


def source_themes():
    return sorted(p.name for p in (SRC_DIR / "themes").glob("*.json"))


def prefix():
    """Install into a fresh temporary prefix once; later cases reuse it."""
    if "prefix" not in _state:
        p = mcptest.tmpdir() / "prefix"
        r = mcptest.run([CMAKE, "--install", BUILD_DIR, "--prefix", p], timeout=120)
        if r.rc != 0:
            raise mcptest.SetupError("cmake --install failed:\n%s" % r.describe())
        _state["prefix"] = p
    return _state["prefix"]


def themes_listed(binary, env=None):
    r = mcptest.run([binary, "tui", "--list-themes"], timeout=10, env=mcptest.mcptop_env(env))
    return r, r.stdout.splitlines()


def a_install_tree(c):
    c.require(CMAKE is not None, "cmake on PATH")
    c.require((BUILD_DIR / "CMakeCache.txt").exists(), "%s is a CMake build directory" % BUILD_DIR)
    p = prefix()
    for rel in TREE:
        c.check((p / rel).is_file(), "installed: %s" % rel)
    c.check(os.access(p / "bin/mcptop", os.X_OK), "bin/mcptop is executable")
    guides = sorted(x.name for x in (SRC_DIR / "doc").glob("*.md"))
    c.eq(sorted(x.name for x in (p / "share/doc/mcptop/doc").glob("*.md")), guides,
         "share/doc/mcptop/doc/*.md: every guide of doc/")
    got = sorted(x.name for x in (p / "share/mcptop/themes").glob("*.json"))
    c.eq(got, source_themes(), "share/mcptop/themes/*.json: every theme of themes/")
    c.check(len(got) >= 3, "at least dark, light and high-contrast")
    # No path of this machine's tree inside the installed binary (ASan
    # records each global's source file as the compiler was handed it, so a
    # sanitizer build is exempt; b_ shows it does not look there either).
    blob = (p / "bin/mcptop").read_bytes()
    if sanitized_build():
        c.attach("sanitizer build: the no-build-path check is skipped")
    else:
        c.check(str(SRC_DIR).encode() not in blob,
                "the source path %s is not in bin/mcptop" % SRC_DIR)
        c.check(str(BUILD_DIR).encode() not in blob,
                "the build path %s is not in bin/mcptop" % BUILD_DIR)
    r = mcptest.run([p / "bin/mcptop", "--version"], timeout=10, env=mcptest.mcptop_env())
    c.attach(r.describe())
    c.eq(r.rc, 0, "installed --version: exit code")
    c.check(r.stdout.startswith("mcptop %s " % mcptest.project_version()),
            "installed --version names %s: %r" % (mcptest.project_version(), r.stdout[:60]))


def unit_directives(text):
    """{(section, key): [values]} of a unit file; raises ValueError on a
    line that is neither a comment, a [Section] nor KEY=VALUE."""
    out, section = {}, None
    for n, ln in enumerate(text.splitlines(), 1):
        ln = ln.strip()
        if not ln or ln.startswith(("#", ";")):
            continue
        m = re.match(r"^\[([A-Za-z]+)\]$", ln)
        if m:
            section = m.group(1)
            continue
        m = re.match(r"^([A-Za-z][A-Za-z0-9]*)=(.*)$", ln)
        if not m or section is None:
            raise ValueError("line %d: %r" % (n, ln))
        out.setdefault((section, m.group(1)), []).append(m.group(2))
    return out


def g_systemd_unit(c):
    """contrib/systemd/mcptop-serve.service as installed: it runs the
    installed binary, as a dynamic user on a read-only system with a state
    directory for the token cache, and systemd-analyze verify accepts it."""
    p = prefix()
    text = (p / UNIT).read_text()
    try:
        d = unit_directives(text)
    except ValueError as e:
        c.fatal("the unit's syntax: %s" % e)
    start = d.get(("Service", "ExecStart"), [""])[0].split()
    c.eq(start[:2], [str(p / "bin/mcptop"), "serve"], "ExecStart runs the installed binary's serve")
    for (section, key), want in ((("Service", "DynamicUser"), "yes"), (("Service", "ProtectSystem"), "strict"),
                                 (("Service", "StateDirectory"), "mcptop"), (("Service", "Restart"), "on-failure"),
                                 (("Service", "NoNewPrivileges"), "yes"), (("Install", "WantedBy"), "multi-user.target")):
        c.eq(d.get((section, key)), [want], "%s=%s" % (key, want))
    env = " ".join(d.get(("Service", "Environment"), []))
    c.check("XDG_STATE_HOME=%S" in env, "the token cache in the state directory: %s" % env)
    c.check("-c /etc/mcptop/config.json" in " ".join(start), "the config under /etc/mcptop (read-only)")
    if SYSTEMD_ANALYZE:
        r = mcptest.run([SYSTEMD_ANALYZE, "verify", "--man=no", p / UNIT], timeout=60)
        c.check(r.rc == 0 and r.stderr.strip() == "", "systemd-analyze verify:\n%s" % r.describe())
    else:
        c.attach("systemd-analyze not installed: the unit's syntax was checked alone")
    # The example config the unit reads is one mcptop loads.
    r = mcptest.run_mcptop(["end", "-c", p / "share/doc/mcptop/examples/mcptop-serve.json", "--list-servers"],
                           timeout=20)
    c.eq((r.rc, sorted(r.stdout.split())), (0, ["docs", "memory", "search"]),
         "the example config loads:\n%s" % r.describe())


def b_themes_relative_to_binary(c):
    p = prefix()
    env = {"MCPTOP_THEMES": ""}
    r, names = themes_listed(p / "bin/mcptop", env)
    c.attach(r.describe())
    c.eq(names[:3], ["dark", "light", "high-contrast"], "installed binary lists the installed themes")
    r = mcptest.run([p / "bin/mcptop", "tui", "--help"], timeout=10, env=mcptest.mcptop_env(env))
    c.check(str(p / "share/mcptop/themes") in r.stdout,
            "tui --help names %s: %r" % (p / "share/mcptop/themes", r.stdout[-400:]))
    c.check(str(SRC_DIR) not in r.stdout, "tui --help names no source path")
    # Move the tree: it still finds its own themes, and only them.
    moved = mcptest.tmpdir() / "moved" / "opt-mcptop"
    if moved.exists():
        shutil.rmtree(moved)
    shutil.copytree(p, moved, symlinks=True)
    (moved / "share/mcptop/themes/only-in-moved-tree.json").write_text('{"roles": {}}')
    (moved / "share/mcptop/themes/light.json").unlink()
    r, names = themes_listed(moved / "bin/mcptop", env)
    c.attach(r.describe())
    c.check("only-in-moved-tree" in names, "a moved tree finds the themes beside it: %r" % names)
    # light.json is gone from the moved tree: were any other directory (the
    # source tree, the build tree, the first prefix) searched, it would show.
    c.check("light" not in names, "the moved tree searches nowhere else: %r" % names)
    # Through a symlink elsewhere (as /usr/local/bin/mcptop -> /opt/...): the real prefix.
    link = mcptest.tmpdir() / "linkbin" / "mcptop"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        os.symlink(moved / "bin/mcptop", link)
    r, names = themes_listed(link, env)
    c.check("only-in-moved-tree" in names, "through a symlink, the themes of the real prefix: %r" % names)
    r, names = themes_listed(p / "bin/mcptop", env)
    c.check("only-in-moved-tree" not in names, "the first tree does not see the moved one's themes")
    r, names = themes_listed(mcptest.MCPTOP_BIN, env)
    c.check("only-in-moved-tree" not in names, "nor does the build-tree binary")
    c.eq(names[:3], ["dark", "light", "high-contrast"], "the build-tree binary finds build/themes")


def man_page():
    """The installed page (gzipped), uncompressed into a file groff reads."""
    gz = prefix() / "share/man/man1/mcptop.1.gz"
    page = mcptest.tmpdir() / "mcptop.1"
    with gzip.open(gz, "rb") as f:
        page.write_bytes(f.read())
    return page


def man_text(path):
    """The page rendered as plain ASCII text, without hyphenation, on wide lines."""
    r = mcptest.run(["groff", "-man", "-Tascii", "-P-cbou", "-rHY=0", "-rLL=200n", path], timeout=20)
    return r, r.stdout


def c_man_lint(c):
    c.require(shutil.which("groff"), "groff on PATH (groff-base)")
    gz = prefix() / "share/man/man1/mcptop.1.gz"
    with open(gz, "rb") as f:
        head = f.read(10)
    c.check(head[:2] == b"\x1f\x8b" and head[4:8] == b"\0\0\0\0",
            "the page is installed gzipped, with no time stamp (gzip -n)")
    page = man_page()
    r = mcptest.run(["groff", "-ww", "-man", "-z", page], timeout=20)
    c.attach(r.describe())
    c.eq(r.rc, 0, "groff -ww -man -z: exit code")
    c.eq(r.stderr, "", "groff -ww -man -z: no warning")
    if shutil.which("man"):
        r = mcptest.run(["man", "--warnings", "-E", "UTF-8", "-l", gz], timeout=20,
                        env=mcptest.mcptop_env({"MANWIDTH": "80", "LC_ALL": "C.UTF-8",
                                                "MAN_DISABLE_SECCOMP": "1",
                                                "PAGER": "cat", "MANPAGER": "cat"}))
        c.attach(r.describe())
        c.eq(r.rc, 0, "man --warnings: exit code")
        c.eq(r.stderr, "", "man --warnings: no warning")
    src = page.read_text()
    th = re.search(r'^\.TH MCPTOP 1 "(\d{4}-\d{2}-\d{2})" "mcptop ([^"]+)"', src, re.M)
    c.check(th, ".TH names the page, a date and the version")
    if th:
        c.eq(th.group(2), mcptest.project_version(), "the page's version is CMake's")
    heads = re.findall(r"^\.SH (.+)$", src, re.M)
    heads = [h.strip('"') for h in heads]
    for s in SECTIONS:
        c.check(s in heads, "section %s" % s)
    c.check("@" + "PROJECT_VERSION@" not in src, "configured: no @VAR@ left")


def help_texts():
    texts = {}
    for cmd in (None, "tui", "check", "watch", "end", "audit"):
        argv = ["--help"] if cmd is None else [cmd, "--help"]
        r = mcptest.run_mcptop(argv, timeout=10)
        if r.rc != 0:
            raise mcptest.SetupError("%s failed:\n%s" % (" ".join(argv), r.describe()))
        texts[cmd] = r.stdout
    return texts


OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[a-zA-Z])(?![\w-])")


def d_man_covers_help(c):
    r, text = man_text(man_page())
    c.require(r.rc == 0 and text, "the page renders: %s" % r.describe())
    words = set(re.findall(r"[\w-]+|--?[\w-]+", text))
    texts = help_texts()
    commands = re.findall(r"^  ([a-z]+) \[", texts[None].split("Commands:", 1)[-1], re.M)
    c.check(set(commands) >= {"tui", "check", "watch", "end"}, "--help lists the commands: %r" % commands)
    section = text.split("\nCOMMANDS\n", 1)[-1].split("\nOPTIONS\n", 1)[0]
    for cmd in commands:
        c.check(re.search(r"^\s+%s\b" % cmd, section, re.M),
                "COMMANDS describes %s" % cmd)
    seen = set()
    for cmd, help_text in texts.items():
        for opt in OPTION.findall(help_text):
            seen.add(opt)
            c.check(opt in words, "the man page names %s (from %s --help)" % (opt, cmd or "mcptop"))
    c.check({"--json", "--timeout", "--pings", "--stats", "--server", "--teardown", "--theme",
             "--log", "--list-servers", "--list-themes", "--version", "-c", "-s", "-h", "-V"} <= seen,
            "the help texts were read: %r" % sorted(seen))


def build_deb():
    if "deb" not in _state:
        out = mcptest.tmpdir() / "deb"
        out.mkdir(exist_ok=True)
        r = mcptest.run([CPACK, "-G", "DEB", "-B", out, "--config", BUILD_DIR / "CPackConfig.cmake"],
                        timeout=240, cwd=str(BUILD_DIR))
        debs = sorted(out.glob("*.deb"))
        if r.rc != 0 or len(debs) != 1:
            raise mcptest.SetupError("cpack -G DEB failed:\n%s" % r.describe())
        _state["deb"] = debs[0]
    return _state["deb"]


def deb_field(deb, field):
    r = mcptest.run(["dpkg-deb", "-f", deb, field], timeout=20)
    return r.stdout.strip()


def owner_package(path):
    """The Debian package that ships path (trying the /usr-merged spellings)."""
    cands = [path, os.path.realpath(path)]
    for p in list(cands):
        if p.startswith("/usr/"):
            cands.append(p[4:])
        else:
            cands.append("/usr" + p)
    for p in cands:
        r = subprocess.run(["dpkg", "-S", p], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           timeout=20)
        if r.returncode == 0 and r.stdout:
            return r.stdout.decode().split(":", 1)[0].split(",")[0].strip()
    return None


def e_deb_package(c):
    c.require(CPACK and shutil.which("dpkg-deb") and shutil.which("dpkg-shlibdeps"),
              "cpack, dpkg-deb and dpkg-shlibdeps (dpkg-dev) on PATH")
    deb = build_deb()
    c.attach("package: %s" % deb)
    c.eq(deb_field(deb, "Package"), "mcptop", "Package")
    c.eq(deb_field(deb, "Version"), mcptest.project_version(), "Version")
    depends = deb_field(deb, "Depends")
    c.attach("Depends: %s" % depends)
    dep_names = {re.split(r"[\s(]", d.strip())[0] for alt in depends.split(",") for d in alt.split("|")}
    for want in ("libc6", "libcurl4", "libev4", "libcjson1", "libncursesw6", "zlib1g"):
        c.check(want in dep_names, "Depends has %s: %s" % (want, depends))
    # Every shared library the binary links directly (ELF NEEDED) comes from
    # a package in Depends.
    r = mcptest.run(["readelf", "-d", prefix() / "bin/mcptop"], timeout=20)
    needed = re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", r.stdout)
    r = mcptest.run(["ldd", prefix() / "bin/mcptop"], timeout=20)
    where = dict(re.findall(r"^\s*(\S+) => (/\S+)", r.stdout, re.M))
    c.attach("NEEDED: %s" % ", ".join(needed))
    c.check("libcurl.so.4" in needed and "libev.so.4" in needed, "readelf names the libraries")
    for soname in needed:
        lib = where.get(soname)
        if lib is None:
            c.check(False, "ldd resolves %s" % soname)
            continue
        pkg = owner_package(lib)
        if pkg is None:
            c.attach("no package owns %s (skipped)" % lib)
            continue
        c.check(pkg.split(":")[0] in dep_names, "%s (%s) is in Depends" % (pkg, lib))
    r = mcptest.run(["dpkg-deb", "-c", deb], timeout=20)
    listing = r.stdout
    for rel in TREE + ["share/mcptop/themes/%s" % t for t in source_themes()]:
        c.check(" ./usr/%s" % rel in listing, "the package ships /usr/%s" % rel)
    unpacked = mcptest.tmpdir() / "deb-unit"
    r = mcptest.run(["dpkg-deb", "-x", deb, unpacked], timeout=60)
    unit = unpacked / "usr" / UNIT
    c.check(unit.is_file() and "ExecStart=/usr/bin/mcptop serve " in unit.read_text(),
            "the package's unit runs /usr/bin/mcptop")


def run_installed(c, binary, lab):
    r = mcptest.run([binary, "--version"], timeout=10, env=mcptest.mcptop_env())
    c.attach(r.describe())
    c.eq(r.rc, 0, "%s --version: exit code" % binary)
    c.check(r.stdout.startswith("mcptop %s (commit " % mcptest.project_version()),
            "--version: %r" % r.stdout[:80])
    r, names = themes_listed(binary, {"MCPTOP_THEMES": ""})
    c.eq(names[:3], ["dark", "light", "high-contrast"], "the packaged themes are found")
    cfg = mcptest.write_config({
        "healthy": {"url": lab.url("/healthy")},
        "gateway-502": {"url": lab.url("/html502/dial")},
        "reset-on-ping": {"url": lab.url("/reset/ping")},
    })
    r = mcptest.run([binary, "check", "--json", "-c", cfg, "--timeout", "5000"], timeout=60,
                    env=mcptest.mcptop_env())
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 1, "check: exit code (two servers not ok)")
    doc = r.json()
    c.require(isinstance(doc, dict) and isinstance(doc.get("servers"), list), "check --json output")
    rows = {s.get("name"): s for s in doc["servers"] if isinstance(s, dict)}
    c.eq(dig(rows, "healthy", "ok"), True, "healthy.ok")
    c.eq(dig(rows, "healthy", "liveness", "state"), "reachable", "healthy liveness")
    c.eq(dig(rows, "gateway-502", "last_failure", "kind"), "http_status", "gateway-502 kind")
    c.eq(dig(rows, "gateway-502", "last_failure", "http_status"), 502, "gateway-502 status")
    c.eq(dig(rows, "gateway-502", "liveness", "state"), "unknown", "gateway-502 liveness")
    c.eq(dig(rows, "reset-on-ping", "last_failure", "kind"), "connection_failed", "reset-on-ping kind")
    c.eq(dig(rows, "reset-on-ping", "liveness", "state"), "unreachable", "reset-on-ping liveness")


def f_deb_runs(c):
    deb = build_deb()
    installed = False
    may_install = (os.environ.get("CI") == "true" and os.geteuid() == 0
                   and not sanitized_build() and shutil.which("dpkg"))
    if may_install:
        q = subprocess.run(["dpkg-query", "-W", "-f", "${db:Status-Status}", "mcptop"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=20)
        may_install = q.stdout.decode().strip() != "installed"
    lab = faultlab.FaultLab().start()
    try:
        if may_install:
            # CI's machine is fresh and its own: install as a user would.
            r = mcptest.run(["dpkg", "-i", deb], timeout=120,
                            env=mcptest.mcptop_env({"DEBIAN_FRONTEND": "noninteractive"}))
            c.attach(r.describe())
            c.require(r.rc == 0, "dpkg -i installs the package (its Depends are satisfied)")
            installed = True
            binary = Path("/usr/bin/mcptop")
            c.check(binary.is_file(), "/usr/bin/mcptop is installed")
            c.check(Path("/usr/share/mcptop/themes/dark.json").is_file(), "themes installed")
            r = mcptest.run(["man", "-w", "mcptop"], timeout=20)
            c.eq(r.stdout.strip(), "/usr/share/man/man1/mcptop.1.gz", "man -w mcptop")
        else:
            root = mcptest.tmpdir() / "deb-root"
            r = mcptest.run(["dpkg", "-x", deb, root], timeout=60)
            c.attach(r.describe())
            c.require(r.rc == 0, "dpkg -x unpacks the package")
            binary = root / "usr/bin/mcptop"
            c.attach("unpacked (dpkg -i only with CI=true, as root, on a plain build)")
        run_installed(c, binary, lab)
    finally:
        lab.stop()
        if installed:
            r = mcptest.run(["dpkg", "-r", "mcptop"], timeout=120,
                            env=mcptest.mcptop_env({"DEBIAN_FRONTEND": "noninteractive"}))
            c.check(r.rc == 0, "dpkg -r removes the package again: %s" % r.describe())


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("a_install_tree", a_install_tree)
    rep.run("b_themes_relative_to_binary", b_themes_relative_to_binary)
    rep.run("c_man_lint", c_man_lint)
    rep.run("d_man_covers_help", d_man_covers_help)
    rep.run("e_deb_package", e_deb_package)
    rep.run("f_deb_runs", f_deb_runs)
    rep.run("g_systemd_unit", g_systemd_unit)
    rep.finish()


if __name__ == "__main__":
    main()
