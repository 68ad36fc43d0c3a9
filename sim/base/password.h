/* password: the one password of a run's servers.
 *
 * Every server a run starts (redis-server, its replica, the Redlock
 * nodes, the resource, a sentinel, the Redis Cluster's nodes, MariaDB's
 * user) lets in only the clients that know the run's password: without
 * it, any local user could FLUSHALL a node or write a lock key of his
 * own. It is drawn from the kernel's random source once per process that
 * starts servers (a simulator run, a test binary, the bench), before its
 * first server, and reaches the run's client processes through the
 * control block (control.h), never through a command line, which any
 * local user can read in /proc.
 *
 * Errors, hiredis-style: functions return 0 or -1, with one line of
 * reason in the caller's errstr. */
#ifndef SIM_PASSWORD_H
#define SIM_PASSWORD_H

#include <stddef.h>
#include <hiredis/hiredis.h>

#define SIM_PASSWORD_LEN 33 /* 32 hex digits and the NUL */

/* A new random password into out: 32 hex digits. */
int sim_password_draw(char out[SIM_PASSWORD_LEN], char *errstr, size_t len);

/* Draws this process's password unless it has one: before its first
 * server starts. Safe from several threads. */
int sim_password_ready(char *errstr, size_t len);

/* This process's password; "" until sim_password_ready drew it. */
const char *sim_password(void);

/* Draws the password if needed and writes dir/auth.conf (mode 0600), a
 * redis-server's first argument: requirepass, and masterauth for when
 * the server is a replica. Its path into path. In a file, not on the
 * command line, which other users can read. 0, or -1 with errstr. */
int sim_password_redis_conf(const char *dir, char *path, size_t pathlen,
                            char *errstr, size_t len);

/* AUTH password on c when password is not "" (a server without a
 * password needs none). 0, or -1 with errstr naming the port. */
int sim_password_auth(redisContext *c, const char *password, int port,
                      char *errstr, size_t len);

#endif
