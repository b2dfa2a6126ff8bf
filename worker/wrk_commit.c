/* Commit: at-least-once. The offset after a job is committed synchronously once its records
 * are acknowledged; if they were not, the partition is rewound to the job so it runs again.
 * (Exactly-once through transactions replaces this in the EOS worker.) */
#include <stdio.h>

#include "wrk_internal.h"

static rd_kafka_topic_partition_list_t *at(const rd_kafka_message_t *m, int64_t offset)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, rd_kafka_topic_name(m->rkt), m->partition)->offset =
        offset;
    return l;
}

int wrk_commit_after(rd_kafka_t *consumer, const rd_kafka_message_t *m, char *err,
                     size_t errlen)
{
    rd_kafka_topic_partition_list_t *l = at(m, m->offset + 1);
    rd_kafka_resp_err_t e = rd_kafka_commit(consumer, l, 0);
    if (!e && l->elems[0].err) e = l->elems[0].err;
    rd_kafka_topic_partition_list_destroy(l);
    if (e) {
        snprintf(err, errlen, "codeq: commit: %s [%d] offset %lld: %s",
                 rd_kafka_topic_name(m->rkt), (int)m->partition, (long long)m->offset + 1,
                 rd_kafka_err2str(e));
        return -1;
    }
    return 0;
}

int wrk_commit_rewind(rd_kafka_t *consumer, const rd_kafka_message_t *m, char *err,
                      size_t errlen)
{
    rd_kafka_topic_partition_list_t *l = at(m, m->offset);
    rd_kafka_error_t *e = rd_kafka_seek_partitions(consumer, l, 10000);
    rd_kafka_topic_partition_list_destroy(l);
    if (e) {
        snprintf(err, errlen, "codeq: commit: rewind %s [%d] to %lld: %s",
                 rd_kafka_topic_name(m->rkt), (int)m->partition, (long long)m->offset,
                 rd_kafka_error_string(e));
        rd_kafka_error_destroy(e);
        return -1;
    }
    return 0;
}
