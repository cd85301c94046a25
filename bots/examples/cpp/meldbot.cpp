// meldbot.cpp - an example meldref bot in C++17 (standard library only).
//
// It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
// It is stateless: every decision is made from the current request (view, items, legal lines).
//
// Build:  g++ -std=c++17 -O2 -Wall -Wextra -o meldbot meldbot.cpp
// Run:    meldref bot check ./meldbot
//         meldref match phase10 --bot ./meldbot --bot builtin:random
// Usage:  meldbot [seed]        (no seed: a different game every run)
//
// It picks the best `legal` hint by a small score (lay a phase, go out, hit, keep wilds), ties
// at random; if the match sends no hints it builds a plain safe action from the view.
#include <algorithm>
#include <iostream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using Words = std::vector<std::string>;
using Pairs = std::map<std::string, std::string>;

// Section 2: one line with its "\n", flushed at once (std::endl flushes).
static void send(const std::string &line) { std::cout << line << std::endl; }

// Splits on any run of spaces or tabs; a trailing "\r" is whitespace too.
static Words split(const std::string &raw) {
    std::istringstream in(raw);
    Words words;
    for (std::string w; in >> w;) words.push_back(w);
    return words;
}

// `key value key value ...` -> map. Every value is one token (section 1).
static Pairs pairs(const Words &words, size_t from) {
    Pairs out;
    for (size_t i = from; i + 1 < words.size(); i += 2) out[words[i]] = words[i + 1];
    return out;
}

// A list value: "-" is empty; groups are joined by ";", other elements by ",".
static Words list(const std::string &value) {
    Words out;
    if (value.empty() || value == "-" || value == "none") return out;
    char sep = value.find_first_of(";:") != std::string::npos ? ';' : ',';
    std::string part;
    std::istringstream in(value);
    while (std::getline(in, part, sep)) out.push_back(part);
    return out;
}

// The current request, forgotten on each `view` line.
static Pairs view;
static std::map<std::string, std::vector<Pairs>> items;  // e.g. items["piles"][0]["size"]
static Words legal;
static std::mt19937 rng;

static std::string get(const Pairs &p, const std::string &key) {
    auto it = p.find(key);
    return it == p.end() ? "" : it->second;
}

static bool is_wild(const std::string &card) {
    if (card == "W" || card == "X") return true;
    // Five Crowns: the round's rank is wild too ("10*" has rank "10").
    auto rank = view.find("wild_rank");
    return rank != view.end() && card.size() > 1 && card.substr(0, card.size() - 1) == rank->second;
}

// Higher is better.
static int score(const std::string &action) {
    Words w = split(action);
    std::string verb = w.size() > 0 ? w[0] : "", arg = w.size() > 1 ? w[1] : "";
    if (verb == "lay") return 100;                                 // Phase 10: lay the phase
    if (verb == "discard" && w.size() > 2 && w[2].find(':') != std::string::npos) {
        // Five Crowns: go out, or on a last turn lay as many cards as possible.
        return 80 + (int)std::count_if(action.begin(), action.end(),
                                       [](char c) { return c == ':' || c == ','; });
    }
    if (verb == "hit") return 60;                                  // shed a card
    if (verb == "draw") return arg == "discard" && is_wild(get(view, "discard_top")) ? 40 : 10;
    if (verb == "discard" && arg == "S") return 30;                // a Skip costs 15 in hand
    if (verb == "discard" && is_wild(arg)) return -10;             // keep wilds
    return 0;
}

// No `legal` lines (hints disabled): an action that is always allowed.
static std::string fallback() {
    std::string decision = get(view, "decision");
    if (decision == "draw") return "draw pile";
    if (decision == "place") {
        std::string size = "3";
        for (const Pairs &pile : items["piles"])
            if (get(pile, "closed") != "true") { size = get(pile, "size"); break; }
        return "place " + size + " " + get(view, "draw_top");      // place it and discard it
    }
    Words hand = list(get(view, "hand")), victims = list(get(view, "victims"));
    std::string card = hand.empty() ? "" : hand[0];
    return card == "S" && !victims.empty() ? "discard S " + victims[0] : "discard " + card;
}

static std::string choose() {
    if (legal.empty()) return fallback();
    int best = score(legal[0]);
    for (const auto &a : legal) best = std::max(best, score(a));
    Words top;
    for (const auto &a : legal) if (score(a) == best) top.push_back(a);
    return top[std::uniform_int_distribution<size_t>(0, top.size() - 1)(rng)];
}

static std::string join(const Words &w, size_t from) {
    std::string out;
    for (size_t i = from; i < w.size(); ++i) out += (i > from ? " " : "") + w[i];
    return out;
}

int main(int argc, char **argv) {
    rng.seed(argc > 1 ? (unsigned)std::stoul(argv[1]) : std::random_device{}());
    std::string raw;
    while (std::getline(std::cin, raw)) {
        Words w = split(raw);
        if (w.empty()) continue;
        const std::string &kind = w[0];
        std::string first = w.size() > 1 ? w[1] : "";
        if (kind == "meldref") {
            if (first != "1") return 1;  // unknown protocol version (section 16)
            send("id name meldbot-cpp");
            send("id author meldref examples");
            send("ready");
        } else if (kind == "ping") {
            send("pong " + first);
        } else if (kind == "view") {
            view = pairs(w, 1);
            items.clear();
            legal.clear();
        } else if (kind == "item") {
            items[first].push_back(pairs(w, 2));
        } else if (kind == "legal") {
            legal.push_back(join(w, 1));
        } else if (kind == "go") {
            std::string action = choose();
            send("action " + first + " " + action);
            std::cerr << "decision " << get(view, "decision") << ": " << action << " ("
                      << legal.size() << " hints)" << std::endl;
        } else if (kind == "error") {
            std::cerr << "refused: " << join(w, 1) << std::endl;  // a new request may follow
        } else if (kind == "quit") {
            return 0;
        }
        // game, rule, player, event, gameover and anything new: ignored.
    }
    return 0;  // end of input
}
