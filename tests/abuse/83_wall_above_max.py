# A job that asks for a wall limit above the maximum (60 s) is refused before it runs, naming
# the limit: it must not get to hold a slot for an hour.
# expect: status=invalid
# expect: message-contains=wall_ms
# expect: wall-ms<=5000
# limits: wall_ms=3600000
import time
time.sleep(3600)
