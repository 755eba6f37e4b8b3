"""A broad CPython 3.11 stdlib workload: the measurement behind the allowlist.

Run it under `strace -f` to see which system calls an ordinary guest makes,
and under the seccomp filter to prove the allowlist is enough. It only does
what a guest is allowed to do (files under a temp dir, AF_UNIX sockets,
threads, child processes of this same interpreter), checks every result, and
exits 0 only when every section passed. Nothing here depends on timing.
"""

import sys
import os

SECTIONS = []


def section(fn):
    SECTIONS.append(fn)
    return fn


CHILD = [sys.executable, "-I", "-S", "-c"]


@section
def imports():
    import importlib

    names = """abc argparse array ast asyncio base64 binascii bisect bz2 calendar
    cmath codecs collections colorsys concurrent.futures configparser contextlib
    contextvars copy cProfile csv ctypes dataclasses datetime dbm decimal difflib
    dis email email.mime.text enum errno faulthandler fcntl filecmp fnmatch
    fractions functools gc getpass gettext glob graphlib grp gzip hashlib heapq
    hmac html html.parser http.client http.server importlib.metadata
    importlib.resources inspect io ipaddress itertools json locale logging
    logging.handlers lzma mailbox math mimetypes mmap multiprocessing numbers
    operator pathlib pickle pkgutil platform plistlib pprint profile pstats pwd
    queue quopri random re reprlib resource sched secrets select selectors shelve
    shlex shutil signal socket socketserver sqlite3 ssl stat statistics string
    struct subprocess sysconfig tarfile tempfile termios textwrap threading
    timeit tokenize tomllib traceback tracemalloc types typing unicodedata
    unittest urllib.parse urllib.request uuid warnings wave weakref xml.dom.minidom
    xml.etree.ElementTree zipfile zipimport zlib zoneinfo""".split()
    for name in names:
        importlib.import_module(name)


@section
def files():
    import fcntl
    import shutil
    import stat
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        p = os.path.join(d, "a.txt")
        with open(p, "w") as f:
            f.write("hello\n" * 1000)
            f.flush()
            os.fsync(f.fileno())
            os.fdatasync(f.fileno())
        os.makedirs(os.path.join(d, "sub", "deep"))
        shutil.copy2(p, os.path.join(d, "sub", "b.txt"))
        shutil.copyfile(p, os.path.join(d, "sub", "deep", "c.txt"))
        os.rename(os.path.join(d, "sub", "b.txt"), os.path.join(d, "sub", "b2.txt"))
        os.replace(os.path.join(d, "sub", "b2.txt"), os.path.join(d, "sub", "b3.txt"))
        os.link(p, os.path.join(d, "hard"))
        os.symlink(p, os.path.join(d, "soft"))
        assert os.readlink(os.path.join(d, "soft")) == p
        assert os.path.realpath(os.path.join(d, "soft")) == os.path.realpath(p)
        os.chmod(p, 0o600)
        os.utime(p, (1, 2))
        assert os.stat(p).st_mtime == 2
        assert stat.S_ISLNK(os.lstat(os.path.join(d, "soft")).st_mode)
        assert os.access(p, os.R_OK | os.W_OK)
        os.truncate(p, 10)
        assert os.path.getsize(p) == 10
        os.mkfifo(os.path.join(d, "fifo"))
        assert stat.S_ISFIFO(os.stat(os.path.join(d, "fifo")).st_mode)
        walked = sorted(f for _, _, fs in os.walk(d) for f in fs)
        assert walked == ["a.txt", "b3.txt", "c.txt", "fifo", "hard", "soft"], walked
        with os.scandir(d) as it:
            assert {e.name for e in it} >= {"a.txt", "sub"}
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
        try:
            assert os.stat("a.txt", dir_fd=dfd).st_size == 10
        finally:
            os.close(dfd)
        fd = os.open(p, os.O_RDWR)
        try:
            os.pwrite(fd, b"xy", 0)
            assert os.pread(fd, 2, 0) == b"xy"
            os.lseek(fd, 0, os.SEEK_SET)
            os.writev(fd, [b"a", b"b"])
            os.posix_fallocate(fd, 0, 4096)
            os.ftruncate(fd, 100)
            fcntl.flock(fd, fcntl.LOCK_EX)
            fcntl.flock(fd, fcntl.LOCK_UN)
            fcntl.lockf(fd, fcntl.LOCK_EX)
            fcntl.lockf(fd, fcntl.LOCK_UN)
            fl = fcntl.fcntl(fd, fcntl.F_GETFL)
            fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_APPEND)
            os.set_inheritable(fd, True)
            assert os.get_inheritable(fd)
            os.set_inheritable(fd, False)
            fd2 = os.dup(fd)
            os.dup2(fd, fd2)
            os.close(fd2)
        finally:
            os.close(fd)
        os.statvfs(d)
        os.listxattr(p)
        cwd = os.getcwd()
        os.chdir(d)
        os.chdir(cwd)
        old = os.umask(0o22)
        os.umask(old)
        with tempfile.NamedTemporaryFile() as t, tempfile.SpooledTemporaryFile(10) as s:
            t.write(b"x")
            s.write(b"y" * 100)
        shutil.rmtree(os.path.join(d, "sub"))


