"""A minimal agent loop on codeq: generate code, run it, feed the error back, try again.

The "LLM" here is canned (no network): its first attempt has a bug, and given the error
message it returns a fixed program, as a model asked to repair its code would. Swap
`fake_llm` for a real model call; the loop around it stays the same.

    python3 examples/agent_loop.py -b 127.0.0.1:9092     # against a running `codeq worker`

Exit 0 when an attempt ends ok, 1 when every attempt failed."""
import argparse
import sys
from pathlib import Path

try:
    import codeq_client
except ImportError:  # run from a checkout without `pip install ./clients/python`
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "clients" / "python"))
    import codeq_client
from codeq_client import Client, JobRejected

TASK = "Read whitespace-separated numbers from stdin and print their mean."
NUMBERS = "3 1 4 1 5 9 2 6\n"

BUGGY = """import statistics, sys
values = sys.stdin.read().split()
print(statistics.mean(values))
"""
FIXED = """import statistics, sys
values = [float(v) for v in sys.stdin.read().split()]
print(statistics.mean(values))
"""


def fake_llm(task: str, feedback: list) -> str:
    """Stands in for a model: a first draft, then a repair that reads the last error."""
    if feedback and "TypeError" in feedback[-1]:
        return FIXED
    return BUGGY


def solve(client: Client, attempts: int, wait: float) -> bool:
    feedback = []
    for n in range(1, attempts + 1):
        code = fake_llm(TASK, feedback)
        try:
            r = client.run(code, stdin=NUMBERS, limits={"wall_ms": 5000}, timeout=wait,
                           metadata={"agent": "agent_loop", "attempt": n})
        except JobRejected as e:  # the policy refused the program: tell the model why
            feedback.append("rejected by the sandbox policy:\n" + "\n".join(map(str, e.findings)))
            print(f"attempt {n}: rejected\n{feedback[-1]}", flush=True)
            continue
        if r.ok:
            print(f"attempt {n}: ok in {r.usage.wall_ms} ms: {r.stdout.strip()}", flush=True)
            return True
        feedback.append(r.error_text())
        last = r.stderr.strip().splitlines()[-1] if r.stderr.strip() else r.message
        print(f"attempt {n}: {r.status}, feeding back:\n{last}", flush=True)
    return False


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-b", "--bootstrap", default="127.0.0.1:9092", help="Kafka brokers")
    ap.add_argument("--jobs-topic", default="codeq.jobs")
    ap.add_argument("--results-topic", default="codeq.results")
    ap.add_argument("--attempts", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each result")
    a = ap.parse_args()
    with Client(a.bootstrap, jobs_topic=a.jobs_topic, results_topic=a.results_topic) as c:
        return 0 if solve(c, a.attempts, a.timeout) else 1


if __name__ == "__main__":
    sys.exit(main())
