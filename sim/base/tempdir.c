/* tempdir: temp dirs, their registry, and removing a tree with system
 * calls only. See tempdir.h. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tempdir.h"
#include "util.h"

#define MAX_DIRS 16          /* live temp dirs per process: a run needs 1 */
#define TREE_DEPTH 8         /* a test's temp dir / a run's / a MariaDB server's
                              * dir / data / a database / files: 5; a
                              * Redis server's files lie at 2 */

/* ---- the registry ------------------------------------------------------
 * Entries belong to the process that made them (owner), so a forked child
 * never removes its parent's dirs. The owner is atomic because the
 * cleanup may read it from a signal handler; the mutex only orders
 * writers. An entry is published by setting owner last and retired by
 * clearing owner first. */
typedef struct reg_dir {
    char path[SIM_PATH_LEN]; /* a temp dir to remove */
    atomic_int owner;        /* the process that made it; 0 = free slot */
} reg_dir;

static reg_dir dirs[MAX_DIRS];
static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;

static int register_dir(const char *path)
{
    int i, found = -1;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_DIRS && found < 0; i++) {
        if (atomic_load(&dirs[i].owner) == 0) {
            snprintf(dirs[i].path, sizeof(dirs[i].path), "%s", path);
            atomic_store(&dirs[i].owner, getpid());
            found = i;
        }
    }
    pthread_mutex_unlock(&reg_lock);
    return found < 0 ? -1 : 0;
}

static void unregister_dir(const char *path)
{
    int i;

    pthread_mutex_lock(&reg_lock);
    for (i = 0; i < MAX_DIRS; i++) {
        if (atomic_load(&dirs[i].owner) == getpid() &&
            strcmp(dirs[i].path, path) == 0)
            atomic_store(&dirs[i].owner, 0);
    }
    pthread_mutex_unlock(&reg_lock);
}

/* ---- removing a directory tree ------------------------------------------
 * With system calls only (getdents64, unlinkat), not nftw or readdir, which
 * allocate: this also runs in a signal handler. Our trees are shallow and
 * small, so a bounded depth and a few passes per directory are enough. */
struct dirent_raw {
    uint64_t d_ino;
    int64_t d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

static int is_dot(const char *name)
{
    return strcmp(name, ".") == 0 || strcmp(name, "..") == 0;
}

static void remove_tree_at(int parentfd, const char *name, int depth);

/* Removes what dirfd contains; returns how many entries it saw. */
static int empty_dir(int dirfd, int depth)
{
    _Alignas(8) char buf[4096];
    long n, off;
    int seen = 0;

    while ((n = getdents64(dirfd, buf, sizeof(buf))) > 0) {
        for (off = 0; off < n;) {
            struct dirent_raw *d = (struct dirent_raw *)(buf + off);

            off += d->d_reclen;
            if (is_dot(d->d_name))
                continue;
            seen++;
            if (d->d_type == DT_DIR)
                remove_tree_at(dirfd, d->d_name, depth + 1);
            else
                unlinkat(dirfd, d->d_name, 0);
        }
    }
    return seen;
}

static void remove_tree_at(int parentfd, const char *name, int depth)
{
    int fd, pass;

    fd = openat(parentfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        unlinkat(parentfd, name, 0);
        return;
    }
    /* Deleting while reading may hide entries from the same pass; rescan
     * until a pass finds the directory empty. */
    for (pass = 0; depth < TREE_DEPTH && pass < 4; pass++) {
        if (empty_dir(fd, depth) == 0)
            break;
        lseek(fd, 0, SEEK_SET);
    }
    close(fd);
    unlinkat(parentfd, name, AT_REMOVEDIR);
}

void sim_tempdir_remove_tree(const char *path)
{
    remove_tree_at(AT_FDCWD, path, 0);
}

/* ---- temp dirs ------------------------------------------------------------ */

int sim_tempdir_create(char *path, size_t len, char *errstr, size_t errlen)
{
    const char *tmp = getenv("TMPDIR");

    if (tmp == NULL || tmp[0] == '\0')
        tmp = "/tmp";
    if ((size_t)snprintf(path, len, "%s/lockstep.XXXXXX", tmp) >= len ||
        len < SIM_PATH_LEN)
        return sim_error(errstr, errlen, "TMPDIR is too long: %s", tmp);
    if (mkdtemp(path) == NULL)
        return sim_error(errstr, errlen, "mkdtemp %s: %s", path, strerror(errno));
    if (register_dir(path) != 0) {
        sim_tempdir_remove_tree(path);
        return sim_error(errstr, errlen, "more than %d temp dirs at once", MAX_DIRS);
    }
    return 0;
}

void sim_tempdir_remove(const char *path)
{
    char copy[SIM_PATH_LEN];

    /* path may be the registry's own copy: keep ours past unregistering. */
    snprintf(copy, sizeof(copy), "%s", path);
    unregister_dir(copy);
    sim_tempdir_remove_tree(copy);
}

/* Only system calls and atomics: this runs in signal handlers too. */
void sim_tempdir_cleanup(void)
{
    pid_t me = getpid();
    int i;

    for (i = 0; i < MAX_DIRS; i++) {
        if (atomic_load(&dirs[i].owner) == me) {
            sim_tempdir_remove_tree(dirs[i].path);
            atomic_store(&dirs[i].owner, 0);
        }
    }
}
