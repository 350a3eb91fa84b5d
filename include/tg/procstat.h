/* procstat.h -- this process's CPU time, memory, file descriptors and start time from /proc, for
 * the process_* metrics that Prometheus client libraries export (read at scrape time). */
#ifndef TG_PROCSTAT_H
#define TG_PROCSTAT_H

#include <stddef.h>

struct tg_procstat {
    double cpu_seconds;    /* utime + stime */
    double resident_bytes; /* rss pages x page size */
    double virtual_bytes;  /* vsize */
    double start_time;     /* unix seconds: boot time + starttime */
    double open_fds;       /* entries of /proc/self/fd */
    double max_fds;        /* soft RLIMIT_NOFILE */
};

/* Parses the text of /proc/<pid>/stat (the command name may hold spaces and parentheses: fields
 * are counted after its last ')'). ticks: clock ticks per second; page: the page size; btime: the
 * boot time (unix seconds, from /proc/stat). 0, or -EINVAL when the text is not such a line. */
int tg_procstat_parse_stat(const char *text, double ticks, double page, double btime,
                           struct tg_procstat *out);

/* The boot time from the text of /proc/stat (its "btime N" line); 0 or -EINVAL. */
int tg_procstat_parse_btime(const char *text, double *btime);

/* Reads everything for this process. 0, or -errno when /proc/self/stat cannot be read (the
 * fields that could be read are filled, the others are -1). */
int tg_procstat_read(struct tg_procstat *out);

#endif
