# attribute chain through allowed modules: re.enum.sys.modules['os'].
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "78_enum_sys_chain"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import re

won(sorted(re.enum.sys.modules["os"].listdir("/"))[:3])
