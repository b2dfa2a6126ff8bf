# Regression guard: the working directory and /tmp are writable; tempfile, sqlite3 on disk.
# expect: status=ok
# expect: stdout-contains=files-ok
import tempfile, sqlite3
with open_("data.txt", "w") as f:
    f.write("x" * 10000)
with tempfile.NamedTemporaryFile(dir="/tmp") as t:
    t.write(b"y" * 10000)
    t.flush()
    size = os.path.getsize(t.name)
db = sqlite3.connect("db.sqlite")
db.execute("create table t (a)")
db.executemany("insert into t values (?)", [(i,) for i in range(1000)])
n = db.execute("select count(*) from t").fetchone()[0]
if size == 10000 and n == 1000 and os.path.getsize("data.txt") == 10000:
    print("files-ok")
