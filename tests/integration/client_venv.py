"""`pip install ./clients/python` works in a fresh virtual environment, offline (issue 15).

The venv sees the system's packages (--system-site-packages: Debian's python3-confluent-kafka
is the client's dependency), pip builds with Debian's setuptools (--no-build-isolation) and
is never allowed an index (PIP_NO_INDEX), so nothing is fetched. Then, from outside the
source tree, codeq_client imports from the venv's site-packages, and its dependency from the
system. pip builds in the source tree (build/, *.egg-info): the test installs from a copy,
so it never writes into the checkout."""
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import SRC, Failures  # noqa: E402

NAME = "client_venv"
F = Failures()
t0 = time.monotonic()
env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PYTHONPATH="")
with tempfile.TemporaryDirectory(prefix="codeq-client-venv-") as tmp:
    venv = pathlib.Path(tmp) / "venv"
    src = pathlib.Path(tmp) / "codeq-client"
    shutil.copytree(SRC / "clients" / "python", src,
                    ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    p = subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", str(venv)],
                       capture_output=True, text=True, timeout=120, env=env)
    F.check(p.returncode == 0, f"python3 -m venv: {p.stderr[-800:]} (Debian's python3-venv installed?)")
    p = subprocess.run([str(venv / "bin" / "pip"), "install", "--no-build-isolation", "--no-deps",
                        str(src)], capture_output=True, text=True,
                       timeout=300, env=env, cwd=tmp)
    F.check(p.returncode == 0 and "Successfully installed codeq-client" in p.stdout,
            f"pip install: exit {p.returncode}\n{p.stdout[-800:]}\n{p.stderr[-800:]}")
    probe = ("import codeq_client, confluent_kafka, json; "
             "print(json.dumps([codeq_client.__file__, confluent_kafka.__file__, "
             "codeq_client.__version__, sorted(codeq_client.__all__)]))")
    p = subprocess.run([str(venv / "bin" / "python"), "-c", probe], capture_output=True,
                       text=True, timeout=60, env=env, cwd=tmp)
    F.check(p.returncode == 0, f"import from the venv: {p.stderr[-800:]}")
    if p.returncode == 0:
        import json
        mod, dep, version, names = json.loads(p.stdout)
        F.check(mod.startswith(str(venv)) and "site-packages" in mod,
                f"codeq_client came from {mod}, not the venv's site-packages")
        F.check(dep.startswith("/usr/lib/python3/dist-packages"), f"confluent_kafka from {dep}")
        F.check(version == "0.1.0" and {"Client", "AsyncClient", "Result", "JobTimeout"} <= set(names),
                f"version {version}, names {names}")
    p = subprocess.run([str(venv / "bin" / "pip"), "show", "codeq-client"], capture_output=True,
                       text=True, timeout=60, env=env, cwd=tmp)
    F.check(p.returncode == 0 and "Requires: confluent-kafka" in p.stdout,
            f"pip show: {p.stdout[-400:]} {p.stderr[-400:]}")
print(f"{NAME}: venv, install and import in {time.monotonic() - t0:.1f} s", flush=True)
F.finish(NAME)
