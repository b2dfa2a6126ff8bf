"""Where `codeq worker` takes its settings from (docs/operations.md): flags > CODEQ_* environment >
--config file > defaults, librdkafka properties passed through (-X, CODEQ_KAFKA_*, kafka.* in
the file), secrets read from files and masked, bad values refused at start naming their source.
Uses --print-config, which exits before touching Kafka; no broker needed."""
import os
import pathlib
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from codeq_test import BIN, Failures  # noqa: E402

F = Failures()
TMP = pathlib.Path(tempfile.mkdtemp(prefix="codeq-worker-config-"))
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("CODEQ_")}


def worker(*args, env=None):
    e = dict(CLEAN_ENV, **(env or {}))
    return subprocess.run([BIN, "worker", *args], capture_output=True, text=True, env=e,
                          timeout=60)


def settings(p):
    """{name: (value, source)} from --print-config's `name=value  # source` lines."""
    out = {}
    for line in p.stdout.splitlines():
        if line.startswith("#") or "  # " not in line:
            continue
        nv, src = line.split("  # ", 1)
        name, value = nv.split("=", 1)
        out[name] = (value, src)
    return out


conf = TMP / "worker.conf"
conf.write_text("# a comment\n\nslots = 3\ngroup=from-file\ngrace-ms = 1234\n"
                "kafka.client.rack = rack-file\nkafka.sasl.username = alice\n")
secret = TMP / "password"
secret.write_text("hunter2-from-file\n")

# Precedence: each source alone, then stacked.
p = worker("--print-config")
s = settings(p)
F.check(p.returncode == 0 and s.get("slots", ("", ""))[1] == "default",
        f"defaults: {p.returncode} {s.get('slots')} {p.stderr}")
s = settings(worker("--config", str(conf), "--print-config"))
F.check(s.get("slots") == ("3", f"{conf} line 3"), f"file: {s.get('slots')}")
F.check(s.get("group") == ("from-file", f"{conf} line 4"), f"file: {s.get('group')}")
s = settings(worker("--print-config", env={"CODEQ_CONFIG": str(conf), "CODEQ_SLOTS": "5"}))
F.check(s.get("slots") == ("5", "CODEQ_SLOTS"), f"env over file: {s.get('slots')}")
F.check(s.get("grace-ms") == ("1234", f"{conf} line 5"), f"CODEQ_CONFIG read: {s.get('grace-ms')}")
s = settings(worker("--config", str(conf), "--slots", "7", "--print-config",
                    env={"CODEQ_SLOTS": "5", "CODEQ_COMMIT_INTERVAL_MS": "250"}))
F.check(s.get("slots") == ("7", "command line"), f"flag over env and file: {s.get('slots')}")
F.check(s.get("commit-interval-ms") == ("250", "CODEQ_COMMIT_INTERVAL_MS"),
        f"dashes as underscores: {s.get('commit-interval-ms')}")
F.check(s.get("group") == ("from-file", f"{conf} line 4"), "untouched file setting kept")
# The worker's id is in every result and audit event: it must be JSON text (UTF-8, no control
# characters, not empty), from whichever source; before, such an id made every result and
# event unbuildable, and an empty one broke the result schema's minLength.
for args, env, name in [(["--worker-id", os.fsdecode(b"w\xff")], None, "--worker-id (from command line)"),
                        (["--instance-id", "a\tb"], None, "--instance-id (from command line)"),
                        ([], {"CODEQ_WORKER_ID": ""}, "--worker-id (from CODEQ_WORKER_ID)")]:
    p = worker(*args, "--print-config", env=env)
    F.check(p.returncode == 2 and f"codeq: worker: {name} must be 1-200 bytes of UTF-8" in p.stderr,
            f"worker id {args} {env}: rc {p.returncode} {p.stderr!r}")
p = worker("--worker-id", "wörker-1", "--print-config")
F.check(p.returncode == 0 and settings(p).get("worker-id", ("",))[0] == "wörker-1",
        f"a UTF-8 worker id: rc {p.returncode} {p.stderr!r}")
# --audit-code: hash by default, full from the environment; anything else refused
s = settings(worker("--print-config"))
F.check(s.get("audit-code") == ("hash", "default"), f"audit-code default: {s.get('audit-code')}")
s = settings(worker("--print-config", env={"CODEQ_AUDIT_CODE": "full"}))
F.check(s.get("audit-code") == ("full", "CODEQ_AUDIT_CODE"), f"audit-code env: {s.get('audit-code')}")
p = worker("--print-config", env={"CODEQ_AUDIT_CODE": "some"})
F.check(p.returncode == 2 and "--audit-code some: expected full or hash" in p.stderr and
        "CODEQ_AUDIT_CODE" in p.stderr, f"bad audit-code: {p.returncode} {p.stderr}")