@section
def archives_and_compression():
    import bz2
    import gzip
    import io
    import lzma
    import tarfile
    import tempfile
    import zipfile
    import zlib

    data = os.urandom(1000) * 50
    assert zlib.decompress(zlib.compress(data)) == data
    assert bz2.decompress(bz2.compress(data)) == data
    assert lzma.decompress(lzma.compress(data)) == data
    assert gzip.decompress(gzip.compress(data)) == data
    with tempfile.TemporaryDirectory() as d:
        z = os.path.join(d, "m.zip")
        with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as zf:
            zf.writestr("zmod.py", "X = 42\n")
        sys.path.insert(0, z)
        try:
            import zmod

            assert zmod.X == 42
        finally:
            sys.path.remove(z)
        t = os.path.join(d, "t.tar.gz")
        with tarfile.open(t, "w:gz") as tf:
            info = tarfile.TarInfo("f")
            info.size = len(data)
            tf.addfile(info, io.BytesIO(data))
        with tarfile.open(t) as tf:
            tf.extractall(os.path.join(d, "out"))
        with open(os.path.join(d, "out", "f"), "rb") as f:
            assert f.read() == data


@section
def data_formats():
    import csv
    import decimal
    import hashlib
    import hmac
    import io
    import json
    import pickle
    import secrets
    import uuid
    import xml.etree.ElementTree as ET
    import datetime
    import zoneinfo

    obj = {"a": [1, 2.5, None, True], "b": "é"}
    assert json.loads(json.dumps(obj)) == obj
    assert pickle.loads(pickle.dumps(obj)) == obj
    for algo in ("md5", "sha1", "sha256", "sha512", "sha3_256", "blake2b"):
        hashlib.new(algo, b"abc").hexdigest()
    hashlib.pbkdf2_hmac("sha256", b"pw", b"salt", 1000)
    hmac.new(b"k", b"m", "sha256").digest()
    secrets.token_hex(16)
    uuid.uuid4()
    decimal.Decimal(1) / decimal.Decimal(7)
    buf = io.StringIO()
    csv.writer(buf).writerow([1, "x"])
    ET.fromstring("<a><b/></a>")
    datetime.datetime.now(zoneinfo.ZoneInfo("Europe/Paris"))


@section
def sqlite():
    import sqlite3
    import tempfile

    con = sqlite3.connect(":memory:")
    con.execute("create table t(x)")
    con.executemany("insert into t values (?)", [(i,) for i in range(100)])
    assert con.execute("select sum(x) from t").fetchone()[0] == 4950
    con.close()
    with tempfile.TemporaryDirectory() as d:
        con = sqlite3.connect(os.path.join(d, "db.sqlite"))
        con.execute("pragma journal_mode=wal")
        con.execute("create table t(x)")
        with con:
            con.execute("insert into t values (1)")
        con2 = sqlite3.connect(os.path.join(d, "db.sqlite"))
        assert con2.execute("select count(*) from t").fetchone()[0] == 1
        con2.close()
        con.close()


