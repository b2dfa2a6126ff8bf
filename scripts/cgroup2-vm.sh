#!/bin/bash
# cgroup2-vm.sh — run one command as root inside a throw-away QEMU guest that runs
# Debian's stock kernel with a *pure cgroup v2* hierarchy (only cgroup2 is mounted), the
# hierarchy of most hosts codeq runs on (Debian 12, Ubuntu 22.04+, current Kubernetes nodes),
# for the tests in tests/cgroup2/ (this development VM mounts cgroup v1).
# Software emulation (TCG) where there is no usable KVM: a guest process runs ~40x slower.
#
# The guest's / is the host's / shared read-only over virtio-9p; /proc, /sys, /dev,
# /run and /tmp are fresh guest mounts; /sys/fs/cgroup is cgroup2 (nsdelegate) with every
# controller enabled in the root's cgroup.subtree_control.  Host directories given with
# -s are shared read-write at the same path (default: the host's /tmp).  The command's
# stdout/stderr stream back over two virtio-serial ports; the script exits with the
# command's exit status.
#
#   cgroup2-vm.sh [options] -- CMD [ARGS...]
#     -s DIR     share host DIR read-write at the same path in the guest (repeatable;
#                default: /tmp.  -s none = no read-write share)
#     -g PATH    start CMD in cgroup /sys/fs/cgroup/PATH (created; all controllers are
#                enabled in each ancestor), e.g. -g ci.slice/job.service. Default: root cgroup
#     -e VAR=VAL set an environment variable for CMD (repeatable)
#     -m MEM     guest RAM (default 2G)      -c N   vCPUs (default 2)
#     -t SECS    wall-clock limit for the whole VM (default 600; exit 124 when hit)
#     -M TYPE    machine: microvm (default, fastest) or pc
#     -a ACCEL   tcg | kvm | auto (default auto: kvm only if /dev/kvm AND the CPU shows
#                vmx/svm; a PVM-backed /dev/kvm like Firecracker's cannot boot this kernel)
#     -v         copy the guest's kernel console log to stderr afterwards
#     -k         keep the run directory (control files, console.log)
#     --setup    only install/prepare everything, then exit
# Exit status: CMD's status; 124 = timeout; 125 = VM failed before CMD reported a status.
# A guest that has not reached stage 2 within $VMPROBE_BOOT_SECS (default 120; a boot takes
# 5-10 s) is killed and booted once more, within the same -t. So is a guest that stalls later
# (its 9p shares leave a read unanswered for $VMPROBE_STALL_SECS, default 120, or its
# watchdog writes nothing to the console for $VMPROBE_SILENT_SECS, default 180; watch.sh below),
# and CMD then runs again from its start: once. With $CODEQ_VM_STALL_LOG set, the report of
# such a stall is appended there.
# Everything lives under $CODEQ_VM_DIR (default /tmp/codeq-vm; the kernel is cached there).  Needs root (9p with
# security_model=none must be able to read every host file).
set -u -o pipefail
D=${CODEQ_VM_DIR:-/tmp/codeq-vm}
C=$D/cache
shares=() envs=() cgpath=/ mem=2G cpus=2 tmo=600 machine=microvm accel=auto verbose=0 keep=0 setup_only=0
die() { echo "codeq: vm: $*" >&2; exit 125; }
usage() { sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 125; }
while [ $# -gt 0 ]; do
  case $1 in
    -s) shares+=("$2"); shift 2;;
    -g) cgpath=$2; shift 2;;
    -e) envs+=("$2"); shift 2;;
    -m) mem=$2; shift 2;;
    -c) cpus=$2; shift 2;;
    -t) tmo=$2; shift 2;;
    -M) machine=$2; shift 2;;
    -a) accel=$2; shift 2;;
    -v) verbose=1; shift;;
    -k) keep=1; shift;;
    --setup) setup_only=1; shift;;
    --) shift; break;;
    -h|--help) usage;;
    *) break;;
  esac