# librdkafka passthrough: file < env < flag, names with dots.
s = settings(worker("--config", str(conf), "--print-config",
                    env={"CODEQ_KAFKA_CLIENT_RACK": "rack-env",
                         "CODEQ_KAFKA_SOCKET_TIMEOUT_MS": "7000"}))
F.check(s.get("kafka.client.rack") == ("rack-env", "CODEQ_KAFKA_CLIENT_RACK"),
        f"CODEQ_KAFKA_ over file: {s.get('kafka.client.rack')}")
F.check(s.get("kafka.socket.timeout.ms") == ("7000", "CODEQ_KAFKA_SOCKET_TIMEOUT_MS"),
        f"underscores to dots: {s.get('kafka.socket.timeout.ms')}")
F.check(s.get("kafka.sasl.username") == ("alice", f"{conf} line 7"), "kafka.* from the file")
s = settings(worker("--config", str(conf), "-X", "client.rack=rack-flag", "--print-config",
                    env={"CODEQ_KAFKA_CLIENT_RACK": "rack-env"}))
F.check(s.get("kafka.client.rack") == ("rack-flag", "command line"),
        f"-X over CODEQ_KAFKA_: {s.get('kafka.client.rack')}")

# Secrets: from a file (-X name=@FILE, CODEQ_KAFKA_*_FILE), never printed.
p = worker("-X", f"sasl.password=@{secret}", "-X", "ssl.key.password=plain-secret",
           "--print-config", env={"CODEQ_KAFKA_SSL_KEYSTORE_PASSWORD_FILE": str(secret)})
s = settings(p)
F.check(p.returncode == 0, f"secrets: exit {p.returncode} {p.stderr}")
F.check(s.get("kafka.sasl.password") == ("******", "command line"),
        f"masked: {s.get('kafka.sasl.password')}")
F.check(s.get("kafka.ssl.key.password", ("",))[0] == "******",
        "a secret given inline is masked too")
F.check(s.get("kafka.ssl.keystore.password") ==
        ("******", "CODEQ_KAFKA_SSL_KEYSTORE_PASSWORD_FILE"), "secret from a _FILE variable")
F.check("hunter2" not in p.stdout + p.stderr and "plain-secret" not in p.stdout + p.stderr,
        "no secret in the output")
p = worker("--print-config", env={"CODEQ_KAFKA_SASL_PASSWORD_FILE": str(TMP / "missing")})
F.check(p.returncode == 2 and "CODEQ_KAFKA_SASL_PASSWORD_FILE" in p.stderr and
        "No such file" in p.stderr, f"missing secret file: {p.returncode} {p.stderr!r}")
# the plain variable and its _FILE both set: the _FILE one won in silence
p = worker("--print-config", env={"CODEQ_KAFKA_SASL_PASSWORD": "plain-secret",
                                  "CODEQ_KAFKA_SASL_PASSWORD_FILE": str(secret)})
F.check(p.returncode == 2 and "CODEQ_KAFKA_SASL_PASSWORD and CODEQ_KAFKA_SASL_PASSWORD_FILE are "
        "both set" in p.stderr and "plain-secret" not in p.stdout + p.stderr,
        f"a secret set twice: {p.returncode} {p.stderr!r}")

# Bad values name the setting and where it came from.
p = worker("--print-config", env={"CODEQ_SLOTS": "abc"})
F.check(p.returncode == 2 and "slots=abc (from CODEQ_SLOTS)" in p.stderr and
        "positive integer" in p.stderr, f"bad env value: {p.returncode} {p.stderr!r}")
# The four topics are four: a jobs topic that is the results topic had the worker answer its
# own answers as jobs, thousands a second, each invalid under a real job's id.
p = worker("--print-config", "--jobs-topic", "codeq.results")
F.check(p.returncode == 2 and "jobs-topic=codeq.results (from command line) is also the "
        "results-topic" in p.stderr, f"jobs topic = results topic: {p.returncode} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_DLQ_TOPIC": "codeq.audit"})
F.check(p.returncode == 2 and "dlq-topic=codeq.audit (from CODEQ_DLQ_TOPIC) is also the "
        "audit-topic" in p.stderr, f"dead-letter topic = audit topic: {p.returncode} {p.stderr!r}")
