# item 33: mathematical italic letters normalize to __import__.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "53_nfkc_math_italic_import"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


m = __𝘪𝘮𝘱𝘰𝘳𝘵__("os")
won(sorted(m.listdir("/"))[:3])
