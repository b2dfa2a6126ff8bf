
def won(vars):
            break
