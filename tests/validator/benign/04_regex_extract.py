"""regular expressions: findall, groups, sub"""
import re

log = """2024-01-03 ERROR disk full on /dev/sda1
2024-01-03 INFO started job 42
2024-01-04 WARN retrying job 42 (attempt 2)
2024-01-05 ERROR job 43 failed: timeout"""
pattern = re.compile(r"^(\d{4}-\d{2}-\d{2}) (\w+) (.*)$", re.M)
for date, level, msg in pattern.findall(log):
    if level == "ERROR":
        print(date, msg)
jobs = sorted(set(int(j) for j in re.findall(r"job (\d+)", log)))
print("jobs:", jobs)
print(re.sub(r"\d+", "#", "abc 123 def 45"))
m = re.match(r"(?P<key>\w+)=(?P<val>\w+)", "color=blue")
print(m.group("key"), m["val"], m.span())
