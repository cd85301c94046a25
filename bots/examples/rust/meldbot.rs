// meldbot.rs - an example meldref bot in Rust (standard library only, no crates).
//
// It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
// It is stateless: every decision is made from the current request (view, items, legal lines).
//
// Build:  rustc -O -o meldbot meldbot.rs        (one file: no Cargo project needed)
// Run:    meldref bot check ./meldbot
//         meldref match phase10 --bot ./meldbot --bot builtin:random
// Usage:  meldbot [seed]        (no seed: a different game every run)
//
// It picks the best `legal` hint by a small score (lay a phase, go out, hit, keep wilds), ties
// at random; if the match sends no hints it builds a plain safe action from the view.
use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::time::{SystemTime, UNIX_EPOCH};

type Pairs = HashMap<String, String>;

// Section 2: one line with its "\n", flushed at once; the referee gone (EPIPE): leave.
fn send(out: &mut impl Write, line: &str) {
    if writeln!(out, "{}", line).and_then(|_| out.flush()).is_err() {
        std::process::exit(1);
    }
}

// `key value key value ...` -> map. Every value is one token (section 1).
fn pairs(words: &[&str]) -> Pairs {
    words.chunks_exact(2).map(|kv| (kv[0].to_string(), kv[1].to_string())).collect()
}

// A list value: "-" is empty; groups are joined by ";", other elements by ",".
fn list(value: Option<&String>) -> Vec<String> {
    match value.map(String::as_str) {
        None | Some("") | Some("-") | Some("none") => vec![],
        Some(v) => {
            let sep = if v.contains(';') || v.contains(':') { ';' } else { ',' };
            v.split(sep).map(str::to_string).collect()
        }
    }
}

// A small random generator (xorshift64*): ties are broken at random, no crates needed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 33) as usize % n
    }
}

// The current request, forgotten on each `view` line.
#[derive(Default)]
struct Request {
    view: Pairs,
    items: HashMap<String, Vec<Pairs>>, // e.g. items["piles"][0]["size"]
    legal: Vec<String>,
}

impl Request {
    fn get(&self, key: &str) -> &str {
        self.view.get(key).map(String::as_str).unwrap_or("")
    }

    fn is_wild(&self, card: &str) -> bool {
        if card == "W" || card == "X" {
            return true;
        }
        // Five Crowns: the round's rank is wild too ("10*" has rank "10").
        match self.view.get("wild_rank") {
            Some(rank) => card.len() > 1 && &card[..card.len() - 1] == rank,
            None => false,
        }
    }

    // Higher is better.
    fn score(&self, action: &str) -> i32 {
        let w: Vec<&str> = action.split(' ').collect();
        let (verb, arg) = (w[0], w.get(1).copied().unwrap_or(""));
        if verb == "lay" {
            return 100; // Phase 10: lay the phase
        }
        if verb == "discard" && w.get(2).is_some_and(|m| m.contains(':')) {
            // Five Crowns: go out, or on a last turn lay as many cards as possible.
            return 80 + action.chars().filter(|&c| c == ':' || c == ',').count() as i32;
        }
        match verb {
            "hit" => 60, // shed a card
            "draw" if arg == "discard" && self.is_wild(self.get("discard_top")) => 40,
            "draw" => 10,
            "discard" if arg == "S" => 30, // a Skip costs 15 in hand
            "discard" if self.is_wild(arg) => -10, // keep wilds
            _ => 0,
        }
    }

    // No `legal` lines (hints disabled): an action that is always allowed.
    fn fallback(&self) -> String {
        match self.get("decision") {
            "draw" => "draw pile".to_string(),
            "place" => {
                let open = self.items.get("piles").into_iter().flatten()
                    .find(|p| p.get("closed").map(String::as_str) != Some("true"));
                let size = open.and_then(|p| p.get("size")).map(String::as_str).unwrap_or("3");
                format!("place {} {}", size, self.get("draw_top")) // place it, discard it
            }
            _ => {
                let hand = list(self.view.get("hand"));
                let victims = list(self.view.get("victims"));
                let card = hand.first().map(String::as_str).unwrap_or("");
                match victims.first() {
                    Some(victim) if card == "S" => format!("discard S {}", victim),
                    _ => format!("discard {}", card),
                }
            }
        }
    }

    fn choose(&self, rng: &mut Rng) -> String {
        let Some(best) = self.legal.iter().map(|a| self.score(a)).max() else {
            return self.fallback();
        };
        let top: Vec<&String> = self.legal.iter().filter(|a| self.score(a) == best).collect();
        top[rng.below(top.len())].clone()
    }
}

fn main() {
    let seed = std::env::args().nth(1).and_then(|s| s.parse::<u64>().ok()).unwrap_or_else(|| {
        SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut out = io::stdout().lock();
    let mut request = Request::default();
    for raw in io::stdin().lock().lines() {
        let Ok(raw) = raw else { break };
        let words: Vec<&str> = raw.split_whitespace().collect();
        let Some((&kind, args)) = words.split_first() else { continue };
        let first = args.first().copied().unwrap_or("");
        match kind {
            "meldref" => {
                if first != "1" {
                    std::process::exit(1); // unknown protocol version (section 16)
                }
                send(&mut out, "id name meldbot-rust");
                send(&mut out, "id author meldref examples");
                send(&mut out, "ready");
            }
            "ping" => send(&mut out, &format!("pong {}", first)),
            "view" => request = Request { view: pairs(args), ..Request::default() },
            "item" => {
                let record = pairs(args.get(1..).unwrap_or(&[]));
                request.items.entry(first.to_string()).or_default().push(record);
            }
            "legal" => request.legal.push(args.join(" ")),
            "go" => {
                let action = request.choose(&mut rng);
                send(&mut out, &format!("action {} {}", first, action));
                eprintln!("decision {}: {} ({} hints)", request.get("decision"), action,
                          request.legal.len());
            }
            "error" => eprintln!("refused: {}", args.join(" ")), // a new request may follow
            "quit" => return,
            _ => {} // game, rule, player, event, gameover and anything new: ignored
        }
    }
}
