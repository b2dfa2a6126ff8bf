# Memory a job would hold that no memory cgroup charges to it. Huge pages of the host's
# hugetlb pool are charged to no memory cgroup (cgroup v1 counts them
# in a hugetlb controller codeq does not use; v2 only with memory_hugetlb_accounting): a job
# mapping them would hold host memory beyond its memory limit, could take the whole pool from
# the host's users of it, and would tell other jobs how much is left. Asking for them must get
# EPERM from the filter (not ENOMEM from an empty pool, which says nothing on a host that has
# one): mmap MAP_HUGETLB, memfd_create MFD_HUGETLB, shmget SHM_HUGETLB. Transparent huge pages,
# ordinary charged memory, keep working. Names of anonymous mappings (prctl PR_SET_VMA, where
# the kernel has CONFIG_ANON_VMA_NAME): an uncharged kernel allocation per mapping named; EPERM
# from the filter, not EINVAL from a kernel without them.
# expect: status=ok
# expect: stdout-contains=BLOCKED:mmap-hugetlb EPERM
# expect: stdout-contains=BLOCKED:memfd-hugetlb EPERM
# expect: stdout-contains=BLOCKED:shmget-hugetlb EPERM
# expect: stdout-contains=thp-ok
# expect: stdout-contains=BLOCKED:vma-name EPERM
import mmap

ct = imp("ctypes")
MAP_HUGETLB, MFD_HUGETLB, SHM_HUGETLB, IPC_CREAT, IPC_PRIVATE = 0x40000, 4, 0o4000, 0o1000, 0
MAP_PRIVATE, MAP_ANONYMOUS, PROT_RW = 0x02, 0x20, 0x3
HUGE = 2 << 20


def verdict(what, r, err):
    if err is None:
        escaped(f"{what}-granted")
    elif err == "EPERM":
        blocked(what, err)
    else:
        print(f"NOT-THE-FILTER:{what} {err}", flush=True)


for size in (HUGE, HUGE | (30 << 26)):  # a 2 MB page; a size and page-size bits as well
    r, err = sc(9, 0, HUGE, PROT_RW, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | (size & ~HUGE), -1, 0)
    if err is None:
        sc(11, r, HUGE)
    verdict("mmap-hugetlb", r, err)
r, err = sc(319, ct.c_char_p(b"huge"), MFD_HUGETLB)
if err is None:
    os.close(r)
verdict("memfd-hugetlb", r, err)
r, err = sc(29, IPC_PRIVATE, HUGE, IPC_CREAT | SHM_HUGETLB | 0o600)
verdict("shmget-hugetlb", r, err)

m = mmap.mmap(-1, 4 * HUGE)
try:
    m.madvise(14)  # MADV_HUGEPAGE
except OSError as e:
    print("madvise-hugepage", ename(e.errno))
m[::4096] = b"x" * (4 * HUGE // 4096)
m.close()
r, err = sc(29, IPC_PRIVATE, HUGE, IPC_CREAT | 0o600)
print("thp-ok" if err is None else f"plain-shmget-failed {err}", flush=True)

m = mmap.mmap(-1, 4096)
addr = ct.addressof(ct.c_char.from_buffer(m))
r, err = sc(157, 0x53564D41, 0, addr, 4096, ct.c_char_p(b"codeq-abuse"))  # PR_SET_VMA_ANON_NAME
verdict("vma-name", r, err)
