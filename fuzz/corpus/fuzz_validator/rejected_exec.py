x = "print('hi')"
exec(x)
