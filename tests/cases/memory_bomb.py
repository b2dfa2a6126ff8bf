x = bytearray(512 * 1024 * 1024)
print(len(x))
