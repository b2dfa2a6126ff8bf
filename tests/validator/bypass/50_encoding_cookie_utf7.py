# -*- coding: utf_7 -*-
# item 31: a utf_7 cookie hides a newline and `import os` inside a comment (+-AAo- is a newline); the file is plain ASCII.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "50_encoding_cookie_utf7"


def won(evidence):
    print("BYPASS-OK:" +- NAME, evidence, flush=True)


x = 1  # +AAo-import os+AAo-won(sorted(os.listdir(+ACI-/+ACI-))+AFs-:3+AF0-)
