// meldbot.go - an example meldref bot in Go (standard library only).
//
// It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
// It is stateless: every decision is made from the current request (view, items, legal lines).
//
// Build:  go build -o meldbot meldbot.go        (one file: no module needed)
// Run:    meldref bot check ./meldbot
//         meldref match phase10 --bot ./meldbot --bot builtin:random
// Usage:  meldbot [seed]        (no seed: a different game every run)
//
// It picks the best `legal` hint by a small score (lay a phase, go out, hit, keep wilds), ties
// at random; if the match sends no hints it builds a plain safe action from the view.
package main

import (
	"bufio"
	"fmt"
	"math/rand"
	"os"
	"strconv"
	"strings"
	"time"
)

type pairs map[string]string

// The current request, forgotten on each `view` line.
var (
	view  = pairs{}
	items = map[string][]pairs{} // e.g. items["piles"][0]["size"]
	legal []string
	rng   = rand.New(rand.NewSource(time.Now().UnixNano()))
	out   = bufio.NewWriter(os.Stdout)
)

// Section 2: one line with its "\n", flushed at once; the referee gone (EPIPE): leave.
func send(line string) {
	out.WriteString(line + "\n")
	if out.Flush() != nil {
		os.Exit(1)
	}
}

// `key value key value ...` -> map. Every value is one token (section 1).
func toPairs(words []string) pairs {
	p := pairs{}
	for i := 0; i+1 < len(words); i += 2 {
		p[words[i]] = words[i+1]
	}
	return p
}

// A list value: "-" is empty; groups are joined by ";", other elements by ",".
func list(value string) []string {
	if value == "" || value == "-" || value == "none" {
		return nil
	}
	if strings.ContainsAny(value, ";:") {
		return strings.Split(value, ";")
	}
	return strings.Split(value, ",")
}

func isWild(card string) bool {
	if card == "W" || card == "X" {
		return true
	}
	// Five Crowns: the round's rank is wild too ("10*" has rank "10").
	rank, ok := view["wild_rank"]
	return ok && len(card) > 1 && card[:len(card)-1] == rank
}

// Higher is better.
func score(action string) int {
	w := strings.Split(action, " ")
	verb, arg := w[0], ""
	if len(w) > 1 {
		arg = w[1]
	}
	switch {
	case verb == "lay":
		return 100 // Phase 10: lay the phase
	case verb == "discard" && len(w) > 2 && strings.Contains(w[2], ":"):
		// Five Crowns: go out, or on a last turn lay as many cards as possible.
		return 80 + strings.Count(action, ":") + strings.Count(action, ",")
	case verb == "hit":
		return 60 // shed a card
	case verb == "draw" && arg == "discard" && isWild(view["discard_top"]):
		return 40
	case verb == "draw":
		return 10
	case verb == "discard" && arg == "S":
		return 30 // a Skip costs 15 in hand
	case verb == "discard" && isWild(arg):
		return -10 // keep wilds
	}
	return 0
}

// No `legal` lines (hints disabled): an action that is always allowed.
func fallback() string {
	switch view["decision"] {
	case "draw":
		return "draw pile"
	case "place":
		size := "3"
		for _, pile := range items["piles"] {
			if pile["closed"] != "true" {
				size = pile["size"]
				break
			}
		}
		return "place " + size + " " + view["draw_top"] // place it and discard it again
	}
	hand, victims := list(view["hand"]), list(view["victims"])
	card := ""
	if len(hand) > 0 {
		card = hand[0]
	}
	if card == "S" && len(victims) > 0 {
		return "discard S " + victims[0]
	}
	return "discard " + card
}

func choose() string {
	if len(legal) == 0 {
		return fallback()
	}
	best := score(legal[0])
	for _, a := range legal {
		if s := score(a); s > best {
			best = s
		}
	}
	var top []string
	for _, a := range legal {
		if score(a) == best {
			top = append(top, a)
		}
	}
	return top[rng.Intn(len(top))]
}

func main() {
	if len(os.Args) > 1 {
		if seed, err := strconv.ParseInt(os.Args[1], 10, 64); err == nil {
			rng = rand.New(rand.NewSource(seed))
		}
	}
	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 1<<16), 1<<20) // lines can be long: a request's `legal` list
	for in.Scan() {
		words := strings.Fields(in.Text())
		if len(words) == 0 {
			continue
		}
		kind, args, first := words[0], words[1:], ""
		if len(args) > 0 {
			first = args[0]
		}
		switch kind {
		case "meldref":
			if first != "1" {
				os.Exit(1) // unknown protocol version (section 16)
			}
			send("id name meldbot-go")
			send("id author meldref examples")
			send("ready")
		case "ping":
			send("pong " + first)
		case "view":
			view, items, legal = toPairs(args), map[string][]pairs{}, nil
		case "item":
			if len(args) > 0 {
				items[first] = append(items[first], toPairs(args[1:]))
			}
		case "legal":
			legal = append(legal, strings.Join(args, " "))
		case "go":
			action := choose()
			send("action " + first + " " + action)
			fmt.Fprintf(os.Stderr, "decision %s: %s (%d hints)\n", view["decision"], action, len(legal))
		case "error":
			fmt.Fprintf(os.Stderr, "refused: %s\n", strings.Join(args, " ")) // a new request may follow
		case "quit":
			return
		}
		// game, rule, player, event, gameover and anything new: ignored.
	}
}
