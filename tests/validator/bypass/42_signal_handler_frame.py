# item 25: a signal handler receives the interrupted frame.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "42_signal_handler_frame"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import signal


def handler(sig, frame):
    imp = frame.f_builtins["__import__"]
    won(sorted(imp("os").listdir("/"))[:3])


signal.signal(signal.SIGUSR1, handler)
signal.raise_signal(signal.SIGUSR1)
