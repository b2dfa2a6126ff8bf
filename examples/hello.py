print("hello from a codeq sandbox")
