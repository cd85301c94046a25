/* An instant bot for bench/run.py: answers each request with one of its `legal` lines, chosen
 * by a fixed 64-bit LCG (the same as bench/run.py's in-process twin, so both play the very same
 * games), at once. Nothing else: the referee's own cost is what the benchmark measures.
 *
 *     gcc -O2 -o instant_bot instant_bot.c && ./instant_bot SEED
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE 16386     /* 16384 bytes, the newline and the final NUL */
#define MAX_LEGAL 4096

static char line[MAX_LINE];
static char *legal[MAX_LEGAL];
static int legal_count;
static uint64_t state;

static uint64_t next_random(void) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return state >> 33;
}

static void forget_legal(void) {
    for (int i = 0; i < legal_count; i++) free(legal[i]);
    legal_count = 0;
}

int main(int argc, char **argv) {
    state = argc > 1 ? strtoull(argv[1], NULL, 10) : 0;
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\r\n")] = '\0';
        if (strncmp(line, "meldref ", 8) == 0) {
            printf("id name instant_bot\nready\n");
        } else if (strncmp(line, "view", 4) == 0 && (line[4] == ' ' || line[4] == '\0')) {
            forget_legal();
        } else if (strncmp(line, "legal ", 6) == 0 && legal_count < MAX_LEGAL) {
            legal[legal_count++] = strdup(line + 6);
        } else if (strncmp(line, "go ", 3) == 0) {
            char *id = line + 3;
            id[strcspn(id, " ")] = '\0';
            if (legal_count == 0) {
                fprintf(stderr, "instant_bot: a request without legal lines\n");
                return 1;
            }
            printf("action %s %s\n", id, legal[next_random() % (uint64_t)legal_count]);
        } else if (strncmp(line, "ping ", 5) == 0) {
            printf("pong %s\n", line + 5);
        } else if (strcmp(line, "quit") == 0) {
            break;
        } else {
            continue;
        }
        fflush(stdout);
    }
    forget_legal();
    return 0;
}