@section
def memory():
    import mmap
    import tempfile

    m = mmap.mmap(-1, 1 << 20)
    m[:5] = b"hello"
    m.close()
    with tempfile.TemporaryFile() as f:
        f.write(b"\0" * 8192)
        f.flush()
        m = mmap.mmap(f.fileno(), 8192)
        m[0:1] = b"x"
        m.flush()
        m.close()
    big = bytearray(64 << 20)  # large allocations go through mmap/mremap
    big.extend(b"x" * (16 << 20))
    del big
    import gc
    import tracemalloc

    tracemalloc.start()
    [object() for _ in range(10000)]
    tracemalloc.stop()
    gc.collect()


@section
def threads():
    import concurrent.futures
    import queue
    import threading

    q = queue.Queue()
    ev = threading.Event()
    lock = threading.Lock()
    cond = threading.Condition()
    counter = [0]

    def worker(i):
        with lock:
            counter[0] += 1
        q.put(i)
        ev.wait()

    ts = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for t in ts:
        t.start()
    got = sorted(q.get() for _ in ts)
    ev.set()
    for t in ts:
        t.join()
    assert got == list(range(8)) and counter[0] == 8
    with cond:
        cond.wait(0.001)
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        assert sum(ex.map(lambda x: x * x, range(100))) == 328350
    local = threading.local()
    local.x = 1
    timer = threading.Timer(0.001, ev.clear)
    timer.start()
    timer.join()


@section
def processes():
    import subprocess

    r = subprocess.run(CHILD + ["import sys; print(sys.argv[1])", "arg"],
                       capture_output=True, text=True, check=True)
    assert r.stdout == "arg\n", r
    r = subprocess.run(CHILD + ["import sys; sys.stdout.write(sys.stdin.read().upper())"],
                       input="abc", capture_output=True, text=True, check=True)
    assert r.stdout == "ABC"
    r = subprocess.run(CHILD + ["import os; print(os.getsid(0) == os.getpid())"],
                       capture_output=True, text=True, check=True, start_new_session=True)
    assert r.stdout == "True\n"
    r = subprocess.run(CHILD + ["pass"], process_group=0, check=True)
    r = subprocess.run(CHILD + ["raise SystemExit(3)"])
    assert r.returncode == 3
    p = subprocess.Popen(CHILD + ["import time; time.sleep(60)"])
    p.terminate()
    assert p.wait() != 0
    pid = os.posix_spawn(sys.executable, CHILD + ["pass"], os.environ)
    assert os.waitpid(pid, 0)[1] == 0
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 7
    # os.execve of a descriptor is fexecve(3): glibc calls execveat with
    # AT_EMPTY_PATH.
    fd = os.open(sys.executable, os.O_RDONLY)
    pid = os.fork()
    if pid == 0:
        try:
            os.execve(fd, CHILD + ["raise SystemExit(5)"], os.environ)
        finally:
            os._exit(9)
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 5, status


def _square(x):
    return x * x


@section
def multiprocessing_():
    import concurrent.futures
    import multiprocessing

    for method in ("fork", "spawn", "forkserver"):
        ctx = multiprocessing.get_context(method)
        with ctx.Pool(2) as pool:
            assert pool.map(_square, range(10)) == [x * x for x in range(10)]
        q = ctx.Queue()
        p = ctx.Process(target=q.put, args=(method,))
        p.start()
        assert q.get() == method
        p.join()
        assert p.exitcode == 0
        a, b = ctx.Pipe()
        a.send([1, 2])
        assert b.recv() == [1, 2]
    with concurrent.futures.ProcessPoolExecutor(2) as ex:
        assert list(ex.map(_square, range(5))) == [0, 1, 4, 9, 16]


