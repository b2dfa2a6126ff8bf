def divide(a, b):
    return a / b

print("before")
divide(1, 0)
