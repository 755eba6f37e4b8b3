# The machine's memory through sysconf: natively glibc's page size and
# sysinfo(2)'s total and free memory in pages; under wazero wasi-libc
# answered WebAssembly's 64 KiB page and negative page counts, so the
# usual reading of the machine's memory was negative.
# python/wasi/_apysup_host.c asks the host (internal/sandbox/wazero/hostinfo.go).
import os

page = os.sysconf("SC_PAGE_SIZE")
phys = os.sysconf("SC_PHYS_PAGES")
avail = os.sysconf("SC_AVPHYS_PAGES")
print("page size", page, os.sysconf("SC_PAGESIZE"), os.sysconf_names["SC_PAGESIZE"] == os.sysconf_names["SC_PAGE_SIZE"])
print("physical pages", phys)
print("memory", page * phys, "bytes:", round(page * phys / 2**30, 1), "GiB")
print("available pages within it", 0 < avail <= phys)