@section
def signals():
    import faulthandler
    import signal
    import threading

    got = []
    signal.signal(signal.SIGUSR1, lambda s, f: got.append(s))
    os.kill(os.getpid(), signal.SIGUSR1)
    signal.raise_signal(signal.SIGUSR1)
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR1)
    assert got == [signal.SIGUSR1] * 3, got
    # Thread-directed: a process-directed signal may be delivered to a thread
    # that is still exiting (joined threads linger in the kernel briefly)
    # and does not block it, which kills the process.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR2})
    signal.pthread_kill(threading.get_ident(), signal.SIGUSR2)
    assert signal.SIGUSR2 in signal.sigpending()
    assert signal.sigwait({signal.SIGUSR2}) == signal.SIGUSR2
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR2})
    fired = []
    signal.signal(signal.SIGALRM, lambda s, f: fired.append(s))
    signal.setitimer(signal.ITIMER_REAL, 0.01)
    while not fired:
        signal.pause()
    signal.alarm(0)
    faulthandler.enable()
    faulthandler.disable()


@section
def time_and_random():
    import random
    import time

    time.time()
    time.monotonic()
    time.perf_counter()
    time.process_time()
    time.thread_time()
    time.clock_getres(time.CLOCK_MONOTONIC)
    time.sleep(0.001)
    time.localtime()
    os.urandom(32)
    random.SystemRandom().random()
    random.seed()
    random.random()


@section
def system_info():
    import getpass
    import platform
    import pwd
    import resource

    os.uname()
    platform.platform()
    os.cpu_count()
    os.sched_setaffinity(0, os.sched_getaffinity(0))
    os.getpriority(os.PRIO_PROCESS, 0)
    os.nice(0)
    policy = os.sched_getscheduler(0)
    os.sched_getparam(0)
    os.sched_get_priority_min(policy), os.sched_get_priority_max(policy)
    os.sched_rr_get_interval(0)
    os.sched_setscheduler(0, policy, os.sched_param(0))
    os.sched_setparam(0, os.sched_param(0))
    os.getloadavg()
    os.times()
    resource.getrusage(resource.RUSAGE_SELF)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(soft, 256), hard))
    os.getpid(), os.getppid(), os.getuid(), os.geteuid(), os.getgid(), os.getegid()
    os.getgroups(), os.getpgrp(), os.getsid(0)
    try:
        pwd.getpwuid(os.getuid())
    except KeyError:  # the sandbox's uid need not be in /etc/passwd
        pass
    os.environ.setdefault("USER", "guest")
    getpass.getuser()
    os.isatty(0)
    try:
        os.get_terminal_size(1)
    except OSError:
        pass
    import locale

    locale.setlocale(locale.LC_ALL, "")
    locale.setlocale(locale.LC_ALL, "C")


@section
def unix_sockets():
    import select
    import selectors
    import socket
    import tempfile
    import threading

    a, b = socket.socketpair()
    a.sendall(b"ping")
    assert b.recv(4) == b"ping"
    r, _, _ = select.select([b], [], [], 0)
    assert r == []
    a.sendall(b"x")
    p = select.poll()
    p.register(b, select.POLLIN)
    assert p.poll(10000)
    b.recv(1)
    ep = select.epoll()
    ep.register(b.fileno(), select.EPOLLIN)
    a.sendall(b"y")
    assert ep.poll(10)
    ep.close()
    sel = selectors.DefaultSelector()
    sel.register(b, selectors.EVENT_READ)
    assert sel.select(10)
    b.recv(1)
    sel.close()
    b.settimeout(5)
    b.setblocking(False)
    b.setblocking(True)
    rfd, wfd = os.pipe()
    socket.send_fds(a, [b"fd"], [rfd])
    msg, fds, _, _ = socket.recv_fds(b, 10, 1)
    assert msg == b"fd" and len(fds) == 1
    for fd in fds + [rfd, wfd]:
        os.close(fd)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65536)
    a.getsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF)
    a.shutdown(socket.SHUT_WR)
    a.close()
    b.close()
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "s")
        srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        srv.bind(path)
        srv.listen()

        def serve():
            c, _ = srv.accept()
            with c:
                c.sendall(c.recv(100)[::-1])

        t = threading.Thread(target=serve)
        t.start()
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        c.connect(path)
        c.getsockname(), c.getpeername()
        c.sendall(b"abc")
        assert c.recv(100) == b"cba"
        c.close()
        t.join()
        srv.close()
        dpath = os.path.join(d, "dg")
        dg = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        dg.bind(dpath)
        out = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        out.sendto(b"dgram", dpath)
        assert dg.recvfrom(100)[0] == b"dgram"
        dg.close()
        out.close()


