# An uncaught exception: status "error", exit code 1, the traceback in stderr.
data = {"a": 1}
print(data["b"])
