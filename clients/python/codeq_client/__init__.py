"""codeq_client: submit Python to codeq workers over Kafka and get typed results back.

    from codeq_client import Client
    with Client("127.0.0.1:9092") as c:
        r = c.run("print(2 + 2)")
        print(r.status, r.stdout)

See README.md beside this package for the reply modes, statuses and exceptions."""
import logging

from .client import AsyncClient, Client
from .result import (CodeqError, ConfigError, Finding, JobExpired, JobFailed, JobInternalError,
                     JobInvalid, JobRejected, JobStatusError, JobTimeout, Result, Usage)

__all__ = ["AsyncClient", "Client", "CodeqError", "ConfigError", "Finding", "JobExpired", "JobFailed",
           "JobInternalError", "JobInvalid", "JobRejected", "JobStatusError", "JobTimeout",
           "Result", "Usage"]
__version__ = "0.1.0"
# Silent unless the application configures logging (the library convention): librdkafka's
# lines are on "codeq_client.kafka", the client's own on "codeq_client".
logging.getLogger("codeq_client").addHandler(logging.NullHandler())
