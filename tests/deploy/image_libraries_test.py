"""The image's runtime stage installs every shared library the built binaries load.

Usage: image_libraries_test.py BIN_DIR RUNTIME_DIR (build/bin and build/runtimes, after the
image's targets are built: scripts/build.sh run).

No Docker engine is needed: the binaries built here are the ones the image's build stage builds
(both on Debian 12, from the same sources), so what they load here is what they load in the
image. For every ELF file among the Toolgate binaries and the worker runtimes:

- `ldd` lists every library the dynamic linker loads, the ones they load included, and the
  libraries the binary opens itself (dlopen; named in its read-only data, e.g. the Lua worker's
  libcurl) are added;
- `dpkg -S` names the Debian package that owns each library's file (its real path after
  symlinks, and the /lib and /usr/lib spellings both, since Debian 12's /lib is /usr/lib and
  dpkg records either);
- a library the binary needs directly (its ELF NEEDED entries and what it opens itself) must
  have its package named in the runtime stage's `apt-get install` list, the C and C++ runtime
  (libc6, libstdc++6, libgcc-s1) included: the list says everything the binaries use, nothing
  is assumed of the base image;
- a library loaded only because another one needs it must come with the list: its package is
  named there or is a dependency (Depends, Pre-Depends, followed transitively, first
  alternative) of a package named there, as apt installs them with --no-install-recommends.

The interpreters the services run (the executor's --python and --node defaults, the registry's
syntax checks) and the standard modules the Python worker imports are checked the same way: the
list installs their packages.
"""
import functools
import os
import pathlib
import re
import shutil
import subprocess
import sys
import unittest

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCKERFILE = ROOT / "deploy" / "Dockerfile"
BIN_DIR = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "bin"
RUNTIME_DIR = pathlib.Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "build" / "runtimes"
SERVICES = sorted(p.name for p in (ROOT / "services").iterdir() if (p / "main.cc").exists())


def runtime_stage(dockerfile):
    """The text of the Dockerfile's last stage (the image that runs), continuation lines joined."""
    stages = re.split(r"(?im)^FROM\s+", dockerfile)
    return "FROM " + re.sub(r"\\\n", " ", stages[-1])


def apt_packages(stage):
    """The packages the stage's `apt-get install` commands name."""
    packages = []
    for command in re.findall(r"apt-get\s+install\s+([^&;|\n]*)", stage):
        packages += [word for word in command.split() if not word.startswith("-")]
    return packages


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def run(*argv):
    return subprocess.run(argv, check=False, capture_output=True, text=True, errors="replace")


def ldd(binary):
    """{soname: path} of every library the dynamic linker loads for binary (the loader
    included, under its path); unresolved ones map to None."""
    out = run("ldd", str(binary))
    if out.returncode != 0:
        raise AssertionError("ldd %s failed: %s" % (binary, out.stderr.strip()))
    libraries = {}
    for line in out.stdout.splitlines():
        line = line.strip()
        m = re.match(r"(\S+) => (not found|(\S+) \(0x[0-9a-f]+\))$", line)
        if m:
            libraries[m.group(1)] = m.group(3)
            continue
        m = re.match(r"(/\S+) \(0x[0-9a-f]+\)$", line)  # the loader
        if m:
            libraries[os.path.basename(m.group(1))] = m.group(1)
        # linux-vdso.so.1 (0x...) is the kernel's, no file.
    return libraries


def needed(binary):
    """The sonames in binary's ELF NEEDED entries."""
    out = run("readelf", "-dW", str(binary))
    return set(re.findall(r"\(NEEDED\)\s+Shared library: \[([^\]]+)\]", out.stdout))


def opened_at_run_time(binary):
    """Sonames the binary's read-only data names (the libraries it dlopens)."""
    out = run("readelf", "-p", ".rodata", str(binary))
    names = re.findall(r"\b(lib[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*\.so\.[0-9][0-9.]*)",
                       out.stdout)
    return {name.rstrip(".") for name in names}


