/* bench_replay: the limit: a stage's commands replayed raw, with no
 * client logic, on connections of the stage's own kind. See bench.h. */
#define _GNU_SOURCE
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "history.h"
#include "util.h"

/* One command on every line: written to all of them first (nothing is
 * sent until the first read flushes each), then each one's reply. */
static int replay_command(sim_bench_lines *ls, const sim_bench_command *cmd, char *errstr,
                          size_t len)
{
    redisReply *r;
    int i, rc = 0;

    for (i = 0; i < ls->n; i++) {
        if (redisAppendCommandArgv(ls->c[i], cmd->argc, (const char **)cmd->argv,
                                   cmd->len) != REDIS_OK)
            return sim_error(errstr, len, "replaying %s: out of memory", cmd->argv[0]);
    }
    for (i = 0; i < ls->n; i++) {
        int done = 0;

        while (!done && redisBufferWrite(ls->c[i], &done) == REDIS_OK)
            ;
    }
    for (i = 0; i < ls->n; i++) {
        r = NULL;
        if (redisGetReply(ls->c[i], (void **)&r) != REDIS_OK || r->type == REDIS_REPLY_ERROR)
            rc = rc ? rc : sim_error(errstr, len, "replaying %s: %s", cmd->argv[0],
                                     r == NULL ? ls->c[i]->errstr : r->str);
        freeReplyObject(r);
    }
    return rc;
}

/* One pass over the pair's commands; each one's time added to ns[]. */
static int replay_once(sim_bench_lines *ls, const sim_bench_pair *t, int64_t *ns,
                       char *errstr, size_t len)
{
    int i;

    if (ls->zk.zh != NULL)
        return sim_bench_zk_replay(&ls->zk, t, ns, errstr, len);
    if (ls->mdb != NULL)
        return sim_bench_mdb_replay(ls->mdb, t, ns, errstr, len);
    for (i = 0; i < t->n; i++) {
        int64_t start = sim_now_ns();
        int rc = replay_command(ls, &t->cmd[i], errstr, len);

        ns[i] += sim_now_ns() - start;
        if (rc != 0)
            return -1;
    }
    return 0;
}

/* The pair replayed for ms: pairs done, their time, each command's. */
int sim_bench_replay(sim_bench_lines *ls, const sim_bench_pair *t, long ms, long long *pairs,
                     int64_t *elapsed, int64_t *ns, char *errstr, size_t len)
{
    int64_t start = sim_now_ns(), end = start;

    *pairs = 0;
    while (end - start < ms * 1000000LL) {
        if (replay_once(ls, t, ns, errstr, len) != 0)
            return -1;
        ++*pairs;
        end = sim_now_ns();
    }
    *elapsed = end - start;
    return 0;
}

int sim_bench_lines_open(sim_bench *b, int stage, sim_bench_lines *ls, char *errstr,
                         size_t len)
{
    memset(ls, 0, sizeof(*ls));
    if (sim_bench_mariadb(stage))
        return (ls->mdb = sim_bench_mdb_open(b, errstr, len)) == NULL ? -1 : 0;
    if (sim_bench_zookeeper(stage))
        return sim_bench_zk_open(&ls->zk, b->ens.port + b->zk_follower, b->ens.password,
                                 SIM_BENCH_ZK_TIMEOUT_MS, errstr, len);
    for (ls->n = 0; ls->n < sim_stage_get(stage)->masters; ls->n++) {
        ls->c[ls->n] = sim_server_connect(&b->cl.node[ls->n], SIM_BENCH_TIMEOUT_MS, errstr, len);
        if (ls->c[ls->n] == NULL)
            return -1;
    }
    return 0;
}

void sim_bench_lines_close(sim_bench_lines *ls)
{
    int i;

    for (i = 0; i < ls->n; i++)
        redisFree(ls->c[i]);
    sim_bench_zk_close(&ls->zk);
    if (ls->mdb != NULL)
        mysql_close(ls->mdb);
}
