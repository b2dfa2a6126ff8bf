# item 8: help.__call__.__globals__['sys'].modules['os'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "14_help_call_globals"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


os_ = help.__call__.__globals__["sys"].modules["os"]
won(sorted(os_.listdir("/"))[:3])