def ldconfig_path(soname):
    """Where the dynamic linker's cache finds soname (for this machine's architecture)."""
    out = run("/sbin/ldconfig", "-p")
    machine = "x86-64" if os.uname().machine == "x86_64" else None
    for line in out.stdout.splitlines():
        m = re.match(r"\s*(\S+) \(([^)]*)\) => (\S+)$", line)
        if m and m.group(1) == soname and (machine is None or machine in m.group(2)):
            return m.group(3)
    return None


def path_spellings(path):
    """The spellings dpkg may have recorded a file under: as found, after symlinks, and each with
    /lib and /usr/lib swapped (merged /usr)."""
    spellings = []
    for p in (path, os.path.realpath(path)):
        spellings.append(p)
        for a, b in (("/usr/lib/", "/lib/"), ("/lib/", "/usr/lib/"),
                     ("/usr/lib64/", "/lib64/"), ("/lib64/", "/usr/lib64/"),
                     ("/usr/bin/", "/bin/"), ("/bin/", "/usr/bin/")):
            if p.startswith(a):
                spellings.append(b + p[len(a):])
    return list(dict.fromkeys(spellings))


def owners(paths):
    """{path: package} for each path dpkg knows, the package without its architecture."""
    if not paths:
        return {}
    out = run("dpkg-query", "-S", *paths)
    found = {}
    for line in out.stdout.splitlines():
        if line.startswith("diversion "):
            continue
        packages, _, path = line.partition(": ")
        if path in paths:
            found[path] = packages.split(", ")[0].split(":")[0]
    return found


@functools.lru_cache(maxsize=None)
def package_of(path):
    """The Debian package that owns the file at path, or None."""
    spellings = path_spellings(path)
    found = owners(spellings)
    for p in spellings:
        if p in found:
            return found[p]
    return None


def installed_dependencies():
    """{package: [[alternative, ...], ...]} of Depends and Pre-Depends of every installed
    package, and {virtual: [provider, ...]}."""
    out = run("dpkg-query", "-W", "-f",
              "${Package}\t${db:Status-Abbrev}\t${Pre-Depends}\t${Depends}\t${Provides}\n")
    depends, provides = {}, {}
    def names(field):
        return [[re.sub(r"\s*\(.*?\)|:any|\[.*?\]", "", alt).strip() for alt in group.split("|")]
                for group in field.split(",") if group.strip()]
    for line in out.stdout.splitlines():
        package, status, pre, dep, prov = (line.split("\t") + [""] * 5)[:5]
        if not status.startswith("ii"):
            continue
        depends[package] = names(pre) + names(dep)
        for group in names(prov):
            provides.setdefault(group[0], []).append(package)
    return depends, provides


def closure(packages, depends, provides, unexpanded=frozenset()):
    """The packages apt installs for packages (--no-install-recommends): each one's Depends and
    Pre-Depends, transitively; of alternatives, the first (apt's choice on a fresh image) unless
    one is already in; a virtual package through its one installed provider. The packages in
    unexpanded are taken without their dependencies."""
    result, todo = set(), list(packages)
    while todo:
        package = todo.pop()
        if package in result:
            continue
        result.add(package)
        if package in unexpanded:
            continue
        for group in depends.get(package, []):
            if any(alt in result for alt in group):
                continue
            first = group[0]
            if first not in depends and len(provides.get(first, [])) == 1:
                first = provides[first][0]
            todo.append(first)
    return result


def built_binaries():
    """The ELF files the image carries: build/bin/toolgate* and the worker runtimes."""
    expected = [BIN_DIR / "toolgate"] + [BIN_DIR / ("toolgate-" + s) for s in SERVICES] + \
               [RUNTIME_DIR / "lua" / "toolgate-lua-worker"]
    missing = [str(path) for path in expected if not path.is_file()]
    if missing:
        raise AssertionError("not built (scripts/build.sh run): " + ", ".join(missing))
    found = sorted(p for p in BIN_DIR.glob("toolgate*") if p.is_file() and is_elf(p))
    found += sorted(p for p in RUNTIME_DIR.rglob("*") if p.is_file() and is_elf(p))
    return found


