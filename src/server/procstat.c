/* procstat.c -- process_* metrics from /proc/self/stat, /proc/stat and /proc/self/fd, computed the
 * way Prometheus' Go client does (utime+stime over the clock tick rate, rss x page size, boot
 * time + starttime over the tick rate, the soft open-files limit). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "tg/procstat.h"

/* Fields of /proc/<pid>/stat (proc(5), counted from 1): utime 14, stime 15, starttime 22,
 * vsize 23, rss 24. After the ')' that closes field 2 comes field 3. */
#define F_UTIME 14
#define F_STIME 15
#define F_STARTTIME 22
#define F_VSIZE 23
#define F_RSS 24

int tg_procstat_parse_stat(const char *text, double ticks, double page, double btime,
                           struct tg_procstat *out)
{
    const char *p = strrchr(text, ')');
    double v[F_RSS + 1] = {0};
    int field = 3;

    if (!p || ticks <= 0)
        return -EINVAL;
    p++;
    while (field <= F_RSS) {
        char *end;
        while (*p == ' ')
            p++;
        if (!*p || *p == '\n')
            return -EINVAL;
        if (field == 3) { /* the state: one letter */
            while (*p && *p != ' ')
                p++;
        } else {
            errno = 0;
            v[field] = strtod(p, &end);
            if (end == p || errno)
                return -EINVAL;
            p = end;
        }
        field++;
    }
    out->cpu_seconds = (v[F_UTIME] + v[F_STIME]) / ticks;
    out->start_time = btime + v[F_STARTTIME] / ticks;
    out->virtual_bytes = v[F_VSIZE];
    out->resident_bytes = v[F_RSS] * page;
    return 0;
}

int tg_procstat_parse_btime(const char *text, double *btime)
{
    const char *p = text;

    while (p && *p) {
        if (!strncmp(p, "btime ", 6)) {
            char *end;
            double v = strtod(p + 6, &end);
            if (end == p + 6)
                return -EINVAL;
            *btime = v;
            return 0;
        }
        p = strchr(p, '\n');
        if (p)
            p++;
    }
    return -EINVAL;
}

/* A small /proc file into buf (NUL-terminated); its length or -errno. */
static ssize_t read_small(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    size_t n = 0;

    if (fd < 0)
        return -errno;
    while (n + 1 < cap) {
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    buf[n] = '\0';
    return (ssize_t)n;
}

static double count_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    struct dirent *e;
    double n = 0;

    if (!d)
        return -1;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.')
            n++;
    closedir(d);
    return n - 1; /* the directory stream's own descriptor */
}

/* The boot time, read once: /proc/stat's intr line can be long, so it is read line by line. */
static double boot_time(void)
{
    static double cached;
    FILE *f;
    char *line = NULL;
    size_t cap = 0;

    if (cached > 0)
        return cached;
    f = fopen("/proc/stat", "re");
    if (!f)
        return 0;
    while (getline(&line, &cap, f) > 0)
        if (tg_procstat_parse_btime(line, &cached) == 0)
            break;
    free(line);
    fclose(f);
    return cached;
}

int tg_procstat_read(struct tg_procstat *out)
{
    char stat[1024];
    struct rlimit rl;
    ssize_t n;

    out->cpu_seconds = out->resident_bytes = out->virtual_bytes = out->start_time = -1;
    out->open_fds = count_fds();
    out->max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                       ? (double)rl.rlim_cur
                       : -1;
    n = read_small("/proc/self/stat", stat, sizeof(stat));
    if (n < 0)
        return (int)n;
    double btime = boot_time();
    if (tg_procstat_parse_stat(stat, (double)sysconf(_SC_CLK_TCK), (double)sysconf(_SC_PAGESIZE),
                               btime, out) < 0)
        return -EINVAL;
    if (btime <= 0)
        out->start_time = -1; /* unknown, not "since boot" */
    return 0;
}
