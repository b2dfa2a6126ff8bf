# item 19: queue.threading._os.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "34_queue_threading_os"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import queue

won(sorted(queue.threading._os.listdir("/"))[:3])