# A topic name Kafka refuses, or an empty group, stops the start (exit 2, naming the source):
# the worker took "bad topic" and waited for its partitions for good, logging that it should
# be created (codeq topics refused the name), and an empty group failed only at the subscribe
# (exit 1, "Unknown group", --group unnamed). A trailing space from the environment is one.
p = worker("--print-config", "--jobs-topic", "bad topic")
F.check(p.returncode == 2 and "--jobs-topic 'bad topic' is not a Kafka topic name" in p.stderr,
        f"jobs topic with a space: {p.returncode} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_AUDIT_TOPIC": "codeq.audit "})
F.check(p.returncode == 2 and "--audit-topic 'codeq.audit ' is not a Kafka topic name" in p.stderr
        and "(from CODEQ_AUDIT_TOPIC)" in p.stderr,
        f"audit topic with a trailing space: {p.returncode} {p.stderr!r}")
gconf = TMP / "group.conf"
gconf.write_text("group =\n")
p = worker("--print-config", "--config", str(gconf))
F.check(p.returncode == 2 and "--group is empty" in p.stderr and f"{gconf} line 1" in p.stderr,
        f"empty group: {p.returncode} {p.stderr!r}")
p = subprocess.run([BIN, "submit", "--results-topic", "a/b", "x.py"], capture_output=True,
                   text=True, timeout=30)
F.check(p.returncode == 2 and "--results-topic 'a/b' is not a Kafka topic name" in p.stderr,
        f"submit with a bad topic name: {p.returncode} {p.stderr!r}")
# The properties codeq's identity and exactly-once rest on are refused from -X: a group.id
# there made the worker a member of another group while its log and --print-config named
# --group (an operator's trial). A property librdkafka does not know may be a misspelt
# secret's: its value is masked.
p = worker("--print-config", "-X", "group.id=other")
F.check(p.returncode == 2 and "kafka.group.id=other (from command line): codeq sets it: set "
        "--group" in p.stderr, f"-X group.id: {p.returncode} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_KAFKA_TRANSACTIONAL_ID": "shared"})
F.check(p.returncode == 2 and "kafka.transactional.id=shared" in p.stderr
        and "--instance-id" in p.stderr, f"transactional.id: {p.returncode} {p.stderr!r}")
kconf = TMP / "kafka-typo.conf"
kconf.write_text("kafka.sasl.passwd = hunter4\n")
p = worker("--print-config", "--config", str(kconf))
F.check(p.returncode == 2 and "kafka.sasl.passwd=******" in p.stderr and "hunter4" not in p.stderr,
        f"a misspelt secret's value: {p.returncode} {p.stderr!r}")

# each limit line of --print-config with where its two values came from, and a refused one
# echoed whole (its value was cut at its own '=': "limit-max=memory_mb").
lconf = TMP / "limits.conf"
lconf.write_text("limit-max = wall_ms=20000,pids=100\n")
p = worker("--config", str(lconf), "--limit-max", "memory_mb=500", "--print-config",
           env={"CODEQ_LIMIT_DEFAULT": "wall_ms=1000,cpu_ms=1000"})
lim = {ln.split("=")[0]: ln for ln in p.stdout.splitlines() if ln.startswith("limit-default.")}
F.check(p.returncode == 0 and
        lim.get("limit-default.wall_ms") == "limit-default.wall_ms=1000  limit-max.wall_ms=20000"
        f"  # CODEQ_LIMIT_DEFAULT, {lconf} line 1" and
        lim.get("limit-default.cpu_ms", "").endswith("cpu_ms=60000  # CODEQ_LIMIT_DEFAULT, default") and
        lim.get("limit-default.memory_mb", "").endswith("memory_mb=500  # default, command line") and
        lim.get("limit-default.pids", "").endswith(f"pids=100  # default, {lconf} line 1"),
        f"limit lists and their sources: {p.returncode} {list(lim.values())[:4]} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_LIMIT_MAX": "memory_mb=2000"})
F.check(p.returncode == 2 and "limit-max=memory_mb=2000 (from CODEQ_LIMIT_MAX)" in p.stderr,
        f"a refused limit echoed whole: {p.returncode} {p.stderr!r}")
p = worker("--print-config", "--limit-default", "wall_ms=" + "0" * 116 + "1000")  # read as 100
F.check(p.returncode == 2 and "is too long for NAME=VALUE" in p.stderr,
        f"a limit item too long to hold: {p.returncode} {p.stderr!r}")
p = worker("--print-config", "--limit-default", "wall_ms=1000,nope=1")
F.check(p.returncode == 2 and "unknown limit 'nope'" in p.stderr,
        f"a bad item of a limit list: {p.returncode} {p.stderr!r}")
