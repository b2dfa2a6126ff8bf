# Prepares artifacts that would exfiltrate host files if collected: symlinks to /etc/shadow and
# /etc/passwd, a hard link to shadow, a hard link to one of its own files (both names skipped:
# a file with two links may be the host's), a FIFO (would block the
# collector). The hard link to shadow must be impossible; only the plain file is collected;
# nothing carries shadow's content. (Device nodes: 73_mknod.)
# expect: status=ok
# expect: result-not-contains=root:$
# expect: artifacts-include=plain.txt
# expect: artifacts-exclude=out.txt,hard.txt,fifo.txt,passwd-link,hard-own.txt,own.txt,hard-passwd.txt,hard-python3,etcdir/passwd,etcdir/group,rootdir/etc/passwd
with open_("plain.txt", "w") as f:
    f.write("plain artifact\n")
os.symlink("/etc/shadow", "out.txt")
os.symlink("/etc/passwd", "passwd-link")
os.mkfifo("fifo.txt")
os.symlink("/etc", "etcdir")  # a directory symlink: the collector must not walk through it
os.symlink("/", "rootdir")
for target, link in (("/etc/shadow", "hard.txt"), ("/etc/passwd", "hard-passwd.txt"),
                     ("/usr/bin/python3", "hard-python3")):
    try:
        os.link(target, link)
        escaped(f"hardlink-to-{target}")
    except OSError as e:
        blocked("hardlink", f"{target} {ename(e.errno)}")
with open_("own.txt", "w") as f:
    f.write("linked twice\n")
try:
    os.link("own.txt", "hard-own.txt")
except OSError as e:
    blocked("hardlink-own", ename(e.errno))
