"""kazoo's Lock as a lockstep driver (docs/drivers.md).

One line in, one line out, on stdin and stdout: `acquire` is answered
`ok`, `busy` or `error <text>`; `release` `ok`, `not-owner` or
`error <text>`. The lock is the library's own: an ephemeral sequential
node under the lock's path, a watch on the node just before ours. It
draws no fencing token and is not reentrant. The session's timeout is the
run's lease, as for the ZooKeeper stages.
"""
import logging
import os
import sys

from kazoo.client import KazooClient
from kazoo.security import CREATOR_ALL_ACL
from kazoo.exceptions import KazooException
from kazoo.handlers.threading import KazooTimeoutError


def setting(name):
    return int(os.environ["LOCKSTEP_" + name])


def answer(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(err):
    return "%s: %s" % (type(err).__name__, str(err).replace("\n", " "))


def main():
    logging.getLogger("kazoo").setLevel(logging.CRITICAL)  # stdout is the protocol's
    host, port = os.environ["LOCKSTEP_HOST"], setting("PORT")
    hosts = ",".join("%s:%d" % (host, port + i) for i in range(setting("NODES")))
    # The ensemble lets in only its run's digest id, and the nodes we
    # create admit only it.
    auth = [("digest", "lockstep:" + os.environ["LOCKSTEP_PASSWORD"])] \
        if "LOCKSTEP_PASSWORD" in os.environ else None
    client = KazooClient(hosts=hosts, timeout=setting("LEASE_MS") / 1000.0,
                         auth_data=auth, default_acl=CREATOR_ALL_ACL if auth else None)
    client.start(timeout=15)
    # The ZooKeeper stages' root: the simulator's observer watches it.
    lock = client.Lock("/lockstep/" + os.environ["LOCKSTEP_LOCK"])
    wait = setting("WAIT_MS") / 1000.0
    answer("ready")
    for line in sys.stdin:
        try:
            if line.strip() == "acquire":
                got = lock.acquire(blocking=wait > 0, timeout=wait if wait > 0 else None)
                answer("ok" if got else "busy")
            elif line.strip() == "release":
                answer("ok" if lock.release() else "not-owner")
            else:
                answer("error unknown command %r" % line.strip())
        except (KazooException, KazooTimeoutError) as err:
            answer("error " + one_line(err))
    client.stop()   # the session ends: its nodes go
    client.close()


main()