# a bad value named with its limit (the line said only "--limit-default expects ...")
p = worker("--print-config", "--limit-default", "cpu_ms=5,wall_ms=abc")
F.check(p.returncode == 2 and "--limit-default wall_ms expects a positive integer, got 'abc'"
        in p.stderr, f"a bad value of a limit list: {p.returncode} {p.stderr!r}")
bad = TMP / "bad.conf"
bad.write_text("slots = 2\ndrain-ms = soon\n")
p = worker("--config", str(bad), "--print-config")
F.check(p.returncode == 2 and f"drain-ms=soon (from {bad} line 2)" in p.stderr,
        f"bad file value: {p.returncode} {p.stderr!r}")
# A revoke's drain runs where the consumer is not polled: one that reaches max.poll.interval.ms
# would have the group evict the worker in it (before, any --drain-ms was taken).
p = worker("--drain-ms", "295000", "--print-config")
F.check(p.returncode == 2 and "drain-ms=295000 (from command line) must be at least 10000 ms "
        "below the consumer's max.poll.interval.ms, 300000 (from librdkafka's default)" in p.stderr,
        f"a drain as long as the poll interval: {p.returncode} {p.stderr!r}")
p = worker("-X", "max.poll.interval.ms=15000", "--print-config", env={"CODEQ_DRAIN_MS": "5000"})
F.check(p.returncode == 0, f"a drain that fits a shorter poll interval: {p.returncode} {p.stderr!r}")
p = worker("-X", "max.poll.interval.ms=15000", "--print-config")
F.check(p.returncode == 2 and "drain-ms=10000 (from default)" in p.stderr and
        "15000 (from command line)" in p.stderr,
        f"a poll interval too short for the default drain: {p.returncode} {p.stderr!r}")
bad.write_text("slotz = 2\n")
for flag in ("--config", "--conf"):  # --conf: its word written out in full, then a refusal
    p = worker(flag, str(bad), "--print-config")
    F.check(p.returncode == 2 and f"slotz=2 (from {bad} line 1): unknown setting" in p.stderr,
            f"unknown file setting ({flag}): {p.returncode} {p.stderr!r}")
bad.write_text("just words\n")
p = worker("--config", str(bad), "--print-config")
F.check(p.returncode == 2 and "line 1" in p.stderr, f"malformed line: {p.returncode} {p.stderr!r}")
p = worker("--config", str(TMP / "nope.conf"), "--print-config")
F.check(p.returncode == 2 and "nope.conf" in p.stderr, f"missing config file: {p.stderr!r}")
p = worker("--config", str(TMP), "--print-config")  # fopen() takes a directory; reading fails
F.check(p.returncode == 2 and f"{TMP}: Is a directory" in p.stderr,
        f"a directory as the config file: {p.returncode} {p.stderr!r}")
# getopt_long takes an unambiguous prefix of a long flag; before, `--conf FILE` was read as
# --config by getopt but never opened (the file's settings silently missing), and an
# abbreviated flag's value was listed as the default's.
s = settings(worker("--conf", str(conf), "--print-config"))
F.check(s.get("slots") == ("3", f"{conf} line 3"), f"--conf read as --config: {s.get('slots')}")
s = settings(worker("--conf=" + str(conf), "--slo", "6", "--limit-def", "pids=9", "--print-c"))
F.check(s.get("slots") == ("6", "command line") and s.get("group") == ("from-file", f"{conf} line 4"),
        f"abbreviated flags and their source: {s.get('slots')} {s.get('group')}")
p = worker("--limit-def=pids=9", "--print-config")
F.check(p.returncode == 0 and "limit-default.pids=9  limit-max.pids=256  # command line, default"
        in p.stdout, f"an abbreviated limit flag's source: {p.returncode} {p.stdout!r}")
# a flag's value is never taken for a flag, and an ambiguous prefix is refused as before
s = settings(worker("--jobs-topic", "--slo", "--print-config"))
F.check(s.get("jobs-topic") == ("--slo", "command line") and s.get("slots") == ("2", "default"),
        f"a value that looks like a flag: {s.get('jobs-topic')} {s.get('slots')}")
s = settings(worker("-g", "--conf", "--print-config"))
F.check(s.get("group") == ("--conf", "command line"), f"a short flag's value: {s.get('group')}")
# ...nor a value's words for --config or a setting: getopt reads "--" here as --worker-id's
# value and then --config FILE; and "--config=F" as --reply-topic-prefix's value
s = settings(worker("--worker-id", "--", "--config", str(conf), "--print-config"))
F.check(s.get("slots") == ("3", f"{conf} line 3") and s.get("worker-id") == ("--", "command line"),
        f"--config after a value '--': {s.get('slots')} {s.get('worker-id')}")
