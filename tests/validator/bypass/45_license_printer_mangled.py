# item 28: site._Printer name-mangled attributes read /etc/passwd.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "45_license_printer_mangled"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


license._Printer__filenames = ["/etc/passwd"]
license._Printer__lines = None
license._Printer__setup()
lines = license._Printer__lines
if any(line.startswith("root:") for line in lines):
    won("read /etc/passwd")
