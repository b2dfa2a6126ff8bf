# Regression guard: common stdlib modules that touch the system (urandom, time zones, locale,
# hashing, json, re, decimal, uuid, datetime, pathlib).
# expect: status=ok
# expect: stdout-contains=stdlib-ok
import hashlib, json, re, decimal, uuid, datetime, random, pathlib, locale, secrets, time
ok = [hashlib.sha256(b"x").hexdigest()[:4] == "2d71", json.loads("[1]") == [1],
      re.match(r"a+", "aaa") is not None, decimal.Decimal("0.1") * 3 == decimal.Decimal("0.3"),
      len(str(uuid.uuid4())) == 36, datetime.datetime.now().year >= 2024,
      len(secrets.token_bytes(16)) == 16, pathlib.Path(".").resolve().exists(),
      time.monotonic() > 0, random.SystemRandom().random() < 1]
print("stdlib-ok" if all(ok) else f"stdlib-bad {ok}")