s = settings(worker("--reply-topic-prefix", f"--config={conf}", "--worker-id", "--slots=9",
                    "-g", "-Xclient.rack=r2", "--print-config"))
F.check(s.get("slots") == ("2", "default") and s.get("kafka.client.rack") is None and
        s.get("reply-topic-prefix") == (f"--config={conf}", "command line"),
        f"values that look like --config, a setting, a -X: {s.get('slots')} "
        f"{s.get('kafka.client.rack')} {s.get('reply-topic-prefix')}")
p = worker("--s", "3", "--print-config")
F.check(p.returncode == 2 and "'--s' is ambiguous" in p.stderr,
        f"an ambiguous prefix: {p.returncode} {p.stderr!r}")
# Values that used to pass --print-config and fail only after the worker reached Kafka (or
# never: a port past 65535 wrapped around, a cgroup parent with '..' left its hierarchy).
for flag, value, want in [
        ("--sandbox-profile", "weak", "--sandbox-profile: full, no-cgroup or no-seccomp, not 'weak'"),
        ("--http", "127.0.0.1:99999", "http=127.0.0.1:99999: the port must be 1-65535"),
        ("--http", "127.0.0.1:0", "the port must be 1-65535"),
        ("--http", "foo", "http=foo: not ADDR:PORT"),
        ("--cgroup-parent", "../escape", "--cgroup-parent '../escape': a path under"),
        ("--cgroup-parent", "", "--cgroup-parent '': a path under"),
        ("--cgroup-parent", "a//b", "--cgroup-parent 'a//b'"),
        ("--work-root", "relative", "--work-root 'relative': must be an absolute path"),
        ("--work-root", "", "must be an absolute path"),
        ("--python", "/nonexistent/python3", "--python /nonexistent/python3: not an executable"),
        ("--python", str(conf), "not an executable file")]:
    p = worker(flag, value, "--print-config")
    F.check(p.returncode == 2 and want in p.stderr, f"{flag} {value!r}: {p.returncode} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_SANDBOX_PROFILE": "weak"})
F.check(p.returncode == 2 and "sandbox-profile=weak (from CODEQ_SANDBOX_PROFILE)" in p.stderr,
        f"a bad profile from the environment names its source: {p.stderr!r}")
s = settings(worker("--cgroup-parent", "/system.slice/codeq", "--http", "[::1]:9100",
                    "--sandbox-profile", "no-seccomp", "--print-config"))
F.check(s.get("cgroup-parent") == ("/system.slice/codeq", "command line") and
        s.get("http") == ("[::1]:9100", "command line") and
        s.get("sandbox-profile", ("",))[0] == "no-seccomp", f"good values: {s}")
p = worker("--print-config", env={"CODEQ_KAFKA_NO_SUCH_THING": "1"})
F.check(p.returncode == 2 and "kafka.no.such.thing=****** (from CODEQ_KAFKA_NO_SUCH_THING)" in p.stderr,
        f"unknown librdkafka property: {p.returncode} {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_LOG_FORMAT": "xml"})
F.check(p.returncode == 2 and "log-format=xml" in p.stderr and "CODEQ_LOG_FORMAT" in p.stderr,
        f"bad log format from env: {p.stderr!r}")
p = worker("--print-config", env={"CODEQ_TEST_SOMETHING": "x", "CODEQ_UNRELATED": "y"})
F.check(p.returncode == 0, f"other CODEQ_ variables are ignored: {p.stderr!r}")
p = worker("--slots", "abc", "--print-config")
F.check(p.returncode == 2 and "positive integer" in p.stderr, "a bad flag is still refused")
# The job uid range: a setting like any other, refused when it cannot hold the slots' jobs.
s = settings(worker("--uid-count", "4", "--slots", "3", "--print-config",
                    env={"CODEQ_UID_BASE": "70000"}))
F.check(s.get("uid-base") == ("70000", "CODEQ_UID_BASE") and
        s.get("uid-count") == ("4", "command line"), f"uid range: {s.get('uid-base')} {s.get('uid-count')}")
p = worker("--uid-count", "2", "--slots", "3", "--print-config")
F.check(p.returncode == 2 and "--uid-count 2 is below --slots 3" in p.stderr,
        f"a uid range smaller than the slots: {p.returncode} {p.stderr!r}")
p = worker("--uid-base", "4294967000", "--print-config")
F.check(p.returncode == 2 and "past the last uid" in p.stderr,
        f"a uid range past the last uid: {p.returncode} {p.stderr!r}")
F.finish("worker_config")
