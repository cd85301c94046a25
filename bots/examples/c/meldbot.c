/*
 * meldbot.c - an example meldref bot in C99 (standard library only).
 *
 * It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
 * It is stateless: every decision is made from the current request (view, items, legal lines).
 *
 * Build:  cc -std=c99 -O2 -Wall -Wextra -o meldbot meldbot.c      (or: make)
 * Run:    meldref bot check ./meldbot
 *         meldref match phase10 --bot ./meldbot --bot builtin:random
 * Usage:  meldbot [seed]        (no seed: a different game every run)
 *
 * How it picks an action:
 *   - with `legal` hints: give each hint a score (lay a phase > go out or, on a last turn,
 *     lay the most cards in Five Crowns > hit > take a wild from the discard pile > discard a
 *     Skip > other discards, and never throw a wild away if something else is offered), then
 *     pick the best, ties at random;
 *   - without hints (a match may disable them): build a plain safe action from the view:
 *     `draw pile`, `discard <card>` (naming a Skip's victim), `place <open pile> <draw_top>`.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_LINE 16384          /* longest line, without its newline (section 1) */
#define MAX_WORDS 256           /* view keys we keep: pairs beyond this are ignored */
#define MAX_LEGAL 4096
#define MAX_PILES 16

/* ---- output: one line, then flush (section 2) ---------------------------------------- */

static void send_line(const char *fmt, ...)
{
    va_list args;
    va_start(args, fmt);
    vprintf(fmt, args);
    va_end(args);
    putchar('\n');
    if (fflush(stdout) != 0) exit(1);         /* the referee is gone (EPIPE): leave (section 8) */
}

/* ---- the current request -------------------------------------------------------------- */

static char view_line[MAX_LINE + 2];           /* the `view` line's words, split in place */
static char *view_key[MAX_WORDS], *view_val[MAX_WORDS];
static int view_count;

static char *legal[MAX_LEGAL];                 /* the `legal` lines of this request */
static int legal_count;

static int open_pile[MAX_PILES];               /* Solitaire: sizes of the piles still open */
static int open_pile_count;

static char *copy(const char *s)
{
    char *c = malloc(strlen(s) + 1);
    if (c == NULL) exit(1);
    return strcpy(c, s);
}

static void forget_request(void)
{
    for (int i = 0; i < legal_count; i++) free(legal[i]);
    legal_count = 0;
    view_count = 0;
    open_pile_count = 0;
}

/* A view value by key, or "" when the view has no such key. */
static const char *view(const char *key)
{
    for (int i = 0; i < view_count; i++)
        if (strcmp(view_key[i], key) == 0) return view_val[i];
    return "";
}

/* `rest` holds the words after `view`: keep them as key/value pairs. */
static void read_view(const char *rest)
{
    forget_request();
    strcpy(view_line, rest);
    char *key = strtok(view_line, " \t");
    while (key != NULL && view_count < MAX_WORDS) {
        char *value = strtok(NULL, " \t");
        if (value == NULL) break;
        view_key[view_count] = key;
        view_val[view_count] = value;
        view_count++;
        key = strtok(NULL, " \t");
    }
}

/* `item piles size 7 wild_rank 7 closed false cards ...`: remember the open piles. Other
 * items (table, seats) are not needed by this bot. */
static void read_item(char *rest)
{
    char *name = strtok(rest, " \t");
    if (name == NULL || strcmp(name, "piles") != 0) return;
    int size = 0, closed = 0;
    char *key;
    while ((key = strtok(NULL, " \t")) != NULL) {
        char *value = strtok(NULL, " \t");
        if (value == NULL) break;
        if (strcmp(key, "size") == 0) size = atoi(value);
        if (strcmp(key, "closed") == 0) closed = strcmp(value, "true") == 0;
    }
    if (!closed && open_pile_count < MAX_PILES) open_pile[open_pile_count++] = size;
}

/* ---- choosing ----------------------------------------------------------------------------- */

/* The rank of a Five Crowns card token: "10*" -> "10", "QH" -> "Q", "X" -> "X". */
static void fivecrowns_rank(const char *card, char *rank)
{
    size_t n = strlen(card);
    if (n > 1) n--;                            /* drop the suit letter */
    memcpy(rank, card, n);
    rank[n] = '\0';
}

/* Is this card token wild in the current game (W; X; Five Crowns' wild rank)? */
static int is_wild(const char *card)
{
    if (strcmp(card, "W") == 0 || strcmp(card, "X") == 0) return 1;
    const char *wild_rank = view("wild_rank");
    if (*wild_rank == '\0' || strchr(card, ':') != NULL) return 0;
    char rank[8] = "";
    if (strlen(card) < sizeof rank) fivecrowns_rank(card, rank);
    return strcmp(rank, wild_rank) == 0;
}

/* Cards laid by the groups of a Five Crowns discard: each group `kind:a,b,c` has one ':'
 * and a ',' between cards, so cards = ':' count + ',' count. */
