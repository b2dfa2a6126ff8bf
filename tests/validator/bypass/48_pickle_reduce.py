# item 30: pickle __reduce__ calls eval on load.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "48_pickle_reduce"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import pickle


class P:
    def __reduce__(self):
        return (eval, ("sorted(__imp" + "ort__('os').listdir('/'))[:3]",))


won(pickle.loads(pickle.dumps(P())))