@section
def http_over_unix():
    import http.client
    import http.server
    import socket
    import socketserver
    import tempfile
    import threading

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers["Content-Length"]))
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body.upper())

        def log_message(self, *args):
            pass

    class UnixHTTPConnection(http.client.HTTPConnection):
        def __init__(self, path):
            super().__init__("localhost")
            self.path = path

        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.sock.connect(self.path)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "http.sock")
        with socketserver.ThreadingUnixStreamServer(path, Handler) as srv:
            t = threading.Thread(target=srv.serve_forever)
            t.start()
            try:
                conn = UnixHTTPConnection(path)
                for _ in range(3):  # one kept-alive connection
                    conn.request("POST", "/v1/calls", body=b"hello")
                    resp = conn.getresponse()
                    assert resp.status == 200 and resp.read() == b"HELLO"
                conn.close()
            finally:
                srv.shutdown()
                t.join()


@section
def asyncio_():
    import asyncio
    import socket
    import tempfile

    async def main(d):
        async def echo(reader, writer):
            writer.write((await reader.readline()).upper())
            await writer.drain()
            writer.close()

        path = os.path.join(d, "a.sock")
        server = await asyncio.start_unix_server(echo, path)
        async with server:
            reader, writer = await asyncio.open_unix_connection(path)
            writer.write(b"hi\n")
            assert await reader.readline() == b"HI\n"
            writer.close()
            await writer.wait_closed()
        a, b = socket.socketpair()
        r, w = await asyncio.open_connection(sock=a)
        b.sendall(b"x\n")
        assert await r.readline() == b"x\n"
        w.close()
        b.close()
        loop = asyncio.get_running_loop()
        assert await loop.run_in_executor(None, sum, [1, 2]) == 3
        proc = await asyncio.create_subprocess_exec(
            *CHILD, "print(6*7)", stdout=asyncio.subprocess.PIPE)
        out, _ = await proc.communicate()
        assert out == b"42\n" and proc.returncode == 0
        results = await asyncio.gather(*(asyncio.sleep(0, i) for i in range(10)))
        assert results == list(range(10))
        await asyncio.wait_for(asyncio.sleep(0), 5)

    with tempfile.TemporaryDirectory() as d:
        asyncio.run(main(d))


@section
def ctypes_():
    import ctypes

    libc = ctypes.CDLL(None)
    assert libc.getpid() == os.getpid()
    arr = (ctypes.c_int * 5)(5, 1, 4, 2, 3)
    cmp = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_int))
    libc.qsort(arr, 5, ctypes.sizeof(ctypes.c_int), cmp(lambda a, b: a[0] - b[0]))
    assert list(arr) == [1, 2, 3, 4, 5]


@section
def stdlib_misc():
    import logging
    import logging.handlers
    import tempfile
    import unittest
    import ssl

    ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    with tempfile.TemporaryDirectory() as d:
        log = logging.getLogger("workload")
        h = logging.handlers.RotatingFileHandler(os.path.join(d, "log"), maxBytes=100, backupCount=2)
        log.addHandler(h)
        for i in range(20):
            log.warning("line %d", i)
        h.close()
        log.removeHandler(h)

    class T(unittest.TestCase):
        def test(self):
            self.assertEqual(1 + 1, 2)

    res = unittest.TextTestRunner(stream=open(os.devnull, "w")).run(
        unittest.defaultTestLoader.loadTestsFromTestCase(T))
    assert res.wasSuccessful()


if __name__ == "__main__":
    import traceback

    FAILURES = []
    for fn in SECTIONS:
        try:
            fn()
        except BaseException as e:  # report every section, not just the first
            FAILURES.append(fn.__name__)
            print(f"FAIL {fn.__name__}: {e!r}", file=sys.stderr)
            traceback.print_exc()
    if FAILURES:
        print("workload failed:", " ".join(FAILURES), file=sys.stderr)
        sys.exit(1)
    print("workload ok")
