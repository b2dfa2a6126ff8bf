# A job that crashes itself (NULL dereference through ctypes) is reported as signal SIGSEGV,
# never as a sandbox failure.
# expect: status=signal
# expect: signal=SIGSEGV
imp("ctypes").string_at(0)
