# exec(, eval(, open(, __import__ and subprocess appear only in comments and strings here.
doc = "call exec(code) or open(path) or import subprocess"
print(len(doc.split()))
