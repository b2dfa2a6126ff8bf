# copy.copy calls a user __reduce_ex__ whose callable is eval.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "80_copy_reduce_ex"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy


class R:
    def __reduce_ex__(self, proto):
        return (eval, ("sorted(__imp" + "ort__('os').listdir('/'))[:3]",))


won(copy.copy(R()))
