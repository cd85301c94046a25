// MeldBot.java - an example meldref bot in Java 11+ (standard library only).
//
// It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
// It is stateless: every decision is made from the current request (view, items, legal lines).
//
// Build:  javac -d build MeldBot.java        (or run the source at once: java MeldBot.java)
// Run:    meldref bot check "java -cp build MeldBot"
//         meldref match phase10 --bot "java -cp build MeldBot" --bot builtin:random
// Usage:  MeldBot [seed]        (no seed: a different game every run)
//
// It picks the best `legal` hint by a small score (lay a phase, go out, hit, keep wilds), ties
// at random; if the match sends no hints it builds a plain safe action from the view.
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

public final class MeldBot {
    // Section 2: one line with its "\n", flushed at once.
    private static final PrintStream OUT = new PrintStream(System.out, false, StandardCharsets.UTF_8);

    private static void send(String line) {
        OUT.print(line + "\n");
        OUT.flush();
    }

    // The current request, forgotten on each `view` line.
    private static Map<String, String> view = new HashMap<>();
    private static Map<String, List<Map<String, String>>> items = new HashMap<>();
    private static List<String> legal = new ArrayList<>();
    private static Random rng = new Random();

    // `key value key value ...` -> map. Every value is one token (section 1).
    private static Map<String, String> pairs(String[] words, int from) {
        Map<String, String> out = new HashMap<>();
        for (int i = from; i + 1 < words.length; i += 2) out.put(words[i], words[i + 1]);
        return out;
    }

    // A list value: "-" is empty; groups are joined by ";", other elements by ",".
    private static List<String> list(String value) {
        if (value == null || value.isEmpty() || value.equals("-") || value.equals("none")) {
            return List.of();
        }
        String sep = value.contains(";") || value.contains(":") ? ";" : ",";
        return Arrays.asList(value.split(sep, -1));
    }

    private static boolean isWild(String card) {
        if (card.equals("W") || card.equals("X")) return true;
        // Five Crowns: the round's rank is wild too ("10*" has rank "10").
        String rank = view.get("wild_rank");
        return rank != null && card.length() > 1 && card.substring(0, card.length() - 1).equals(rank);
    }

    // Higher is better.
    private static int score(String action) {
        String[] w = action.split(" ");
        String verb = w[0], arg = w.length > 1 ? w[1] : "";
        if (verb.equals("lay")) return 100;                            // Phase 10: lay the phase
        if (verb.equals("discard") && w.length > 2 && w[2].contains(":")) {
            // Five Crowns: go out, or on a last turn lay as many cards as possible.
            return 80 + (int) action.chars().filter(c -> c == ':' || c == ',').count();
        }
        if (verb.equals("hit")) return 60;                             // shed a card
        if (verb.equals("draw")) {
            return arg.equals("discard") && isWild(view.getOrDefault("discard_top", "")) ? 40 : 10;
        }
        if (verb.equals("discard") && arg.equals("S")) return 30;      // a Skip costs 15 in hand
        if (verb.equals("discard") && isWild(arg)) return -10;         // keep wilds
        return 0;
    }

    // No `legal` lines (hints disabled): an action that is always allowed.
    private static String fallback() {
        String decision = view.getOrDefault("decision", "");
        if (decision.equals("draw")) return "draw pile";
        if (decision.equals("place")) {
            String size = "3";
            for (Map<String, String> pile : items.getOrDefault("piles", List.of())) {
                if (!"true".equals(pile.get("closed"))) {
                    size = pile.get("size");
                    break;
                }
            }
            return "place " + size + " " + view.get("draw_top");  // place it and discard it
        }
        List<String> hand = list(view.get("hand")), victims = list(view.get("victims"));
        String card = hand.isEmpty() ? "" : hand.get(0);
        return card.equals("S") && !victims.isEmpty() ? "discard S " + victims.get(0)
                                                      : "discard " + card;
    }

    private static String choose() {
        if (legal.isEmpty()) return fallback();
        int best = Integer.MIN_VALUE;
        for (String a : legal) best = Math.max(best, score(a));
        List<String> top = new ArrayList<>();
        for (String a : legal) if (score(a) == best) top.add(a);
        return top.get(rng.nextInt(top.size()));
    }

    public static void main(String[] args) throws IOException {
        if (args.length > 0) rng = new Random(Long.parseLong(args[0]));
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String raw; (raw = in.readLine()) != null; ) {
            String line = raw.strip();
            if (line.isEmpty()) continue;
            String[] w = line.split("\\s+");
            String kind = w[0], first = w.length > 1 ? w[1] : "";
            String rest = String.join(" ", Arrays.copyOfRange(w, 1, w.length));
            switch (kind) {
                case "meldref":
                    if (!first.equals("1")) System.exit(1);  // unknown protocol version (section 16)
                    send("id name meldbot-java");
                    send("id author meldref examples");
                    send("ready");
                    break;
                case "ping":
                    send("pong " + first);
                    break;
                case "view":
                    view = pairs(w, 1);
                    items = new HashMap<>();
                    legal = new ArrayList<>();
                    break;
                case "item":
                    items.computeIfAbsent(first, k -> new ArrayList<>()).add(pairs(w, 2));
                    break;
                case "legal":
                    legal.add(rest);
                    break;
                case "go": {
                    String action = choose();
                    send("action " + first + " " + action);
                    System.err.println("decision " + view.get("decision") + ": " + action + " ("
                                       + legal.size() + " hints)");
                    break;
                }
                case "error":
                    System.err.println("refused: " + rest);  // a new request follows if we may retry
                    break;
                case "quit":
                    return;
                default:
                    // game, rule, player, event, gameover and anything new: ignored.
                    break;
            }
        }
    }
}