def libraries(binary):
    """({soname: path} of everything binary loads, {sonames it needs directly}, [problems]):
    ldd's list, with what it opens itself (and what that loads) added; direct are its NEEDED
    entries, the loader and what it opens."""
    loaded = ldd(binary)
    direct = needed(binary) | {os.path.basename(p) for p in loaded.values()
                               if p and os.path.basename(p).startswith("ld-linux")}
    problems = []
    for soname in sorted(opened_at_run_time(binary) - set(loaded)):
        path = ldconfig_path(soname)
        if path is None:
            problems.append("%s: opens %s, which is not installed here" % (binary.name, soname))
            continue
        loaded[soname] = path
        direct.add(soname)
        for dep, dep_path in ldd(path).items():
            loaded.setdefault(dep, dep_path)
    return loaded, direct, problems


def programs_run():
    """{who: program} of the programs the services start: the executor's workers (its --python
    and --node defaults) and the registry's syntax checks."""
    main = (ROOT / "services" / "executor" / "main.cc").read_text()
    programs = {}
    for flag in ("python", "node"):
        m = re.search(r'flags\.Define\("%s", "([^"]+)"' % flag, main)
        if m:
            programs["executor --" + flag] = m.group(1)
    check = (ROOT / "services" / "registry" / "src" / "syntax_check.cc").read_text()
    for program in re.findall(r'RunProcess\(\{"([^"]+)"', check):
        programs["registry runs " + program] = program
    return programs


def program_packages():
    """{who: [package of the program, package of its real file]} of programs_run(), as the
    image finds them: the registry searches /usr/local/bin, /usr/bin and /bin, and the image's
    /usr/local/bin holds only Toolgate's binaries (a program of this machine's own under
    /usr/local is not the image's); [] for a program not found, None for a file of no package."""
    packages = {}
    for who, program in sorted(programs_run().items()):
        path = shutil.which(program, path="/usr/bin:/bin")
        packages[who] = [package_of(p) for p in (path, os.path.realpath(path))] if path else []
    return packages


# Named for what they do rather than for a library: every sandbox shows /etc/ssl/certs to its
# TLS clients (the CA bundle), and compose's health checks run curl.
NAMED_FOR_A_PURPOSE = {"ca-certificates", "curl"}


class ImageLibrariesTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        cls.stage = runtime_stage(DOCKERFILE.read_text())
        cls.listed = apt_packages(cls.stage)
        cls.depends, cls.provides = installed_dependencies()
        cls.programs = program_packages()
        # What a program's package depends on here is not evidence for the image: this machine's
        # interpreter may come from elsewhere than Debian (a Node.js whose package depends on
        # Python), so the image's list must install each program for a reason of its own.
        cls.program_packages = {p for names in cls.programs.values() for p in names if p}
        cls.installed = cls.closure(cls.listed)
        cls.binaries = built_binaries()
        cls.analyses = {binary: libraries(binary) for binary in cls.binaries}

    @classmethod
    def closure(cls, packages):
        return closure(packages, cls.depends, cls.provides, cls.program_packages)

    def test_the_image_is_the_distribution_the_libraries_are_mapped_on(self):
        # Package names are Debian 12's; the build machine must be what the image is.
        self.assertRegex(self.stage, r"^FROM debian:12\s")
        release = pathlib.Path("/etc/os-release").read_text()
        self.assertIn('VERSION_ID="12"', release, "this check maps libraries on Debian 12 only")
        self.assertRegex(DOCKERFILE.read_text(), r"(?m)^FROM debian:12 AS build$")

    def test_every_binary_is_checked(self):
        names = {b.name for b in self.binaries}
        self.assertIn("toolgate-lua-worker", names)
        for service in SERVICES:
            self.assertIn("toolgate-" + service, names)
        # The Lua worker's libcurl, opened at its first http.request, is found.
        lua = next(b for b in self.binaries if b.name == "toolgate-lua-worker")
        self.assertIn("libcurl.so.4", self.analyses[lua][1])

    def test_every_library_a_binary_loads_is_installed_by_the_runtime_stage(self):
        self.assertGreater(len(self.listed), 10, self.listed)
        problems = []
        for binary, (loaded, direct, found) in self.analyses.items():
            problems += found
            for soname, path in sorted(loaded.items()):
                if path is None:
                    problems.append("%s: %s not found" % (binary.name, soname))
                    continue
                package = package_of(path)
                if package is None:
                    problems.append("%s: %s (%s) belongs to no Debian package" %
                                    (binary.name, soname, path))
                elif soname in direct and package not in self.listed:
                    problems.append("%s: needs %s (%s): add package %s to the runtime stage" %
                                    (binary.name, soname, path, package))
                elif package not in self.installed:
                    problems.append("%s: loads %s (%s): package %s is not installed by the "
                                    "runtime stage's list" % (binary.name, soname, path, package))
        if problems:
            self.fail("\n" + "\n".join(sorted(set(problems))))

    def test_the_programs_the_services_run_are_installed(self):
        self.assertGreaterEqual(len(self.programs), 4, self.programs)
        for who, names in self.programs.items():
            self.assertTrue(names, "%s: not installed here" % who)
            for package in names:
                self.assertIsNotNone(package, "%s belongs to no package" % who)
                self.assertIn(package, self.installed, "%s for %s" % (package, who))

    def test_the_python_workers_imports_are_installed(self):
        modules = set()
        for script in (ROOT / "services" / "executor" / "runtimes" / "python").glob("*.py"):
            for m in re.finditer(r"(?m)^(?:import|from)\s+([A-Za-z_][\w]*)", script.read_text()):
                modules.add(m.group(1))
        local = {p.stem for p in (ROOT / "services" / "executor" / "runtimes" / "python").glob("*.py")}
        modules -= local | {"__future__"}
        self.assertIn("json", modules)
        for module in sorted(modules):
            out = run("/usr/bin/python3", "-c",
                      "import %s, sys; print(getattr(%s, '__file__', '') or '')" % (module, module))
            self.assertEqual(out.returncode, 0, out.stderr)
            path = out.stdout.strip()
            if not path:  # built into the interpreter
                continue
            package = package_of(path)
            self.assertIsNotNone(package, path)
            self.assertIn(package, self.installed, "%s (%s) for import %s" % (package, path, module))

    def test_every_package_listed_has_a_reason(self):
        # A package no binary names, no program needs and no purpose explains is stale: it comes
        # with another one, or nothing uses it any more.
        reasons = set(NAMED_FOR_A_PURPOSE)
        for binary, (loaded, direct, _) in self.analyses.items():
            reasons.update(package_of(loaded[s]) for s in direct if loaded.get(s))
        # A program is the reason of the listed package nearest to it: python3 for
        # /usr/bin/python3, not a package that depends on python3.
        for program in self.program_packages:
            bringing = [l for l in self.listed if program in self.closure([l])]
            reasons.update(l for l in bringing
                           if not any(o != l and o in self.closure([l]) for o in bringing))
        self.assertEqual(sorted(set(self.listed) - reasons), [])
        self.assertEqual(len(self.listed), len(set(self.listed)), "a package is listed twice")

    def test_sandboxes_trust_the_systems_certificates(self):
        self.assertIn('"/etc/ssl/certs"', (ROOT / "services/executor/src/sandbox.cc").read_text())
        for package in NAMED_FOR_A_PURPOSE:
            self.assertIn(package, self.listed)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
