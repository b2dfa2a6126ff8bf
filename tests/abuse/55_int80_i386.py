# The i386 syscall table through `int 0x80` from a 64-bit process: a non-native architecture
# the filter must kill (it would otherwise bypass a filter written for x86_64 numbers).
# expect: status=seccomp_violation
import mmap
ct = imp("ctypes")
# mov eax, 20 (i386 getpid); int 0x80; ret
code = bytes([0xB8, 20, 0, 0, 0, 0xCD, 0x80, 0xC3])
m = mmap.mmap(-1, 4096, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
m.write(code)
addr = ct.addressof(ct.c_char.from_buffer(m))
r = ct.CFUNCTYPE(ct.c_int)(addr)()
print("int80 getpid returned", r)
if r == os.getpid():
    escaped("int80-syscall")
