# item 19/20: statistics.sys.modules['os'] (allowed module re-exports sys).
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "35_statistics_sys_modules"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import statistics

won(sorted(statistics.sys.modules["os"].listdir("/"))[:3])