static int cards_in_groups(const char *action)
{
    int cards = 0;
    for (const char *c = action; *c != '\0'; c++) cards += *c == ':' || *c == ',';
    return cards;
}

/* Higher is better. Only the first words of a hint matter here. */
static int score(const char *action)
{
    char words[MAX_LINE + 2];
    strcpy(words, action);
    char *verb = strtok(words, " ");
    char *arg = strtok(NULL, " ");
    char *more = strtok(NULL, " ");
    if (verb == NULL) return 0;
    if (strcmp(verb, "lay") == 0) return 100;                 /* Phase 10: lay the phase */
    if (strcmp(verb, "hit") == 0) return 60;                  /* Phase 10: shed a card */
    if (strcmp(verb, "discard") == 0 && more != NULL && strchr(more, ':') != NULL)
        return 80 + cards_in_groups(action);                  /* Five Crowns: go out / lay */
    if (strcmp(verb, "draw") == 0)
        return arg != NULL && strcmp(arg, "discard") == 0 && is_wild(view("discard_top")) ? 40 : 10;
    if (strcmp(verb, "discard") == 0 && arg != NULL) {
        if (strcmp(arg, "S") == 0) return 30;                 /* a Skip is 15 points in hand */
        if (is_wild(arg)) return -10;                         /* keep wilds */
        return 0;
    }
    return 0;                                                 /* place, or unknown */
}

static int random_below(int n)
{
    return (int)((double)rand() / ((double)RAND_MAX + 1.0) * n);
}

/* No hints: a plain action that is always legal, built from the view. */
static void fallback(char *out)
{
    const char *decision = view("decision");
    if (strcmp(decision, "draw") == 0) {
        strcpy(out, "draw pile");
    } else if (strcmp(decision, "place") == 0) {
        int pile = open_pile_count > 0 ? open_pile[0] : 3;
        sprintf(out, "place %d %.60s", pile, view("draw_top"));
    } else {                                  /* Phase 10 "play", Five Crowns "discard" */
        char hand[MAX_LINE + 2];
        strcpy(hand, view("hand"));
        char *card = strtok(hand, ",");
        const char *victims = view("victims");
        if (card == NULL) card = "-";
        if (strcmp(card, "S") == 0 && *victims != '\0' && strcmp(victims, "-") != 0)
            sprintf(out, "discard S %.*s", (int)strcspn(victims, ","), victims);
        else
            sprintf(out, "discard %.60s", card);
    }
}

static void answer(const char *id)
{
    char action[MAX_LINE + 2];
    if (legal_count == 0) {
        fallback(action);
    } else {
        int best = 0, best_score = score(legal[0]), ties = 1;
        for (int i = 1; i < legal_count; i++) {
            int s = score(legal[i]);
            if (s > best_score) {
                best = i, best_score = s, ties = 1;
            } else if (s == best_score && random_below(++ties) == 0) {
                best = i;                     /* reservoir sampling: a fair random tie */
            }
        }
        strcpy(action, legal[best]);
    }
    send_line("action %s %s", id, action);
    fprintf(stderr, "decision %s: %s (%d hints)\n", view("decision"), action, legal_count);
}

/* ---- the main loop -------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    static char line[MAX_LINE + 2];
    srand(argc > 1 ? (unsigned)atoi(argv[1]) : (unsigned)time(NULL));

    while (fgets(line, sizeof line, stdin) != NULL) {
        line[strcspn(line, "\r\n")] = '\0';   /* accept \n and \r\n */
        char *rest = line + strspn(line, " \t");
        char *kind = rest;
        rest += strcspn(rest, " \t");
        if (*rest != '\0') *rest++ = '\0';
        rest += strspn(rest, " \t");
        if (*kind == '\0') continue;           /* blank line */

        if (strcmp(kind, "meldref") == 0) {
            if (strncmp(rest, "1", 1) != 0 || (rest[1] != ' ' && rest[1] != '\0'))
                return 1;                      /* unknown protocol version: leave (section 16) */
            send_line("id name meldbot-c");
            send_line("id author meldref examples");
            send_line("ready");
        } else if (strcmp(kind, "ping") == 0) {
            send_line("pong %.*s", (int)strcspn(rest, " \t"), rest);
        } else if (strcmp(kind, "view") == 0) {
            read_view(rest);
        } else if (strcmp(kind, "item") == 0) {
            read_item(rest);
        } else if (strcmp(kind, "legal") == 0) {
            if (legal_count < MAX_LEGAL) legal[legal_count++] = copy(rest);
        } else if (strcmp(kind, "go") == 0) {
            rest[strcspn(rest, " \t")] = '\0';    /* the request id */
            answer(rest);
        } else if (strcmp(kind, "error") == 0) {
            fprintf(stderr, "refused: %s\n", rest);  /* a new request follows if we may retry */
        } else if (strcmp(kind, "quit") == 0) {
            break;
        }
        /* game, rule, player, event, gameover and anything new: ignored */
    }
    forget_request();
    return 0;
}
