# The kernel keyring is shared with the host and is not namespaced: add_key, keyctl and
# request_key are denied.
# expect: status in ok,error,seccomp_violation
ct = imp("ctypes")
KEY_SPEC_PROCESS_KEYRING = -2
r, err = sc(248, ct.c_char_p(b"user"), ct.c_char_p(b"codeq-abuse"), ct.c_char_p(b"x"), 1,
            KEY_SPEC_PROCESS_KEYRING)  # add_key
if r >= 0:
    escaped("add_key")
else:
    blocked("add_key", err)
r, err = sc(250, 0, -4, 0)  # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING, 0)
if r >= 0:
    escaped("keyctl-get-user-keyring")
else:
    blocked("keyctl", err)
r, err = sc(249, ct.c_char_p(b"user"), ct.c_char_p(b"codeq-abuse"), None, 0)  # request_key
if err not in ("EPERM", "EACCES", "ENOSYS"):
    escaped(f"request_key-reached-kernel-{err}")
