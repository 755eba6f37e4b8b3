# The machine's memory through sysconf: natively glibc's page size and
# sysinfo(2)'s total and free memory in pages; under wazero wasi-libc
# answered WebAssembly's 64 KiB page and negative page counts, so the
# usual reading of the machine's memory was negative.
# python/wasi/_apysup_host.c asks the host (internal/sandbox/wazero/hostinfo.go).
#
# Then every other name, as glibc answers it: wasi-libc answered -1 for
# many of glibc's limits, musl's constants for others and EINVAL for the
# message queues', and 40 names were missing. Six come from the process's
# rlimits and the kernel (the host's sysconf_limits: the open files are the
# run's limit); four describe the C data model and differ by design
# (world_sizes.py). And pathconf's answers glibc gives for every file.
import os

page = os.sysconf("SC_PAGE_SIZE")
phys = os.sysconf("SC_PHYS_PAGES")
avail = os.sysconf("SC_AVPHYS_PAGES")
print("page size", page, os.sysconf("SC_PAGESIZE"), os.sysconf_names["SC_PAGESIZE"] == os.sysconf_names["SC_PAGE_SIZE"])
print("physical pages", phys)
print("memory", page * phys, "bytes:", round(page * phys / 2**30, 1), "GiB")
print("available pages within it", 0 < avail <= phys)

DATA_MODEL = {"SC_LONG_BIT", "SC_UINT_MAX", "SC_XBS5_ILP32_OFFBIG", "SC_XBS5_LP64_OFF64"}
print("names", len(os.sysconf_names))
for name in sorted(os.sysconf_names):
    if name in DATA_MODEL or name == "SC_AVPHYS_PAGES":
        continue
    try:
        value = os.sysconf(name)
    except OSError as e:
        value = "OSError %s" % e.errno
    print(name, value)
print("open files limit is the run's", os.sysconf("SC_OPEN_MAX"))
for path in ("/tmp", "/workspace", "/"):
    print(path, [(name, os.pathconf(path, name)) for name in ("PC_PIPE_BUF", "PC_SYNC_IO", "PC_REC_INCR_XFER_SIZE", "PC_REC_MAX_XFER_SIZE", "PC_NAME_MAX", "PC_PATH_MAX")])
