"""Each student's kernel in its own operating-system sandbox (bubblewrap).

``bwrap`` (Debian's ``bubblewrap``, the sandbox of Flatpak) starts the
kernel with new namespaces of every kind: it sees a read-only view of the
system (``/usr`` and a few files of ``/etc``) and of the Python
environment, its submission's folder as the only writable place, a private
``/tmp`` and HOME (memory file systems of limited size), and nothing else:
no repository, course, gradebook, other student or other kernel. It has
no network (a new network namespace holds only its own loopback); it talks
to the grader over ZeroMQ's IPC transport, through socket files in a
folder of its own that is bound into the sandbox. Its processes live in a
new PID namespace that ends with the kernel (and with the grader, if the
grader dies first). A seccomp filter lets it start threads but no
processes (no ``fork``, no programs), and resource limits cap its
address space, the size of a file it writes and its CPU time.

This module runs outside the sandbox: ``python -I sandbox.py CONFIG
CONNECTION_FILE`` is the kernel command the grader's Jupyter client
starts; it sets the limits, writes the seccomp program to a pipe and
becomes ``bwrap``. Where ``bwrap`` is missing or does not work (macOS,
some containers), :func:`check` says so and grading refuses to start:
there is no weaker fallback that would claim a boundary it does not have.
"""

import json
import os
import resource
import shutil
import struct
import subprocess
import sys
from pathlib import Path

MISSING = (
    "bubblewrap (bwrap) is missing or does not work here, and the grader "
    "runs each student's code only inside its sandbox. Install it (Debian, "
    "Ubuntu: apt-get install bubblewrap; Fedora: dnf install bubblewrap) or, "
    "where there is none (macOS, Windows), run the grader inside a "
    "container, one per grading run (see teaching.md, \"Where bubblewrap is "
    "missing\").")
# A few files of /etc that Python, numpy and matplotlib read; nothing else.
ETC = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "localtime", "fonts",
       "nsswitch.conf", "passwd", "group", "mime.types")
SYSTEM = ("/usr", "/bin", "/lib", "/lib32", "/lib64", "/libx32", "/sbin")

# seccomp: AUDIT_ARCH values and syscall numbers (fork, vfork, clone, clone3).
_ARCH = {"x86_64": (0xC000003E, 57, 58, 56, 435),
         "aarch64": (0xC00000B7, None, None, 220, 435)}
_CLONE_THREAD = 0x00010000


def bwrap():
    """The path of ``bwrap``, or None."""
    return shutil.which("bwrap")


