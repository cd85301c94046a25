/* The physical limit of a request and its answer here: two C processes, one line each way
 * through a pair of pipes, with the same read/write calls a bot's stdio makes.
 *
 *     gcc -O2 -o pipe_pair pipe_pair.c && ./pipe_pair ROUND_TRIPS
 * prints the mean nanoseconds of one round trip.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char ask[] = "go 17 decision draw time 1000 bank 5000\n";
static const char answer[] = "action 17 draw pile\n";

static int read_line(int fd, char *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        ssize_t n = read(fd, buf + got, size - got);
        if (n <= 0) return -1;
        got += (size_t)n;
        if (buf[got - 1] == '\n') return (int)got;
    }
    return -1;
}

int main(int argc, char **argv) {
    long trips = argc > 1 ? atol(argv[1]) : 20000;
    int down[2], up[2];
    char buf[256];
    if (pipe(down) || pipe(up)) return 1;
    pid_t child = fork();
    if (child == 0) {
        close(down[1]);
        close(up[0]);
        while (read_line(down[0], buf, sizeof buf) > 0)
            if (write(up[1], answer, sizeof answer - 1) < 0) break;
        _exit(0);
    }
    close(down[0]);
    close(up[1]);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < trips; i++) {
        if (write(down[1], ask, sizeof ask - 1) < 0 || read_line(up[0], buf, sizeof buf) < 0)
            return 1;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    close(down[1]);
    waitpid(child, NULL, 0);
    double ns = (b.tv_sec - a.tv_sec) * 1e9 + (b.tv_nsec - a.tv_nsec);
    printf("%.0f\n", ns / trips);
    return 0;
}
