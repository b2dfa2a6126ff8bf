#!/bin/sh
# Entrypoint of the codeq image (Dockerfile): make the container's own cgroup writable, then
# exec codeq with the container's arguments. See docs/containers.md.
#
# Unprivileged containers get their own cgroup read-only: on cgroup v1 every controller is a
# read-only bind mount of the container's cgroup directory under /sys/fs/cgroup/<controller>;
# on cgroup v2 (private cgroup namespace) /sys/fs/cgroup is a read-only cgroup2 mount of it.
# The sandbox creates one cgroup per job below it, so those mounts are remounted read-write,
# per mount point (bind remount: the host's cgroup mounts are not touched). That takes
# CAP_SYS_ADMIN, which the sandbox needs anyway. Job cgroups then live inside the container's
# cgroup: its memory limit covers its jobs and they go away with the container.
# Nothing is done when the mounts are writable already (privileged, or a writable bind mount),
# and a failed remount is left to codeq's own start-up check, which names the missing layer.
# CODEQ_CGROUP_REMOUNT=0 skips this.
if [ "${CODEQ_CGROUP_REMOUNT:-1}" = 1 ]; then
  if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
    [ -w /sys/fs/cgroup ] || mount -o remount,bind,rw /sys/fs/cgroup 2>/dev/null || true
  else
    for c in memory pids cpu cpuacct cpu,cpuacct blkio; do
      d=/sys/fs/cgroup/$c
      [ -d "$d" ] && [ ! -L "$d" ] && [ ! -w "$d" ] || continue
      mount -o remount,bind,rw "$d" 2>/dev/null || true
    done
  fi
fi
exec /usr/local/bin/codeq "$@"
