"""Kafka Admin API calls the tests need and neither kcat nor `codeq topics` make: delete a
topic, create an ACL. Through librdkafka (Debian's librdkafka1, the library codeq links) with
ctypes, so the tests need no Kafka tools jar and no Python Kafka package. Every call waits at
most its timeout and raises with the broker's error."""
import ctypes

_rk = ctypes.CDLL("librdkafka.so.1")
_P = ctypes.c_void_p
for name, res, args in [
    ("rd_kafka_conf_new", _P, []),
    ("rd_kafka_conf_set", ctypes.c_int, [_P, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]),
    ("rd_kafka_new", _P, [ctypes.c_int, _P, ctypes.c_char_p, ctypes.c_size_t]),
    ("rd_kafka_destroy", None, [_P]),
    ("rd_kafka_queue_new", _P, [_P]),
    ("rd_kafka_queue_destroy", None, [_P]),
    ("rd_kafka_queue_poll", _P, [_P, ctypes.c_int]),
    ("rd_kafka_event_destroy", None, [_P]),
    ("rd_kafka_event_error", ctypes.c_int, [_P]),
    ("rd_kafka_event_error_string", ctypes.c_char_p, [_P]),
    ("rd_kafka_err2str", ctypes.c_char_p, [ctypes.c_int]),
    ("rd_kafka_DeleteTopic_new", _P, [ctypes.c_char_p]),
    ("rd_kafka_DeleteTopic_destroy", None, [_P]),
    ("rd_kafka_DeleteTopics", None, [_P, ctypes.POINTER(_P), ctypes.c_size_t, _P, _P]),
    ("rd_kafka_event_DeleteTopics_result", _P, [_P]),
    ("rd_kafka_DeleteTopics_result_topics", ctypes.POINTER(_P), [_P, ctypes.POINTER(ctypes.c_size_t)]),
    ("rd_kafka_topic_result_error", ctypes.c_int, [_P]),
    ("rd_kafka_topic_result_name", ctypes.c_char_p, [_P]),
    ("rd_kafka_AclBinding_new", _P, [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                                     ctypes.c_char_p, ctypes.c_int, ctypes.c_int, ctypes.c_char_p,
                                     ctypes.c_size_t]),
    ("rd_kafka_AclBinding_destroy", None, [_P]),
    ("rd_kafka_CreateAcls", None, [_P, ctypes.POINTER(_P), ctypes.c_size_t, _P, _P]),
    ("rd_kafka_event_CreateAcls_result", _P, [_P]),
    ("rd_kafka_CreateAcls_result_acls", ctypes.POINTER(_P), [_P, ctypes.POINTER(ctypes.c_size_t)]),
    ("rd_kafka_acl_result_error", _P, [_P]),
    ("rd_kafka_error_string", ctypes.c_char_p, [_P]),
]:
    f = getattr(_rk, name)
    f.restype, f.argtypes = res, args

RESOURCE_TOPIC, PATTERN_LITERAL, PATTERN_PREFIXED = 2, 3, 4
OP_WRITE, OP_DESCRIBE, DENY, ALLOW = 4, 8, 2, 3


class _Admin:
    def __init__(self, brokers):
        err = ctypes.create_string_buffer(512)
        conf = _rk.rd_kafka_conf_new()
        if _rk.rd_kafka_conf_set(conf, b"bootstrap.servers", brokers.encode(), err, 512) != 0:
            raise RuntimeError(f"kafka_admin: bootstrap.servers: {err.value.decode()}")
        self.rk = _rk.rd_kafka_new(0, conf, err, 512)
        if not self.rk:
            raise RuntimeError(f"kafka_admin: rd_kafka_new: {err.value.decode()}")
        self.q = _rk.rd_kafka_queue_new(self.rk)

    def wait(self, what, timeout_ms):
        ev = _rk.rd_kafka_queue_poll(self.q, timeout_ms)
        if not ev:
            raise RuntimeError(f"kafka_admin: {what}: no answer in {timeout_ms} ms")
        if _rk.rd_kafka_event_error(ev):
            msg = _rk.rd_kafka_event_error_string(ev).decode()
            _rk.rd_kafka_event_destroy(ev)
            raise RuntimeError(f"kafka_admin: {what}: {msg}")
        return ev

    def close(self):
        _rk.rd_kafka_queue_destroy(self.q)
        _rk.rd_kafka_destroy(self.rk)


def delete_topics(brokers, names, timeout_ms=30000):
    a = _Admin(brokers)
    objs = (_P * len(names))(*[_rk.rd_kafka_DeleteTopic_new(n.encode()) for n in names])
    try:
        _rk.rd_kafka_DeleteTopics(a.rk, objs, len(names), None, a.q)
        ev = a.wait("DeleteTopics", timeout_ms)
        n = ctypes.c_size_t()
        res = _rk.rd_kafka_DeleteTopics_result_topics(_rk.rd_kafka_event_DeleteTopics_result(ev),
                                                      ctypes.byref(n))
        errs = [(_rk.rd_kafka_topic_result_name(res[i]).decode(),
                 _rk.rd_kafka_err2str(_rk.rd_kafka_topic_result_error(res[i])).decode())
                for i in range(n.value) if _rk.rd_kafka_topic_result_error(res[i])]
        _rk.rd_kafka_event_destroy(ev)
        if errs:
            raise RuntimeError(f"kafka_admin: delete topics: {errs}")
    finally:
        for o in objs:
            _rk.rd_kafka_DeleteTopic_destroy(o)
        a.close()


def create_acl(brokers, topic, principal, operation, permission, pattern=PATTERN_LITERAL,
               timeout_ms=30000):
    a = _Admin(brokers)
    err = ctypes.create_string_buffer(512)
    b = _rk.rd_kafka_AclBinding_new(RESOURCE_TOPIC, topic.encode(), pattern, principal.encode(),
                                    b"*", operation, permission, err, 512)
    if not b:
        a.close()
        raise RuntimeError(f"kafka_admin: ACL binding: {err.value.decode()}")
    arr = (_P * 1)(b)
    try:
        _rk.rd_kafka_CreateAcls(a.rk, arr, 1, None, a.q)
        ev = a.wait("CreateAcls", timeout_ms)
        n = ctypes.c_size_t()
        res = _rk.rd_kafka_CreateAcls_result_acls(_rk.rd_kafka_event_CreateAcls_result(ev),
                                                  ctypes.byref(n))
        e = [_rk.rd_kafka_error_string(_rk.rd_kafka_acl_result_error(res[i])).decode()
             for i in range(n.value) if _rk.rd_kafka_acl_result_error(res[i])]
        _rk.rd_kafka_event_destroy(ev)
        if e:
            raise RuntimeError(f"kafka_admin: create ACL on {topic}: {e}")
    finally:
        _rk.rd_kafka_AclBinding_destroy(b)
        a.close()
