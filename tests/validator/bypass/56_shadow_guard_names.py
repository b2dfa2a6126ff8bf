# item 36: rebinding __builtins__ and guard-like names to the real objects, then exec.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "56_shadow_guard_names"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


_getattr_ = getattr
_getitem_ = lambda o, k: o[k]  # noqa: E731
__builtins__ = abs.__self__


def run(__import__=abs.__self__.__import__, _guard=None, __codeq_guard__=None):
    return __import__("os")


won(sorted(run().listdir("/"))[:3])
