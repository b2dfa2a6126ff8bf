# contextlib.redirect_stdout's __enter__ reads getattr(sys, self._stream) on the real sys and
# keeps it in self._old_targets; _stream is a plain attribute the job sets: "modules" gave the
# real sys.modules (and __exit__ sets any sys attribute). Found by a third red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "132_redirect_stream_name"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import contextlib

r = contextlib.redirect_stdout(None)
r._stream = "mod" + "ules"
with r:
    modules = r._old_targets[0]
won(modules["os"].getpid())