done
[ $# -gt 0 ] || [ $setup_only = 1 ] || usage
[ ${#shares[@]} -gt 0 ] || shares=(/tmp)
[ "${shares[0]}" = none ] && shares=()

# ---------------------------------------------------------------- one-time setup (cached)
setup() {
  mkdir -p "$C" || die "cannot create $C"
  [ "$(id -u)" = 0 ] || die "must run as root"
  if ! command -v qemu-system-x86_64 >/dev/null || [ ! -x /bin/busybox ] ||
     ldd /bin/busybox >/dev/null 2>&1; then   # missing, or not the static build
    echo "codeq: vm: installing qemu-system-x86 busybox-static" >&2
    local inst="apt-get install -y --no-install-recommends qemu-system-x86 busybox-static"
    DEBIAN_FRONTEND=noninteractive $inst >&2 ||
      { apt-get update >&2 && DEBIAN_FRONTEND=noninteractive $inst >&2; } || die "apt-get install failed"
  fi
  if [ ! -f "$C/kernel.ok" ] || [ ! -f "$C/initramfs.img" ]; then
    local pkg=${VMPROBE_KPKG:-$(apt-cache depends linux-image-amd64 | awk '/Depends: linux-image-/{print $2; exit}')}
    [ -n "$pkg" ] || die "cannot resolve the linux-image-amd64 package"
    echo "codeq: vm: fetching $pkg (extracted under $C, nothing is installed)" >&2
    rm -rf "$C/deb" "$C/kroot" "$C/kernel.ok"; mkdir -p "$C/deb" "$C/kroot"
    (cd "$C/deb" && { apt-get -o APT::Sandbox::User=root download "$pkg" >&2 ||
       { apt-get update >&2 && apt-get -o APT::Sandbox::User=root download "$pkg" >&2; }; }) ||
      die "apt-get download $pkg failed"
    dpkg-deb -x "$C"/deb/"$pkg"_*.deb "$C/kroot" || die "dpkg-deb -x failed"
    local md=$C/kroot/lib/modules; [ -d "$md" ] || md=$C/kroot/usr/lib/modules
    local kver; kver=$(ls "$md" | head -1)
    cp "$C/kroot/boot/vmlinuz-$kver" "$C/vmlinuz"; cp "$C/kroot/boot/config-$kver" "$C/config"
    # uncompressed ELF vmlinux boots via PVH and skips ~6 s of XZ decompression under TCG
    local off; off=$(LC_ALL=C grep -obUaP '\xfd7zXZ\x00' "$C/vmlinuz" | head -1 | cut -d: -f1)
    rm -f "$C/vmlinux"
    [ -n "$off" ] && tail -c +$((off + 1)) "$C/vmlinuz" | xz -dc > "$C/vmlinux" 2>/dev/null
    [ "$(head -c 4 "$C/vmlinux" 2>/dev/null)" = $'\x7fELF' ] || rm -f "$C/vmlinux"
    build_initramfs "$md/$kver/kernel"
    rm -rf "$C/deb" "$C/kroot" "$C/initramfs-src"
    echo "$pkg $kver" > "$C/kernel.ok"
  fi
}

build_initramfs() {
  local km=$1 s=$C/initramfs-src m
  rm -rf "$s"; mkdir -p "$s"/{bin,dev,proc,sys,newroot,modules}
  cp /bin/busybox "$s/bin/busybox"
  mknod -m 600 "$s/dev/console" c 5 1
  for m in drivers/virtio/virtio_ring drivers/virtio/virtio drivers/virtio/virtio_pci_modern_dev \
           drivers/virtio/virtio_pci_legacy_dev drivers/virtio/virtio_pci drivers/virtio/virtio_mmio \
           fs/netfs/netfs fs/fscache/fscache net/9p/9pnet net/9p/9pnet_virtio fs/9p/9p \
           drivers/char/virtio_console fs/overlayfs/overlay; do
    cp "$km/$m.ko" "$s/modules/" || die "module $m.ko missing in $km"
  done
  cat > "$s/init" <<'EOF'
#!/bin/busybox sh
# stage 1 (initramfs, busybox): virtio + 9p modules, host root read-only, API mounts, switch_root
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs devtmpfs /dev
fail() { echo "vmprobe-stage1: $*" >/dev/console; echo o >/proc/sysrq-trigger; sleep 30; }
for m in virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci virtio_mmio \
         netfs fscache 9pnet 9pnet_virtio 9p virtio_console overlay; do
  insmod /modules/$m.ko 2>/dev/null || echo "vmprobe-stage1: insmod $m failed" >/dev/console
done
O9=trans=virtio,version=9p2000.L,msize=512000
mkdir -p /ctl
mount -t 9p -o $O9,cache=none vmctl /ctl || fail "cannot mount the control share"
mount -t 9p -o $O9,cache=loose,ro hostroot /newroot || fail "cannot mount the host root"
N=/newroot
mount -t tmpfs -o mode=755,nosuid,nodev tmpfs $N/run
mkdir -p $N/run/vmprobe && mount --move /ctl $N/run/vmprobe && mkfifo $N/run/.vmprobe-block
mount -t proc -o nosuid,nodev,noexec proc $N/proc
mount -t sysfs -o nosuid,nodev,noexec sysfs $N/sys
mount -t devtmpfs -o nosuid devtmpfs $N/dev
mkdir -p $N/dev/pts $N/dev/shm $N/dev/mqueue
mount -t devpts -o nosuid,noexec,gid=5,mode=620,ptmxmode=666 devpts $N/dev/pts
mount -t tmpfs -o nosuid,nodev tmpfs $N/dev/shm
mount -t mqueue mqueue $N/dev/mqueue 2>/dev/null
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs $N/tmp
while read -r tag path; do
  [ -n "$tag" ] || continue
  mkdir -p "$N$path" 2>/dev/null
  mount -t 9p -o $O9,cache=mmap $tag "$N$path" || fail "cannot mount share $tag at $path"
done < $N/run/vmprobe/shares
ip link set lo up 2>/dev/null; hostname vmprobe
umount /proc /sys /dev 2>/dev/null
exec switch_root $N /bin/sh /run/vmprobe/stage2.sh
EOF
  chmod 755 "$s/init"
  (cd "$s" && find . | busybox cpio -o -H newc 2>/dev/null | gzip -1) > "$C/initramfs.img.tmp" &&
    mv "$C/initramfs.img.tmp" "$C/initramfs.img" || die "initramfs build failed"
}

setup
[ $setup_only = 1 ] && { echo "codeq: vm: ready: $(cat "$C/kernel.ok")" >&2; exit 0; }

# ---------------------------------------------------------------- per-run control directory
mkdir -p "$D/runs"
R=$(mktemp -d "$D/runs/run.XXXXXX") || die "mktemp failed"
cleanup() { [ $keep = 1 ] && echo "codeq: vm: run dir kept: $R" >&2 || rm -rf "$R"; }
trap cleanup EXIT
q() { local a=${1//\'/\'\\\'\'}; printf "'%s'" "$a"; }   # POSIX-sh single quoting

: > "$R/shares"
i=0
for s in "${shares[@]}"; do
  s=$(realpath -e "$s") || die "share $s does not exist"
  [ -d "$s" ] || die "share $s is not a directory"
  echo "share$i $s" >> "$R/shares"; i=$((i + 1))
done

{ # the command, run by stage 2 as: sh cmd.sh
  for e in "${envs[@]}"; do printf 'export %s\n' "$(q "$e")"; done
  printf 'cd %s 2>/dev/null || cd /\n' "$(q "$PWD")"
  printf 'exec'; for a in "$@"; do printf ' %s' "$(q "$a")"; done; printf '\n'
} > "$R/cmd.sh"

cat > "$R/stage2.sh" <<EOF
# stage 2: PID 1 on the host's read-only root (host /bin/sh)
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb LANG=C.UTF-8
ctl=/run/vmprobe
mount -t cgroup2 -o nsdelegate,memory_recursiveprot cgroup2 /sys/fs/cgroup
mkdir -p /sys/fs/cgroup/init.scope && echo \$\$ > /sys/fs/cgroup/init.scope/cgroup.procs
en() { echo "\$(sed 's/\([^ ]*\)/+\1/g' \$1/cgroup.controllers)" > \$1/cgroup.subtree_control; }
cg=/sys/fs/cgroup; en \$cg; rel=$(q "${cgpath#/}")
while [ -n "\$rel" ]; do    # all controllers on in every ancestor of the target cgroup
  cg=\$cg/\${rel%%/*}; mkdir -p \$cg
  case \$rel in */*) rel=\${rel#*/}; en \$cg;; *) rel=;; esac
done
out=/dev/console err=/dev/console
for p in /sys/class/virtio-ports/*; do
  case \$(cat \$p/name 2>/dev/null) in out) out=/dev/\${p##*/};; err) err=/dev/\${p##*/};; esac
done
echo "vmprobe: stage2 at uptime \$(cut -d' ' -f1 /proc/uptime), running in cgroup /\${cg#/sys/fs/cgroup/}" >/dev/console
# The watchdog (watch.sh) runs from tmpfs with the static busybox and writes to the serial
# console only, so it still speaks when 9p or the virtio-serial ports stall.
mkdir -p /run/vmprobe-bin && cp /bin/busybox \$ctl/watch.sh /run/vmprobe-bin/ &&
  /run/vmprobe-bin/busybox --install -s /run/vmprobe-bin && read -r dump_at stall_s < \$ctl/dump_at &&
  { PATH=/run/vmprobe-bin /run/vmprobe-bin/busybox sh /run/vmprobe-bin/watch.sh \$dump_at \$stall_s </dev/null >/dev/console 2>&1 & } ||
  echo "vmprobe: no watchdog" >/dev/console    # then the host does not take silence for a stall
sh -c 'echo \$\$ > "\$1/cgroup.procs" && exec sh "\$2"' sh "\$cg" \$ctl/cmd.sh </dev/null >\$out 2>\$err
rc=\$?
echo \$rc > \$ctl/rc
echo "vmprobe: exit status \$rc at uptime \$(cut -d' ' -f1 /proc/uptime)" >/dev/console
sync
echo o > /proc/sysrq-trigger
read x < /run/.vmprobe-block
EOF

# The guest's watchdog (busybox sh, started by stage 2). Three times the CI has seen a guest go
# silent: once in its early boot, twice a suite (abuse_concurrency) that printed nothing for
# its whole limit, not even guest.sh's own dump a minute before it. Whatever stalled (9p, the
# virtio-serial ports or the guest's kernel) stalled that dump too: it runs from the host's
# root over 9p and writes to a virtio port. This one needs neither: every 10 s it reads once
# from each 9p share (the control share is cache=none, a directory listing always asks QEMU)
# and writes a line to the serial console. A read that gets no answer in 120 s, or the VM's limit
# near (guest uptime $1), makes it write every task's state, wait channel and kernel stack and
# the kernel's memory and blocked-task reports; a stall ends with "vmprobe: stalled", on which
# the host ends the guest (boot(), below); $VMPROBE_STALL_SECS sets the 120 s.
cat > "$R/watch.sh" <<'EOF'
dump_at=$1 stall_s=$2 seq=0 pending=0 started=0 ok=/run/vmprobe-probe
renice -n -10 $$ > /dev/null    # its lines must not wait behind a loaded guest's suite
probe() {    # in the background: a task stuck on 9p ignores even SIGKILL until QEMU answers
  cat /run/vmprobe/dump_at && ls / && while read -r tag path; do ls "$path" || exit; done < /run/vmprobe/shares
}
dump() {
  echo "vmprobe: $1: every task, then the kernel's reports"
  # Shell builtins where they do: a fork costs tens of ms in an emulated guest.
  for d in /proc/[0-9]*; do    # every user task, and the kernel's threads in D
    p=${d#/proc/} cmd=
    for t in $d/task/[0-9]*; do
      st= comm= wchan=
      read -r st 2>/dev/null < $t/stat || continue
      set -- ${st##*) }; st=$1    # state, parent, ..., then the flags: PF_KTHREAD is 0x200000
      [ $(( ${7:-0} & 2097152 )) = 0 ] || [ "$st" = D ] || continue
      # the command line takes the task's mmap lock, which a task stuck in a page fault on
      # 9p may hold
      [ $(( ${7:-0} & 2097152 )) != 0 ] || [ -n "$cmd" ] ||
        cmd=$(timeout -s KILL 2 cat $d/cmdline 2>/dev/null | tr '\0' ' ' | cut -c1-160)
      read -r comm 2>/dev/null < $t/comm; read -r wchan 2>/dev/null < $t/wchan
      echo "--- task ${t##*/} of pid $p (parent $2): $comm, state $st, wchan $wchan: $cmd"
      while read -r l; do echo "$l"; done 2>/dev/null < $t/stack
    done
  done
  grep -E '^(MemTotal|MemFree|MemAvailable|Cached|Dirty|Writeback|Shmem):' /proc/meminfo
  echo 7 > /proc/sys/kernel/printk; echo w > /proc/sysrq-trigger; echo m > /proc/sysrq-trigger
  echo 4 > /proc/sys/kernel/printk
  echo "vmprobe: watchdog dump ends"
}
while :; do
  sleep 10
  up=$(cut -d. -f1 /proc/uptime)
  if [ $pending = 1 ]; then
    if [ "$(cat $ok 2>/dev/null)" = $seq ]; then
      pending=0
    elif [ $((up - started)) -ge "$stall_s" ]; then
      dump "a read from 9p begun at uptime $started s got no answer in $stall_s s"
      echo "vmprobe: stalled"
      exit 0
    fi
  fi
  if [ $pending = 0 ]; then
    seq=$((seq + 1)) started=$up pending=1
    ( probe > /dev/null 2>&1 && echo $seq > $ok ) &
  fi
  if [ -n "$dump_at" ] && [ "$up" -ge "$dump_at" ]; then
    dump "watchdog at uptime $up s, near the VM's limit"; dump_at=
  fi
  echo "vmprobe: alive at uptime $up s, load $(cut -d' ' -f1-3 /proc/loadavg)," \
    "$(ls -d /proc/[0-9]*/task/[0-9]* | wc -l) tasks ($(cat /proc/[0-9]*/task/[0-9]*/stat 2>/dev/null |
    sed 's/.*) //' | cut -d' ' -f1 | grep -c D) in D), MemAvailable $(awk '/^MemAvailable/{print $2}' /proc/meminfo) kB"
done
EOF

# ---------------------------------------------------------------- accelerator and machine
if [ "$accel" = auto ]; then
  accel=tcg
  [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && accel=kvm
fi
if [ "$accel" = kvm ]; then acc=(-accel kvm -cpu host); else acc=(-accel tcg,thread=multi -cpu max); fi
khz=$(awk -F: '/^cpu MHz/{printf "%d", $2 * 1000; exit}' /proc/cpuinfo)
kapp="console=ttyS0 quiet panic=-1 rdinit=/init cgroup_no_v1=all tsc=reliable tsc_early_khz=${khz:-2000000} ${VMPROBE_APPEND:-}"
kernel=$C/vmlinux; [ -f "$kernel" ] || kernel=$C/vmlinuz
case $machine in
  microvm) mach=(-M microvm,pit=on,pic=on,rtc=on); bus=device;;
  pc|q35)  mach=(-M "$machine"); bus=pci;;
  *) die "unknown machine $machine";;
esac
dev=()
fs9p() { dev+=(-fsdev "local,id=fs$1,path=${2//,/,,},security_model=none,multidevs=remap$3"
               -device "virtio-9p-$bus,fsdev=fs$1,mount_tag=$1"); }
fs9p hostroot / ,readonly=on; fs9p vmctl "$R" ""
while read -r tag path; do fs9p "$tag" "$path" ""; done < "$R/shares"

# One boot of the guest, bounded by the time left of -t; qemu's status, or 99 when the guest
# did not reach stage 2 (its "vmprobe: stage2" console line) within $boot_tmo seconds. Under
# software emulation a boot takes 5-10 s here, but one has been seen to hang in the kernel's
# early boot, before any of CMD ran (CI, 2026-12-02: no console line after "PCI: Fatal" for
# 900 s): such a guest is killed and booted once more.
boot_tmo=${VMPROBE_BOOT_SECS:-120}
stall_s=${VMPROBE_STALL_SECS:-120}   # a 9p read unanswered this long is a stall (watch.sh)
# a console silent this long is a frozen guest: the watchdog writes every 10 s, its dump a while
silent_max=${VMPROBE_SILENT_SECS:-$(( stall_s + 60 ))}
host_dump() {
  local p t
  for p in "$@"; do
    for t in /proc/$p/task/*; do
      echo "--- host thread ${t##*/} of $p ($(cat $t/comm 2>/dev/null)), state" \
        "$(sed 's/.*) //' $t/stat 2>/dev/null | cut -d' ' -f1), wchan $(cat $t/wchan 2>/dev/null):"
      cat $t/stack 2>/dev/null
    done
  done
}
boot() {
  local left=$(( deadline - $(date +%s) )) q waited=0
  [ $left -gt 0 ] || return 124
  rm -f "$R/out.fifo" "$R/err.fifo" "$R/rc" "$R/host-dump"; : > "$R/console.log"
  # the watchdog's: when to dump (guest uptime), and how long a 9p read may go unanswered
  echo "$(( left > 80 ? left - 40 : left / 2 )) $stall_s" > "$R/dump_at"
  mkfifo "$R/out.fifo" "$R/err.fifo"
  cat "$R/out.fifo" & catout=$!
  cat "$R/err.fifo" >&2 & caterr=$!
  timeout -k 5 "$left" qemu-system-x86_64 "${acc[@]}" "${mach[@]}" -smp "$cpus" -m "$mem" \
    -nodefaults -no-user-config -display none -no-reboot \
    -kernel "$kernel" -initrd "$C/initramfs.img" -append "$kapp" \
    -serial "file:$R/console.log" "${dev[@]}" \
    -device virtio-serial-$bus \
    -chardev file,id=out,path="${R//,/,,}/out.fifo" -device virtserialport,chardev=out,name=out \
    -chardev file,id=err,path="${R//,/,,}/err.fifo" -device virtserialport,chardev=err,name=err \
    </dev/null >"$R/qemu.log" 2>&1 &
  q=$!
  while [ $waited -lt "$boot_tmo" ] && kill -0 $q 2>/dev/null &&
        ! grep -q '^vmprobe: stage2' "$R/console.log"; do
    sleep 1; waited=$((waited + 1))
  done
  local hung=0 beats=0 beat_t now n
  if kill -0 $q 2>/dev/null && ! grep -q '^vmprobe: stage2' "$R/console.log"; then
    hung=1; kill $q
  fi
  # Then the watchdog's word (watch.sh): a guest that says it stalled, or whose console stops, is
  # ended at once. Just before the limit, and at such an end, the host's side is kept too: what
  # each of QEMU's threads and the two readers of the guest's output wait on.
  beat_t=$(date +%s)
  while [ $hung = 0 ] && kill -0 $q 2>/dev/null; do
    # A guest whose watchdog writes is not frozen. Only its lines count: a guest kernel with a
    # CPU stuck and its timers dead still prints a soft-lockup report every ~30 s, which kept
    # such a guest "alive" until the VM's limit (cgroup2_units, CI, 2026-12-05).
    now=$(date +%s) n=$(grep -c '^vmprobe: ' "$R/console.log")
    [ "$n" = "$beats" ] || beats=$n beat_t=$now
    if grep -q '^vmprobe: stalled' "$R/console.log" ||
       { [ $(( now - beat_t )) -ge $silent_max ] && ! grep -q '^vmprobe: no watchdog' "$R/console.log"; }; then
      hung=2
    fi
    if [ $hung = 2 ] || { [ ! -e "$R/host-dump" ] && [ "$now" -ge $(( deadline - 8 )) ]; }; then
      host_dump "$(pgrep -P $q)" $catout $caterr > "$R/host-dump" 2>&1
    fi
    [ $hung = 2 ] && { kill $q; break; }
    sleep 1
  done
  wait $q; local rc=$?
  # let the readers finish (also unblocks them if qemu never opened the fifos)
  exec 8<>"$R/out.fifo" 9<>"$R/err.fifo"; exec 8>&- 9>&-
  wait $catout $caterr 2>/dev/null
  [ $hung = 1 ] && return 99
  [ $hung = 2 ] && return 98
  return $rc
}
# What the console and the host showed of a guest that stalled (boot returned 98).
stall_report() {
  if grep -q '^vmprobe: stalled' "$R/console.log"; then
    echo "codeq: vm: the guest's 9p shares stopped answering; its watchdog's report:"
    sed -n '/^vmprobe: a read from 9p/,$p' "$R/console.log" | head -1500
  else
    echo "codeq: vm: the guest's watchdog wrote nothing for ${silent_max}s (its kernel stopped); console tail:"
    tail -30 "$R/console.log"
  fi
  echo "codeq: vm: QEMU's threads and the output readers on the host, then:"
  cat "$R/host-dump" 2>/dev/null
}
deadline=$(( $(date +%s) + tmo ))
boot; qrc=$?
if [ $qrc = 99 ] || [ $qrc = 98 ]; then
  if [ $qrc = 99 ]; then
    echo "codeq: vm: the guest did not reach stage 2 within ${boot_tmo}s (boot hung); its console:" >&2
    tail -20 "$R/console.log" >&2
  else
    stall_report >&2
    # kept for the end of the test run too (scripts/test.sh), since a passing test's output is not shown
    [ -n "${CODEQ_VM_STALL_LOG:-}" ] &&
      { echo "=== $(date -u +%FT%TZ) stalled, ran again: $*"; stall_report; } >> "$CODEQ_VM_STALL_LOG"
  fi
  # A stall says nothing of CMD: the probe and the lines come from the watchdog, on 9p shares
  # and a console that nothing of CMD uses. CMD runs again from its start on a fresh guest.
  echo "codeq: vm: booting it once more$([ $qrc = 98 ] && echo ", and running the command again from its start")" >&2
  boot; qrc=$?
fi

if [ $verbose = 1 ]; then
  echo "----- guest console ($accel, $machine) -----" >&2; cat "$R/console.log" >&2
fi
if [ -s "$R/rc" ]; then exit "$(cat "$R/rc")"; fi
[ $qrc = 99 ] && { echo "codeq: vm: the guest did not reach stage 2 on the second boot" >&2; exit 125; }
[ $qrc = 98 ] && { stall_report >&2; echo "codeq: vm: the guest stalled on the second boot too" >&2; exit 125; }
if [ $qrc = 124 ]; then
  echo "codeq: vm: timed out after ${tmo}s; console tail:" >&2
  if grep -q '^vmprobe: watchdog at uptime' "$R/console.log"; then
    grep '^vmprobe: alive' "$R/console.log" | tail -3 >&2
    sed -n '/^vmprobe: watchdog at uptime/,$p' "$R/console.log" | head -1500 >&2
  else
    tail -20 "$R/console.log" >&2
  fi
  echo "codeq: vm: QEMU's threads and the output readers on the host, 8 s before the limit:" >&2
  cat "$R/host-dump" >&2 2>/dev/null
  exit 124
fi
echo "codeq: vm: VM ended without a status (qemu rc=$qrc); qemu log and console tail:" >&2
cat "$R/qemu.log" >&2; tail -40 "$R/console.log" >&2
exit 125