def check():
    """Raise RuntimeError (with the plain message above) unless bwrap works."""
    program = bwrap()
    if program is None:
        raise RuntimeError(MISSING)
    try:
        result = subprocess.run(
            [program, "--unshare-all", "--unshare-user", "--disable-userns",
             "--die-with-parent", "--uid", "1000", "--gid", "1000",
             *_system_binds(), "--proc", "/proc", "--dev", "/dev",
             "--size", str(2**20), "--tmpfs", "/tmp", "true"],
            capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        raise RuntimeError(f"{MISSING} ({err})") from None
    if result.returncode != 0:
        raise RuntimeError(f"{MISSING} (bwrap said: "
                           f"{result.stderr.strip()[:300]})")


def _system_binds():
    args = []
    for path in SYSTEM:
        p = Path(path)
        if p.is_symlink():
            args += ["--symlink", os.readlink(p), path]
        elif p.is_dir():
            args += ["--ro-bind", path, path]
    for name in ETC:
        p = Path("/etc") / name
        if p.exists():
            args += ["--ro-bind", str(p), str(p)]
    return args


def python_paths(exclude=()):
    """The folders of the Python environment that the kernel needs, read-only.

    The interpreter's prefixes and every folder on ``sys.path`` except
    those inside ``exclude`` (the repository: its editable install is left
    out, the kernel imports the handout's copies in its own folder).
    """
    exclude = [Path(p).resolve() for p in exclude]
    prefixes = [Path(sys.prefix), Path(sys.base_prefix)]
    for prefix in prefixes:
        if any(e == prefix.resolve() or prefix.resolve() in e.parents
               for e in exclude):
            raise RuntimeError(f"the Python environment {prefix} contains "
                               "the repository: use a virtual environment")
    exclude += [Path.cwd().resolve(), Path(sys.argv[0] or ".").resolve().parent]
    found = []
    for entry in [*prefixes, *sys.path]:
        if not entry:
            continue
        path = Path(entry)
        if not path.is_dir():
            continue
        real = path.resolve()
        if path not in prefixes and any(real == e or e in real.parents
                                        for e in exclude):
            continue
        if real.parts[1:2] in (("usr",), ("bin",), ("lib",), ("lib64",)):
            continue
        for p in {path.absolute(), real}:
            if p not in found:
                found.append(p)
    # keep only the outermost folders
    return [p for p in found
            if not any(q != p and q in p.parents for q in found)]


def seccomp_program():
    """A classic BPF program: threads yes, processes no (None if unknown arch)."""
    arch = _ARCH.get(os.uname().machine)
    if arch is None:
        return None
    audit, fork, vfork, clone, clone3 = arch

    def op(code, k, jt=0, jf=0):
        return struct.pack("HBBI", code, jt, jf, k)

    ld, jeq, jset, jge, ret = 0x20, 0x15, 0x45, 0x35, 0x06
    allow, enosys = 0x7FFF0000, 0x00050000 | 38
    eagain = 0x00050000 | 11
    prog = [op(ld, 4), op(jeq, audit, 1, 0), op(ret, enosys),  # other ABI
            op(ld, 0), op(jge, 0x40000000, 0, 1), op(ret, enosys)]  # x32
    for number in (fork, vfork):
        if number is not None:
            prog += [op(jeq, number, 0, 1), op(ret, eagain)]
    prog += [op(jeq, clone3, 0, 1), op(ret, enosys),  # glibc falls back
             op(jeq, clone, 0, 4), op(ld, 16),  # clone: its flags
             op(jset, _CLONE_THREAD, 0, 1), op(ret, allow), op(ret, eagain),
             op(ret, allow)]
    return b"".join(prog)


FOLDER = "/submission"


def config(handout, conn_dir, exclude, *, memory_mb=4096, file_mb=256,
           cpu_seconds=3600, tmp_mb=256):
    """The sandbox of one kernel, as the JSON the launcher reads.

    ``handout``: the files and folders the kernel's folder holds
    (read-only: ``posenc_core.py``, ``posenc_lab/``); ``conn_dir``: the
    folder of its connection file and sockets; ``exclude``: folders of
    ``sys.path`` never to show (the repository).
    """
    return {"handout": [str(Path(p).resolve()) for p in handout],
            "conn_dir": str(Path(conn_dir).resolve()),
            "python": [str(p) for p in python_paths(exclude)],
            "executable": sys.executable, "memory_mb": int(memory_mb),
            "file_mb": int(file_mb), "cpu_seconds": int(cpu_seconds),
            "tmp_mb": int(tmp_mb)}


def command(spec, connection_file, seccomp_fd=None):
    """The bwrap command line for ``spec`` (see :func:`config`)."""
    tmp = str(int(spec["tmp_mb"]) * 2**20)
    args = [bwrap() or "bwrap", "--unshare-all", "--unshare-user",
            "--disable-userns",
            "--die-with-parent", "--new-session",
            "--uid", "1000", "--gid", "1000", "--hostname", "sandbox",
            *_system_binds()]
    for path in spec["python"]:
        args += ["--ro-bind", path, path]
    args += ["--proc", "/proc", "--dev", "/dev",
             "--size", tmp, "--tmpfs", "/tmp",
             "--size", tmp, "--tmpfs", "/home/student",
             "--size", tmp, "--tmpfs", FOLDER]
    for path in spec["handout"]:
        args += ["--ro-bind", path, f"{FOLDER}/{Path(path).name}"]
    args += ["--bind", spec["conn_dir"], spec["conn_dir"],
             "--chdir", FOLDER, "--clearenv"]
    env = {"HOME": "/home/student", "PATH": "/usr/bin:/bin",
           "MPLBACKEND": "Agg", "MPLCONFIGDIR": "/home/student/.matplotlib",
           "PYTHONNOUSERSITE": "1", "PYTHONDONTWRITEBYTECODE": "1",
           "NBGRADER_EXECUTION": "autograde", "TMPDIR": "/tmp",
           "LANG": "C.UTF-8", "OMP_NUM_THREADS": "1",
           "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    for key, value in env.items():
        args += ["--setenv", key, value]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    return args + ["--", spec["executable"], "-m", "ipykernel_launcher",
                   "-f", str(connection_file)]


def _limit(kind, value):
    soft, hard = resource.getrlimit(kind)
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))


def launch(config_path, connection_file):
    """Become bwrap running the kernel (the kernel command of the grader)."""
    spec = json.loads(Path(config_path).read_text(encoding="utf-8"))
    _limit(resource.RLIMIT_AS, spec["memory_mb"] * 2**20)
    _limit(resource.RLIMIT_FSIZE, spec["file_mb"] * 2**20)
    _limit(resource.RLIMIT_CPU, spec["cpu_seconds"])
    _limit(resource.RLIMIT_CORE, 0)
    program = seccomp_program()
    fd = None
    if program is not None:
        read, write = os.pipe()
        os.write(write, program)
        os.close(write)
        os.set_inheritable(read, True)
        fd = read
    args = command(spec, connection_file, fd)
    # bwrap's own process (PID 1 in the sandbox, whose /proc/1/environ the
    # kernel can read) gets no environment of the grader's
    os.execve(args[0], args, {"PATH": "/usr/bin:/bin"})


if __name__ == "__main__":
    launch(sys.argv[1], sys.argv[2])
