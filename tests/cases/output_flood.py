while True:
    print("abcdefghij" * 10)
