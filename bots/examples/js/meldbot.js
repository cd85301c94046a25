#!/usr/bin/env node
// meldbot.js - an example meldref bot for Node.js 18+ (no packages).
//
// It plays Phase 10, Five Crowns and Five Crowns Solitaire, written from spec/PROTOCOL.md alone.
// It is stateless: every decision is made from the current request (view, items, legal lines).
//
// Run:    meldref bot check "node bots/examples/js/meldbot.js"
//         meldref match fivecrowns --bot "node bots/examples/js/meldbot.js" --bot builtin:random
//
// It picks the best `legal` hint by a small score (lay a phase, go out, hit, keep wilds), ties at
// random; if the match sends no hints it builds a plain safe action from the view.
"use strict";
const readline = require("node:readline");

// Section 2: one line, with its "\n". Node writes to a pipe in order; we never exit before
// our output is written (see "quit" below).
function send(line) {
  process.stdout.write(line + "\n");
}

// `key value key value ...` -> {key: value}. Every value is one token (section 1).
function pairs(words) {
  const out = {};
  for (let i = 0; i + 1 < words.length; i += 2) out[words[i]] = words[i + 1];
  return out;
}

// A list value: "-" is empty; groups are joined by ";", other elements by ",".
function list(value) {
  if (value === undefined || value === "-" || value === "none") return [];
  return value.split(/[;:]/.test(value) ? ";" : ",");
}

// The current request, forgotten on each `view` line.
let view = {};
let items = {};   // item name -> list of records, e.g. items.piles[0].size
let legal = [];

function isWild(card) {
  if (card === "W" || card === "X") return true;
  // Five Crowns: the round's rank is wild too ("10*" has rank "10").
  return view.wild_rank !== undefined && card.length > 1 && card.slice(0, -1) === view.wild_rank;
}

// Higher is better.
function score(action) {
  const [verb, arg, more] = action.split(" ");
  if (verb === "lay") return 100;                                  // Phase 10: lay the phase
  if (verb === "discard" && more !== undefined && more.includes(":")) {
    // Five Crowns: go out, or on a last turn lay as many cards as possible.
    return 80 + (action.match(/[:,]/g) || []).length;  // "kind:a,b,c" -> 3 cards
  }
  if (verb === "hit") return 60;                                   // shed a card
  if (verb === "draw") return arg === "discard" && isWild(view.discard_top || "") ? 40 : 10;
  if (verb === "discard" && arg === "S") return 30;                // a Skip costs 15 in hand
  if (verb === "discard" && isWild(arg)) return -10;               // keep wilds
  return 0;
}

function choose() {
  if (legal.length === 0) return fallback();
  const best = Math.max(...legal.map(score));
  const top = legal.filter((a) => score(a) === best);
  return top[Math.floor(Math.random() * top.length)];
}

// No `legal` lines (hints disabled): an action that is always allowed.
function fallback() {
  if (view.decision === "draw") return "draw pile";
  if (view.decision === "place") {
    const open = (items.piles || []).find((p) => p.closed !== "true");
    return `place ${open ? open.size : 3} ${view.draw_top}`;   // place it and discard it again
  }
  const card = list(view.hand)[0];
  const victims = list(view.victims);
  return card === "S" && victims.length > 0 ? `discard S ${victims[0]}` : `discard ${card}`;
}

const input = readline.createInterface({ input: process.stdin, terminal: false });
let quitting = false;

input.on("line", (raw) => {
  // After close(), readline still hands out the lines it had already read: drop them.
  if (quitting) return;
  const words = raw.trim().split(/\s+/);
  const [kind, ...args] = words;
  switch (kind) {
    case "meldref":
      if (args[0] !== "1") process.exit(1);     // unknown protocol version (section 16)
      send("id name meldbot-js");
      send("id author meldref examples");
      send("ready");
      break;
    case "ping":
      send(`pong ${args[0]}`);
      break;
    case "view":
      view = pairs(args);
      items = {};
      legal = [];
      break;
    case "item":
      (items[args[0]] ||= []).push(pairs(args.slice(1)));
      break;
    case "legal":
      legal.push(args.join(" "));
      break;
    case "go": {
      const action = choose();
      send(`action ${args[0]} ${action}`);
      console.error(`decision ${view.decision}: ${action} (${legal.length} hints)`);
      break;
    }
    case "error":
      console.error(`refused: ${args.join(" ")}`);  // a new request follows if we may retry
      break;
    case "quit":
      quitting = true;
      input.close();
      break;
    default:
      // "", game, rule, player, event, gameover and anything new: ignored.
      break;
  }
});

// On quit or end of input: stop reading; Node exits once stdout is written.
input.on("close", () => process.stdin.destroy());
