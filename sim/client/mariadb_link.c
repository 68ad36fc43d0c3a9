/* mariadb_link: a MariaDB stage's provider in the clients. See
 * mariadb_link.h. */
#include <stdio.h>
#include <stdlib.h>

#include "mariadb.h"
#include "mariadb_link.h"

typedef struct link_arg {
    sim_control *ctl;
    int client;
} link_arg;

static link_arg args[SIM_CLIENTS_MAX + 1]; /* one per client slot; a client
                                            * process uses its own */

static MYSQL *connect_node(void *arg, int node, char *errstr, size_t len)
{
    const link_arg *a = arg;
    const sim_control *ctl = a->ctl;
    int via = atomic_load(&ctl->client[a->client].via_port[node]);
    int port = via > 0 ? via : atomic_load(&ctl->node_port[node]);
    unsigned int secs = (unsigned int)((ctl->timeout_ms + 999) / 1000);
    MYSQL *c = mysql_init(NULL);

    if (c == NULL) {
        snprintf(errstr, len, "mysql_init: out of memory");
        return NULL;
    }
    mysql_options(c, MYSQL_OPT_CONNECT_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_READ_TIMEOUT, &secs);
    mysql_options(c, MYSQL_OPT_WRITE_TIMEOUT, &secs);
    if (mysql_real_connect(c, "127.0.0.1", MARIADB_USER, ctl->password, MARIADB_DB,
                           (unsigned int)port, NULL, 0) == NULL) {
        snprintf(errstr, len, "connect to 127.0.0.1:%d: %s", port, mysql_error(c));
        mysql_close(c);
        return NULL;
    }
    return c;
}

struct dlock_provider *sim_mariadb_link(sim_control *ctl, int client)
{
    struct dlock_provider *p = malloc(sizeof(*p));

    if (p == NULL || client < 0 || client > SIM_CLIENTS_MAX) {
        free(p);
        return NULL;
    }
    args[client] = (link_arg){ ctl, client };
    *p = (struct dlock_provider){ connect_node, &args[client] };
    return p;
}
