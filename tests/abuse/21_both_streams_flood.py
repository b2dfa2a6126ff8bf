# stdout and stderr flooded at once from two threads: both are read concurrently (no pipe
# deadlock) and the job ends at the cap, well before the wall limit.
# expect: status=output_limit
# expect: truncated=any
# expect: wall-ms<=2500
# expect: codeq-rss-mb<=150
# limits: output_bytes=20000 wall_ms=4000
import threading
blob = b"y" * 65536
def pump(fd):
    while True:
        os.write(fd, blob)
threading.Thread(target=pump, args=(2,), daemon=True).start()
pump(1)
