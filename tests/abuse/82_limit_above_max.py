# A job that asks for more memory than the operator's maximum (1024 MB) is refused before it
# runs, with a result saying which limit.
# expect: status=invalid
# expect: message-contains=memory_mb
# limits: memory_mb=4096
x = " " * (3 * 1024 * 1024 * 1024)
escaped("ran-with-4GB")
