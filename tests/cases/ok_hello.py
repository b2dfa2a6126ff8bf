print("hello from codeq")
