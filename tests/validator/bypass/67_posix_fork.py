# import posix; posix.fork() (os without the name os).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "67_posix_fork"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import posix

pid = posix.fork()
if pid == 0:
    posix._exit(0)
posix.waitpid(pid, 0)
won("forked a child through posix")
