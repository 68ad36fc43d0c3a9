/* mariadb_link: a MariaDB stage's connection provider in the simulator's
 * clients: the connection goes where node 0 lives now (the control
 * block's port, which a failover moves to the promoted replica), through
 * the proxy in a run that cuts links, as the stages' user with the run's
 * password. A Redis stage's provider is in workload.c; both are the
 * opaque struct dlock_provider of lock.h, each defined by its kind's
 * plumbing header, so each lives in a file of its own. */
#ifndef SIM_MARIADB_LINK_H
#define SIM_MARIADB_LINK_H

#include "control.h"

struct dlock_provider;

/* The provider for client's lock; ctl must outlive the lock. NULL when
 * out of memory. dlock_new copies it: free it with free() after. */
struct dlock_provider *sim_mariadb_link(sim_control *ctl, int client);

#endif
