/* password: see password.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>

#include "password.h"
#include "util.h"

static pthread_mutex_t drawing = PTHREAD_MUTEX_INITIALIZER;
static char ours[SIM_PASSWORD_LEN]; /* "" until drawn; a fork keeps it */

int sim_password_draw(char out[SIM_PASSWORD_LEN], char *errstr, size_t len)
{
    unsigned char bytes[(SIM_PASSWORD_LEN - 1) / 2];
    size_t i;

    if (getrandom(bytes, sizeof(bytes), 0) != (ssize_t)sizeof(bytes))
        return sim_error(errstr, len, "cannot read the OS random source for the run's "
                         "password: %s", strerror(errno));
    for (i = 0; i < sizeof(bytes); i++)
        sprintf(out + 2 * i, "%02x", bytes[i]);
    return 0;
}

int sim_password_ready(char *errstr, size_t len)
{
    int rc = 0;

    pthread_mutex_lock(&drawing);
    if (ours[0] == '\0')
        rc = sim_password_draw(ours, errstr, len);
    pthread_mutex_unlock(&drawing);
    return rc;
}

const char *sim_password(void)
{
    return ours;
}

int sim_password_redis_conf(const char *dir, char *path, size_t pathlen,
                            char *errstr, size_t len)
{
    char text[2 * SIM_PASSWORD_LEN + 32];
    int fd, n, ok;

    if (sim_password_ready(errstr, len) != 0)
        return -1;
    if ((size_t)snprintf(path, pathlen, "%s/auth.conf", dir) >= pathlen)
        return sim_error(errstr, len, "server dir name too long: %s", dir);
    if ((fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
        return sim_error(errstr, len, "cannot write %s: %s", path, strerror(errno));
    n = snprintf(text, sizeof(text), "requirepass %s\nmasterauth %s\n", ours, ours);
    ok = write(fd, text, (size_t)n) == n;
    close(fd);
    return ok ? 0 : sim_error(errstr, len, "cannot write %s", path);
}

int sim_password_auth(redisContext *c, const char *password, int port,
                      char *errstr, size_t len)
{
    redisReply *r;
    int ok;

    if (password == NULL || password[0] == '\0')
        return 0;
    r = redisCommand(c, "AUTH %s", password);
    ok = r != NULL && r->type == REDIS_REPLY_STATUS;
    if (!ok)
        sim_error(errstr, len, "AUTH on 127.0.0.1:%d: %s", port,
                  r != NULL ? r->str : c->errstr);
    freeReplyObject(r);
    return ok ? 0 : -1;
}
