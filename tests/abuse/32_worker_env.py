# The job's environment is built from scratch: nothing of the worker's (the runner set
# CODEQ_ABUSE_CANARY and KAFKA_SASL_PASSWORD in codeq's environment; the job must not see them,
# nor anything named like a credential).
# expect: status in ok,error
print("env keys:", sorted(os.environ))
for k in os.environ:
    if k in ("CODEQ_ABUSE_CANARY", "KAFKA_SASL_PASSWORD") or any(
            w in k.upper() for w in ("KAFKA", "SASL", "PASSWORD", "SECRET", "TOKEN", "AWS", "CODEQ", "SSH")):
        escaped(f"worker-env-{k}")
blocked("worker-env", f"{len(os.environ)} variables, none of the worker's")
