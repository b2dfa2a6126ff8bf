# json.tool (a submodule of allowed json) holds pathlib's Path for its own use; an instance's
# _flavour.pathmod is the real posixpath, and from there os, sys and the real builtins.
# Prints the marker only if the forbidden operation succeeded. Run ONLY through `codeq run`.
NAME = "166_json_tool_path_flavour"


def won(evidence):
    print("BYPASS-OK:" + NAME, evidence, flush=True)


import json.tool

os_ = json.tool.Path(".")._flavour.pathmod.os
won(("real os", os_.getpid(), "modules" in dir(os_.sys)))
