"""The development broker (`codeq broker`, librdkafka's mock cluster) as the README's quick
start uses it: a worker and `codeq submit` against it, no real broker needed.

The mock cluster names as its controller a broker it does not have and answers no
DescribeConfigs, which librdkafka sends to the controller: the worker's read of its topics'
max.message.bytes waited out its 10 s timeout at every start, and `codeq submit`'s read of the
jobs topic's 5 s, and a timed-out read was not even reported. Both must now see at once that no
answer can come, say so, and go on with the producer's limit; a job must be answered.
`codeq topics` finds the topics there. The Python client with a reply topic of its own: its
admin requests (describe, create, delete) go to the controller too, and it raised an empty
TimeoutError; it now uses the topic the mock makes when first asked about. A client whose
brokers do not answer raises CodeqError, not confluent_kafka's KafkaException.
Timings are printed, not asserted (bench/ holds speed claims); every wait is bounded."""
import json
import pathlib
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import BIN, SRC, WORKER_ISOLATION_ARGS, Failures  # noqa: E402

sys.path.insert(0, str(SRC / "clients" / "python"))
from codeq_client import Client, CodeqError  # noqa: E402

NAME = "dev_broker"
NOTE = "which is none of its brokers"
F = Failures()
tmp = pathlib.Path(tempfile.mkdtemp(prefix="codeq-dev-broker-"))
broker = worker = None
try:
    broker = subprocess.Popen([BIN, "broker"], stdout=subprocess.PIPE,
                              stderr=open(tmp / "broker.log", "w"), text=True)
    bootstrap = broker.stdout.readline().strip()
    F.check(bootstrap.startswith("127.0.0.1:"), f"no bootstrap address from codeq broker: {bootstrap!r}")
    log = tmp / "worker.log"
    t0 = time.monotonic()
    worker = subprocess.Popen([BIN, "worker", "-b", bootstrap, "-g", "dev", "--worker-id", "d1",
                               *WORKER_ISOLATION_ARGS], stdout=open(log, "w"),
                              stderr=subprocess.STDOUT)
    started = None
    while time.monotonic() - t0 < 60 and worker.poll() is None:
        if '"event":"worker_started"' in log.read_text(errors="replace"):
            started = time.monotonic() - t0
            break
        time.sleep(0.05)
    F.check(started is not None, f"the worker did not start within 60 s (exit {worker.poll()})")
    text = log.read_text(errors="replace")
    F.check(NOTE in text, "the worker did not say why it could not read its topics' configuration")
    # codeq topics on it: the topics it made at its start are there, nothing to create (it
    # used to wait 30 s for a controller the mock names but does not have, and fail).
    p = subprocess.run([BIN, "topics", "-b", bootstrap], capture_output=True, text=True,
                       timeout=60)
    F.check(p.returncode == 0 and p.stderr.count("left as it is") == 4,
            f"topics on the development broker: rc {p.returncode} {p.stderr[-400:]!r}")
    prog = tmp / "answer.py"
    prog.write_text("print(41 + 1)\n")
    t1 = time.monotonic()
    p = subprocess.run([BIN, "submit", "-b", bootstrap, "--timeout", "60", str(prog)],
                       capture_output=True, text=True, timeout=120)
    took = time.monotonic() - t1
    results = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
    F.check(p.returncode == 0 and len(results) == 1, f"submit exit {p.returncode}: {p.stderr[-400:]}")
    F.check(results and results[0]["status"] == "ok" and results[0]["stdout"] == "42\n",
            f"the job's result: {results}")
    # A misspelt jobs topic is refused before anything is sent, here too: the mock creates any
    # topic a metadata request names, whatever the client's allow.auto.create.topics, and submit
    # asked for its jobs topic by name (the topic was made, the job sent, no answer came).
    p = subprocess.run([BIN, "submit", "-b", bootstrap, "--timeout", "10", "--jobs-topic",
                        "codeq.jbos", str(prog)], capture_output=True, text=True, timeout=60)
    listed = subprocess.run(["kcat", "-b", bootstrap, "-L"], capture_output=True, text=True,
                            timeout=30).stdout
    names = re.findall(r'topic "([^"]+)"', listed)
    F.check(p.returncode == 1 and "jobs topic codeq.jbos: Broker: Unknown topic" in p.stderr
            and "codeq.jbos" not in names and "codeq.jobs" in names,
            f"submit to a misspelt jobs topic on the development broker: rc {p.returncode} "
            f"{p.stderr[-300:]!r}, topics {names}")
    print(f"{NAME}: worker started in {started or 0:.2f} s; submit answered in {took:.2f} s",
          flush=True)
    t1 = time.monotonic()
    try:
        with Client(bootstrap, reply_topic=True, start_timeout=20) as c:
            r = c.run("print(6 * 7)", timeout=60)
            F.check(r.status == "ok" and r.stdout == "42\n", f"client, reply topic: {r}")
        took = time.monotonic() - t1
        F.check(took < 40, f"client with a reply topic took {took:.1f} s (admin waits?)")
        print(f"{NAME}: Python client with its own reply topic answered and closed in "
              f"{took:.2f} s", flush=True)
    except Exception as e:  # noqa: BLE001 - the failure is the finding
        F.check(False, f"client with a reply topic on the development broker: {e!r}")
    try:
        Client("127.0.0.1:1", start_timeout=2)
        F.check(False, "a client whose brokers do not answer started")
    except CodeqError as e:
        F.check("codeq: brokers 127.0.0.1:1:" in str(e), f"client, no broker: {e}")
    except Exception as e:  # noqa: BLE001
        F.check(False, f"client, no broker: {type(e).__name__} {e!r}, not CodeqError")
    worker.terminate()
    F.check(worker.wait(timeout=60) == 0, "the worker did not stop cleanly")
finally:
    for proc in (worker, broker):
        if proc and proc.poll() is None:
            proc.kill()
            proc.wait()
F.finish(NAME)
