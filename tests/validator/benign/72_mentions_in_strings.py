"""dangerous-looking text in comments and strings is data, not code"""
# A tutorial note: never call exec(), eval() or __import__('os').system('rm -rf /') on input.
HELP = """Forbidden in jobs: import os, subprocess.run(...), open('/etc/passwd'),
().__class__.__base__.__subclasses__(), "{0.__globals__}".format(f), breakpoint()."""
PATTERNS = ["os.system", "__import__", "__subclasses__", "exec(", "eval(", "open("]


def flag(text):
    return [p for p in PATTERNS if p in text]


print(flag(HELP))
print(len(HELP.splitlines()), HELP.count("__"))
print("{0.__class__}" + " is just text here")
