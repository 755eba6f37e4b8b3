"""x86_64 only: a 32-bit system call (int 0x80) must not get past the filter.

The i386 table numbers calls differently, so a filter that forgot to check
the architecture would let unshare(CLONE_NEWUSER) through as i386 call 310.
Under the apysup policy the thread is killed with SIGSYS; without a filter
this prints the call's result.
"""

import ctypes
import mmap

code = bytes(
    [0x53]  # push rbx (callee-saved)
    + [0xB8, 0x36, 0x01, 0x00, 0x00]  # mov eax, 310 (i386 unshare)
    + [0xBB, 0x00, 0x00, 0x00, 0x10]  # mov ebx, CLONE_NEWUSER
    + [0xCD, 0x80]  # int 0x80
    + [0x5B]  # pop rbx
    + [0xC3]  # ret
)
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
addr = ctypes.addressof(ctypes.c_char.from_buffer(page))
result = ctypes.CFUNCTYPE(ctypes.c_int)(addr)()
print("int 0x80 returned", result)
