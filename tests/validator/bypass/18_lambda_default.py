# item 10: lambda default arguments run at definition time.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "18_lambda_default"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


f = lambda x=__import__("os").listdir("/"): x  # noqa: E731
won(sorted(f())[:3])
