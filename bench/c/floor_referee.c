/* The floor of the referee's pipe work: the very bytes meldref writes to its bots in recorded
 * games, written the same way (one write where meldref makes one), each answer read back, to
 * instant_bot.c processes, and nothing else. What meldref spends through pipes beyond its
 * in-process play, less this, is what its own protocol code costs (bench/bench_pipes.py).
 *
 *     gcc -O2 -o floor_referee floor_referee.c
 *     ./floor_referee RECORDING BOT PASSES
 *
 * RECORDING (written by bench/bench_pipes.py): a header line "meldref-floor 1 GAME SEATS
 * DECISIONS\n", then entries, each a kind byte, a seat byte and a 4-byte little-endian number:
 *   'W' seat length, then `length` bytes: one write of them to that seat's bot;
 *   'R' seat count: read that many lines from that seat's bot (its answers).
 * Each bot is started as `BOT SEED` (seed = seat), pinned wherever this program is (it
 * inherits the affinity), greeted with "meldref 1 GAME" (untimed, read to its `ready`); then
 * the entries are replayed PASSES times, timed, and `quit` sent. Prints one line:
 *   "decisions D wall_ns W cpu_ns C bots_cpu_ns T bytes B writes N"
 * D decisions; nanoseconds in all: W wall, C this process's CPU (user and system), T its bots'
 * (Linux's /proc/PID/schedstat, 0 elsewhere); B bytes written, N writes.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_SEATS 16
#define READ_SIZE 65536

struct bot {
    int to, from;  /* its stdin (we write), its stdout (we read) */
    pid_t pid;
    char buf[READ_SIZE];
    size_t have;  /* bytes in buf not yet consumed */
};

static struct bot bots[MAX_SEATS];

static void die(const char *what) {
    perror(what);
    exit(1);
}

static void start_bot(struct bot *b, const char *program, int seat) {
    int down[2], up[2];
    if (pipe(down) || pipe(up)) die("pipe");
    b->pid = fork();
    if (b->pid < 0) die("fork");
    if (b->pid == 0) {
        char seed[16];
        snprintf(seed, sizeof seed, "%d", seat);
        dup2(down[0], 0);
        dup2(up[1], 1);
        close(down[0]); close(down[1]); close(up[0]); close(up[1]);
        execl(program, program, seed, (char *)NULL);
        _exit(127);
    }
    close(down[0]);
    close(up[1]);
    b->to = down[1];
    b->from = up[0];
    b->have = 0;
}

static void write_all(int fd, const char *data, size_t size) {
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n <= 0) die("write");
        data += n;
        size -= (size_t)n;
    }
}

/* Take one line from the bot (reading as needed, a large buffer a read); returns its start. */
static char *read_line(struct bot *b) {
    for (;;) {
        char *nl = memchr(b->buf, '\n', b->have);
        if (nl != NULL) {
            size_t used = (size_t)(nl - b->buf) + 1;
            static char line[READ_SIZE];
            memcpy(line, b->buf, used);
            line[used] = '\0';
            memmove(b->buf, b->buf + used, b->have - used);
            b->have -= used;
            return line;
        }
        if (b->have == sizeof b->buf) {
            fprintf(stderr, "floor_referee: a line longer than %d bytes\n", READ_SIZE);
            exit(1);
        }
        ssize_t n = read(b->from, b->buf + b->have, sizeof b->buf - b->have);
        if (n <= 0) die("read (the bot ended)");
        b->have += (size_t)n;
    }
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static long long ns(struct timespec t) { return t.tv_sec * 1000000000LL + t.tv_nsec; }

/* Nanoseconds the process ran on a CPU so far (Linux's schedstat; 0 where there is none). */
static long long run_ns(pid_t pid) {
    char path[64];
    long long ran = 0;
    snprintf(path, sizeof path, "/proc/%d/schedstat", (int)pid);
    FILE *f = fopen(path, "r");
    if (f == NULL) return 0;
    if (fscanf(f, "%lld", &ran) != 1) ran = 0;
    fclose(f);
    return ran;
}

static long long bots_ns(int seats) {
    long long sum = 0;
    for (int s = 0; s < seats; s++) sum += run_ns(bots[s].pid);
    return sum;
}

static long long cpu_ns(void) {
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return (u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1000000000LL
        + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1000LL;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: floor_referee RECORDING BOT PASSES\n");
        return 2;
    }
    FILE *f = fopen(argv[1], "rb");
    if (f == NULL) die(argv[1]);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *rec = malloc((size_t)size + 1);
    if (rec == NULL || fread(rec, 1, (size_t)size, f) != (size_t)size) die("reading");
    fclose(f);
    rec[size] = '\0';
    char game[64];
    int seats;
    long decisions;
    if (sscanf((char *)rec, "meldref-floor 1 %63s %d %ld", game, &seats, &decisions) != 3
        || seats < 1 || seats > MAX_SEATS) {
        fprintf(stderr, "floor_referee: %s is not a recording\n", argv[1]);
        return 2;
    }
    unsigned char *entries = (unsigned char *)strchr((char *)rec, '\n') + 1;
    unsigned char *end = rec + size;
    long passes = atol(argv[3]);

    char hello[128];
    int hello_size = snprintf(hello, sizeof hello, "meldref 1 %s\n", game);
    for (int s = 0; s < seats; s++) {
        start_bot(&bots[s], argv[2], s);
        write_all(bots[s].to, hello, (size_t)hello_size);
        while (strcmp(read_line(&bots[s]), "ready\n") != 0) {
        }
    }

    long long bytes = 0, writes = 0;
    struct timespec a, b;
    long long cpu0 = cpu_ns(), bots0 = bots_ns(seats);
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long p = 0; p < passes; p++) {
        for (unsigned char *e = entries; e + 6 <= end;) {
            char kind = (char)e[0];
            int seat = e[1];
            uint32_t n = le32(e + 2);
            e += 6;
            if (kind == 'W') {
                write_all(bots[seat].to, (const char *)e, n);
                e += n;
                bytes += n;
                writes++;
            } else {
                for (uint32_t i = 0; i < n; i++) read_line(&bots[seat]);
            }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    long long cpu = cpu_ns() - cpu0, bots_cpu = bots_ns(seats) - bots0;

    for (int s = 0; s < seats; s++) {
        write_all(bots[s].to, "quit\n", 5);
        close(bots[s].to);
        waitpid(bots[s].pid, NULL, 0);
    }
    printf("decisions %ld wall_ns %lld cpu_ns %lld bots_cpu_ns %lld bytes %lld writes %lld\n",
           decisions * passes, ns(b) - ns(a), cpu, bots_cpu, bytes, writes);
    free(rec);
    return 0;
}
