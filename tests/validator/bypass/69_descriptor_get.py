# a descriptor's __get__ performs the forbidden call on a plain attribute read.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "69_descriptor_get"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


class D:
    def __get__(self, obj, owner):
        return getattr(abs.__self__, "__imp" + "ort__")("os")


class H:
    os_ = D()


won(sorted(H().os_.listdir("/"))[:3])
