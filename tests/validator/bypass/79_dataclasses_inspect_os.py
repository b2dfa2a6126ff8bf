# dataclasses imports inspect, which holds os.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "79_dataclasses_inspect_os"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import dataclasses

won(sorted(dataclasses.inspect.os.listdir("/"))[:3])
