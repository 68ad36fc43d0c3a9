"""redis-py's Lock as a lockstep driver (docs/drivers.md).

One line in, one line out, on stdin and stdout: `acquire` is answered
`ok`, `busy` or `error <text>`; `release` `ok`, `not-owner` or
`error <text>`. The lock is the library's own: a random token, SET NX PX,
a poll every 0.1 s within the wait budget, a Lua compare-and-delete. It
has no watchdog, draws no fencing token and is not reentrant.
"""
import os
import sys

import redis
from redis.exceptions import LockError, LockNotOwnedError, RedisError


def setting(name):
    return int(os.environ["LOCKSTEP_" + name])


def answer(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def one_line(err):
    return "%s: %s" % (type(err).__name__, str(err).replace("\n", " "))


def main():
    timeout = setting("TIMEOUT_MS") / 1000.0
    client = redis.Redis(host=os.environ["LOCKSTEP_HOST"], port=setting("PORT"),
                         password=os.environ.get("LOCKSTEP_PASSWORD"),
                         socket_timeout=timeout, socket_connect_timeout=timeout)
    wait = setting("WAIT_MS") / 1000.0
    lock = client.lock(os.environ["LOCKSTEP_LOCK"], timeout=setting("LEASE_MS") / 1000.0,
                       blocking_timeout=wait)
    answer("ready")
    for line in sys.stdin:
        try:
            if line.strip() == "acquire":
                answer("ok" if lock.acquire(blocking=wait > 0) else "busy")
            elif line.strip() == "release":
                lock.release()
                answer("ok")
            else:
                answer("error unknown command %r" % line.strip())
        except LockNotOwnedError:
            answer("not-owner")       # the key was gone or another's
        except LockError as err:
            if "unlocked" in str(err):
                answer("not-owner")   # never acquired: refused without a call
            else:
                answer("error " + one_line(err))
        except RedisError as err:
            answer("error " + one_line(err))


main()
