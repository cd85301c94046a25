/* meldref replay viewer: draws the table of one recorded game at any step.
 *
 * The data (JSON in #meldref-data) is built by meldref/replay/html.py: `steps` say what happened
 * (in words, with faults and think times), `frames` hold the table after each step (the first
 * whole, then only what changed, as flat `key` / `key.i` entries), `logs` the end of each bot's
 * stderr log when a tournament kept one (replay/botlogs.py). Every text from the replay (bot
 * names, fault details, logs) is put in the page as text, never as markup. The page can save
 * itself (the download link) and show another page written by `meldref replay html`, opened
 * from disk: that page's data is read and drawn by this script, its own script never runs. */
"use strict";
// The page as it came, before anything is drawn: what the download link saves.
const SOURCE = "<!doctype html>\n" + document.documentElement.outerHTML;

/* Draws the game `D` and answers the page's controls until `signal` aborts (another game is
 * opened in the page). */
function viewer(D, signal, fromStart) {
  const $ = (id) => document.getElementById(id);
  const STEPS = D.steps;
  const COUNT = STEPS.length;
  const N = D.players;
  // What to draw for this game and the values to compare with, both from Python
  // (replay/games/<game>.py and the enums): the script names no game and spells no value.
  const LOOK = D.look;
  const E = D.enums;
  const PILES = LOOK.layout === "piles"; // a panel per pile (Solitaire), else one per seat
  const HAND = LOOK.deal_word || "hand";
  const FLAT = expand(D.frames);
  const SVGNS = "http://www.w3.org/2000/svg";
  const P10_RE = /^([RBYG])(1[0-2]|[1-9])$/;
  const FC_RE = /^(10|[3-9JQK])([*HCSD])$/;
  const SUIT_CLASS = { "*": "sX", H: "sH", C: "sC", S: "sS", D: "sD" };
  const SUIT_NAME = { "*": "stars", H: "hearts", C: "clubs", S: "spades", D: "diamonds" };
  const COLOUR_NAME = { R: "red", B: "blue", Y: "yellow", G: "green" };
  const RANK_TEXT = { 11: "J", 12: "Q", 13: "K" };
  const BANNER_LINE = 150; // characters of a line the banner above the seats shows
  const on = (target, type, fn) => target.addEventListener(type, fn, { signal });
  let index = 0;
  let perspective = D.seat; // null: every hand shown
  let timer = null;

  // -- frames ---------------------------------------------------------------------------------

  function expand(frames) {
    const out = [];
    let current = null;
    for (const delta of frames) {
      current = current === null ? delta : Object.assign({}, current, delta);
      out.push(current);
    }
    return out;
  }

  function frame(i) {
    const f = {};
    for (const [key, value] of Object.entries(FLAT[i])) {
      const dot = key.indexOf(".");
      if (dot < 0) f[key] = value;
      else (f[key.slice(0, dot)] = f[key.slice(0, dot)] || [])[+key.slice(dot + 1)] = value;
    }
    return f;
  }

  // -- small DOM helpers ------------------------------------------------------------------------

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function icon(id, cls) {
    const svg = document.createElementNS(SVGNS, "svg");
    if (cls) svg.setAttribute("class", cls);
    svg.setAttribute("aria-hidden", "true");
    const use = document.createElementNS(SVGNS, "use");
    use.setAttribute("href", "#" + id);
    svg.appendChild(use);
    return svg;
  }

  function seatName(s) {
    return "seat " + s + " (" + D.names[s] + ")";
  }

  function ms(seconds) {
    if (seconds === null || seconds === undefined) return "-";
    if (seconds < 0.001) return "<1 ms";
    if (seconds < 1) return Math.round(seconds * 1000) + " ms";
    return seconds.toFixed(2) + " s";
  }

  // -- cards ------------------------------------------------------------------------------------

  function face(token) {
    const c = el("div", "card");
    c.dataset.card = token;
    let m;
    if ((m = P10_RE.exec(token))) {
      c.classList.add("p10", "c" + m[1]);
      c.append(el("b", "ix", m[2]), el("b", "mid", m[2]), el("b", "ix ix2", m[2]));
      c.title = COLOUR_NAME[m[1]] + " " + m[2];
    } else if (token === "W") {
      c.classList.add("p10", "wild");
      c.append(el("b", "mid", "WILD"));
      c.title = "Wild";
    } else if (token === "S") {
      c.classList.add("p10", "skip");
      const mid = el("b", "mid");
      mid.append(el("i"));
      c.append(mid, el("b", "lbl", "SKIP"));
      c.title = "Skip";
    } else if ((m = FC_RE.exec(token))) {
      c.classList.add("fc", SUIT_CLASS[m[2]]);
      const ix = el("b", "ix", m[1]);
      ix.appendChild(icon("s-" + m[2]));
      c.append(ix, icon("s-" + m[2], "pip"), el("b", "ix ix2", m[1]));
      c.title = m[1] + " of " + SUIT_NAME[m[2]];
    } else if (token === "X") {
      c.classList.add("fc", "joker");
      c.append(icon("s-crown", "pip"), el("b", "lbl", "JOKER"));
      c.title = "Joker";
    } else {
      c.append(el("b", "mid", token));
    }
    return c;
  }

  const faces = new Map();

  /* A face-up card from a token (`W=7`: a wild standing for 7); `wild`: the rank that is wild
   * (Five Crowns' round, a Solitaire pile), its cards marked with a crown. */
  function card(token, wild) {
    const eq = token.indexOf("=");
    const base = eq < 0 ? token : token.slice(0, eq);
    if (!faces.has(base)) faces.set(base, face(base));
    const c = faces.get(base).cloneNode(true);
    if (eq >= 0) {
      const as = token.slice(eq + 1);
      const tag = el("b", "as", "=" + as);
      if (COLOUR_NAME[as]) tag.classList.add("c" + as);
      c.appendChild(tag);
      c.title += " standing for " + (COLOUR_NAME[as] || as);
    }
    const m = FC_RE.exec(base);
    if (wild && m && m[1] === wild) {
      c.classList.add("rw");
      c.appendChild(icon("s-crown", "crownmark"));
      c.title += " (wild)";
    }
    return c;
  }

  function back(extra) {
    return el("div", "card back" + (extra ? " " + extra : ""));
  }

  // -- what the viewer may see ------------------------------------------------------------------

  function lineText(line) {
    if (typeof line === "string") return line;
    return perspective === null || perspective === line[2] ? line[0] : line[1];
  }

  function handShown(f, s) {
    // A seat's page holds no other hand at all; the switch of the full page hides them too,
    // except at the end of a hand, when every hand is shown to every seat.
    if (!f.hd || !f.hd[s]) return null;
    if (perspective === null || perspective === s || f.end) return f.hd[s];
    return null;
  }

  function headline(s) {
    if (s.k === "o") return LOOK.opening || cap(HAND) + " " + s.h + " is dealt";
    if (s.k === "d") return cap(HAND) + " " + s.h + " is dealt";
    return s.L && s.L.length ? lineText(s.L[0]) : "#" + s.n + " " + s.a;
  }

  function cap(word) {
    return word.charAt(0).toUpperCase() + word.slice(1);
  }

  function faultText(f) {
    const [seat, outcome, detail, fatal, suppressed] = f;
    let text = seatName(seat) + ": " + outcome + (fatal ? " (final)" : "");
    if (suppressed) text += ", " + suppressed + " more not recorded";
    if (detail) text += " - " + detail;
    return text;
  }

  // Per seat, up to step `upto`: think times, faults, and whether a final fault put it out.
  function seatHistory(upto) {
    const seats = Array.from({ length: N }, () => ({ n: 0, sum: 0, max: 0, last: null, faults: 0, out: false }));
    for (let i = 0; i <= upto; i++) {
      const s = STEPS[i];
      for (const f of s.F || []) {
        const x = seats[f[0]];
        if (!x) continue;
        x.faults += 1;
        if (f[3]) x.out = true;
      }
      if (s.k === "a" && typeof s.t === "number" && seats[s.s]) {
        const x = seats[s.s];
        x.n += 1;
        x.sum += s.t;
        x.max = Math.max(x.max, s.t);
        x.last = s.t;
      }
    }
    return seats;
  }

  // -- the table --------------------------------------------------------------------------------

  function render() {
    const f = frame(index);
    const s = STEPS[index];
    const prev = index > 0 ? frame(index - 1) : null;
    const notes = [];
    if (D.problem) notes.push(el("div", "warnbox", "This replay could not be read to its end: " + D.problem));
    $("notes").replaceChildren(...notes);
    if (f.h !== drawnHand) scale = 1; // a new hand starts at full size, then shrinks to fit
    drawnHand = f.h;
    drawTable(f, s, prev);
    // Every seat on screen: the cards shrink until the table needs no scrolling.
    const table = $("table");
    while (table.scrollHeight > table.clientHeight + 1 && scale > 0.45) {
      scale *= 0.88;
      layout();
      buildTable();
      $("notes").replaceChildren(...notes);
      drawTable(f, s, prev);
    }
    renderNow(s);
    markChart();
    $("scrubber").value = String(index);
    $("counter").textContent = "step " + (index + 1) + " / " + COUNT + (s.n !== undefined ? " \u00b7 action #" + s.n : "");
    const items = $("log").children;
    const old = $("log").querySelector(".cur");
    if (old) old.classList.remove("cur");
    if (items[index]) {
      items[index].classList.add("cur");
      keepInView($("log"), items[index]);
    }
    saveHash();
  }

  let scale = 1; // of the cards, below what the width allows, so that every seat fits the height
  let drawnHand;

  function drawTable(f, s, prev) {
    $("strip").replaceWith(PILES ? pilesStrip(f, s) : strip(f, s));
    if (PILES) {
      const node = piles(f, s);
      $("piles").replaceWith(node);
      fitHands([node]);
    } else updateSeats(f, s, prev);
  }

  function keepInView(list, item) {
    // The list alone scrolls (scrollIntoView would also move the page around it, and is slow).
    const top = item.offsetTop; // the list is positioned: offsets are from its top
    const bottom = top + item.offsetHeight;
    if (top < list.scrollTop + 20) list.scrollTop = Math.max(0, top - 40);
    else if (bottom > list.scrollTop + list.clientHeight - 20) list.scrollTop = bottom - list.clientHeight + 40;
  }

  function buildTable() {
    const notes = el("div");
    notes.id = "notes";
    const strip = el("div");
    strip.id = "strip";
    const body = el("div", PILES ? "piles" : "seats");
    body.id = PILES ? "piles" : "seats";
    $("table").replaceChildren(notes, strip, body);
    panels = [];
  }

  let hashTimer = null;

  function saveHash() {
    // Once the stepping pauses: browsers throttle pages that rewrite their address too often.
    clearTimeout(hashTimer);
    hashTimer = setTimeout(() => {
      try {
        history.replaceState(null, "", "#step=" + index);
      } catch (e) {
        /* some browsers refuse on file:// pages; the address is a convenience only */
      }
    }, 300);
  }

  function banner(s) {
    const b = el("div", "banner");
    b.id = "step-label";
    b.append(el("div", null, headline(s)));
    // Long lines (a hand's end at many seats) would push the seats down: they are in the panel
    // at the right, in full, and the banner says so.
    let held = 0;
    for (const line of (s.L || []).slice(s.k === "a" ? 1 : 0)) {
      const text = lineText(line);
      if (text.length <= BANNER_LINE && b.children.length < 4) b.append(el("div", "sub", text));
      else held += 1;
    }
    if (held) b.append(el("div", "sub more", "+ " + held + (held === 1 ? " line" : " lines") + " in the panel at the right"));
    for (const f of s.F || []) b.append(el("div", "sub fault", "\u26a0 " + faultText(f)));
    if (index === COUNT - 1) b.append(el("div", "sub result-line", resultTitle()));
    return b;
  }

  function strip(f, s) {
    const box = el("div", "strip");
    box.id = "strip";
    const draw = el("div", "pilebox");
    draw.append(f.dp > 0 ? back("deck") : el("div", "card slot"), el("span", null, "draw pile"));
    const dp = el("span", "count", f.dp);
    dp.id = "draw-count";
    draw.append(dp);
    const disc = el("div", "pilebox");
    const fan = el("div", "fan");
    fan.id = "discard";
    for (const t of f.dis || []) fan.append(card(t, f.wr));
    if (!(f.dis || []).length) fan.append(el("div", "card slot"));
    disc.append(fan, el("span", null, "discard pile"), el("span", "count", f.dn));
    const facts = el("div", "facts");
    const title = f.tie ? "Tie-break " + HAND : cap(HAND) + " " + f.h + (LOOK.deals ? " of " + LOOK.deals : "");
    facts.append(el("div", "big", title));
    if (f.dl !== null && f.dl !== undefined) facts.append(el("div", "small", "dealer: " + seatName(f.dl)));
    if (f.end) facts.append(el("div", "small", f.end.out !== null && f.end.out !== undefined
      ? seatName(f.end.out) + " went out" : "ended: " + f.end.ended));
    box.append(draw, disc, facts);
    if (LOOK.wild_note) {
      const w = el("div", "wildnote");
      w.append(icon("s-crown", "crownicon"), el("span", null, f.wr + "s wild"), el("span", "small", "\u00b7 " + f.ds + " cards"));
      w.querySelector("svg").setAttribute("style", "width:18px;height:18px;fill:currentColor");
      box.append(w);
    }
    box.append(banner(s));
    return box;
  }

  // Seat panels are rebuilt only when what they show changed (mostly one seat a step).
  let panels = [];

  function updateSeats(f, s, prev) {
    const grid = $("seats");
    const hist = seatHistory(index);
    // Groups laid or hit this step are outlined: the previous frame of the same hand lacks them.
    const before = prev && !prev.end && prev.h === f.h ? new Set(prev.tb.map((g) => g[1])) : null;
    const fresh = [];
    for (let i = 0; i < N; i++) {
      const model = seatModel(f, s, i, hist[i], before);
      const key = JSON.stringify(model);
      if (panels[i] && panels[i].key === key) continue;
      const node = seatPanel(model);
      if (panels[i]) panels[i].node.replaceWith(node);
      else grid.append(node);
      panels[i] = { key, node };
      fresh.push(node);
    }
    fitHands(fresh);
  }

  function seatModel(f, s, i, hist, before) {
    const acted = s.k === "a" && s.s === i;
    return {
      i,
      toMove: f.tm === i && !f.end ? f.dc : null,
      acted,
      out: !!(f.pl && !f.pl[i]),
      dealer: f.dl === i,
      skips: f.sk ? f.sk[i] : 0,
      skipped: (s.sx || []).includes(i),
      skippedBy: (s.sk || []).filter((x) => x[1] === i).map((x) => x[0]),
      wentOut: f.wo === i,
      faults: (s.F || []).filter((x) => x[0] === i).map((x) => x[1]),
      status: hist.out ? statusWord(i) : null,
      auto: acted && !!s.au,
      score: f.sc[i],
      points: f.pts ? f.pts[i] : null,
      phase: f.ph ? [f.ph[i], f.ld[i], f.cp[i]] : null,
      lastTurn: !!(f.lt && f.lt[i]),
      think: hist.n ? [hist.n, hist.last, hist.sum / hist.n, hist.max, hist.faults] : null,
      size: f.hs[i],
      shown: handShown(f, i),
      drawn: acted && s.dr ? s.dr : null,
      groups: f.tb.filter((g) => g[0] === i).map((g) => [g[1], g[2], before !== null && !before.has(g[1])]),
      wild: f.wr || null,
      place: index === COUNT - 1 && D.result ? ((D.result.outcome || {}).places || [])[i] : null,
    };
  }

  function seatPanel(m) {
    const i = m.i;
    const p = el("div", "seat");
    p.dataset.seat = i;
    if (m.toMove !== null) p.classList.add("tomove");
    if (m.acted) p.classList.add("acted");
    if (m.out) p.classList.add("out");
    const top = el("div", "top");
    top.append(el("span", "no", i), el("span", "name", D.names[i]));
    top.lastChild.title = (D.seats[i] && D.seats[i].spec) || D.names[i];
    if (m.dealer) top.append(el("span", "badge dealer", "D"));
    if (m.toMove !== null) top.append(el("span", "badge turn", m.toMove));
    for (const by of m.skippedBy) top.append(el("span", "badge skip", "\u2298 Skip from seat " + by));
    if (m.skips && !m.skippedBy.length) {
      top.append(el("span", "badge skip", "\u2298 skip pending" + (m.skips > 1 ? " \u00d7" + m.skips : "")));
    }
    if (m.skipped) top.append(el("span", "badge skip", "skipped"));
    if (m.wentOut) top.append(el("span", "badge gone", "went out"));
    for (const outcome of m.faults) top.append(el("span", "badge bad fault-mark", outcome));
    if (m.status) top.append(el("span", "badge bad", m.status));
    if (m.auto) top.append(el("span", "badge auto", "referee"));
    if (m.place) top.append(el("span", "badge place" + (m.place === 1 ? " first" : ""), ordinal(m.place)));
    if (m.points !== null && m.points !== undefined) {
      top.append(el("span", "pts" + (m.points === 0 ? " zero" : ""), "+" + m.points));
    }
    const score = el("span", "score", m.score);
    score.dataset.score = m.score;
    score.append(el("small", null, " pts"));
    top.append(score);
    p.append(top);
    const sub = m.phase ? phaseLine(m.phase) : el("div", "sub");
    sub.prepend(el("span", "count", m.size + (m.size === 1 ? " card" : " cards")));
    if (m.lastTurn) sub.append(el("span", "badge", "last turn \u2714"));
    if (m.think) {
      const [n, last, mean, max, faults] = m.think;
      const think = el("span", "think", "think " + ms(last) + " / " + ms(max));
      think.title = "think time: last " + ms(last) + ", mean " + ms(mean) + ", max " + ms(max) + " over " + n +
        " decisions" + (faults ? "; " + faults + " faults" : "");
      sub.append(think);
      if (faults) sub.append(el("span", "faults", "\u26a0 " + faults));
    }
    p.append(sub);
    const row = el("div", "handrow");
    const hand = el("div", "hand");
    hand.dataset.size = m.size;
    if (m.shown) {
      for (const t of m.shown) hand.append(card(t, m.wild));
      const drawn = m.drawn ? Array.from(hand.children).find((c) => c.dataset.card === m.drawn) : null;
      if (drawn) drawn.classList.add("drawn");
    } else for (let k = 0; k < m.size; k++) hand.append(back());
    row.append(hand);
    for (const [token, id, fresh] of m.groups) row.append(group(token, id, m.wild, fresh));
    p.append(row);
    return p;
  }

  function statusWord(seat) {
    const status = D.result && D.result.status ? D.result.status[seat] : null;
    return status && status !== E.SeatStatus.OK ? status : "out";
  }

  function phaseLine([phase, laid, completed]) {
    const line = el("div", "sub");
    const pips = el("span", "pips");
    const done = new Set(completed || []);
    const sequence = new Set(D.sequence || []);
    for (let p = 1; p <= 10; p++) {
      const pip = el("i", done.has(p) ? "done" : p === phase ? "now" : sequence.has(p) ? "" : "off");
      pip.title = "phase " + p + ": " + D.needs[p];
      pips.append(pip);
    }
    line.append(pips);
    const text = phase ? "phase " + phase + ": " + D.needs[phase] : "any phase not yet made";
    const needs = el("span", "needs", text + (laid ? " \u2714 laid" : ""));
    needs.dataset.phase = phase;
    line.append(needs);
    return line;
  }

  function group(token, id, wild, fresh) {
    const box = el("div", "group" + (fresh ? " new" : ""));
    box.dataset.group = token;
    const colon = token.indexOf(":");
    box.append(el("span", "what", token.slice(0, colon) + (id !== undefined ? " #" + id : "")));
    const cards = el("div", "cards");
    for (const t of token.slice(colon + 1).split(",")) cards.append(card(t, wild));
    box.append(cards);
    return box;
  }

  // Cards of a hand overlap when the panel is too narrow for them side by side.
  function fitHands(nodes) {
    // All widths are read before any is written, so the page is laid out once.
    const hands = nodes.flatMap((node) => Array.from(node.querySelectorAll(".hand")));
    const sizes = hands.map((h) => [h.children.length, h.parentElement.clientWidth - 8,
      h.firstElementChild ? h.firstElementChild.offsetWidth : 0]);
    hands.forEach((hand, k) => {
      const [n, width, cw] = sizes[k];
      if (n > 1) hand.style.setProperty("--ov", Math.min(4, (width - cw) / (n - 1) - cw) + "px");
    });
  }

  // -- a panel per pile (Solitaire) -------------------------------------------------------------

  function pilesStrip(f, s) {
    const box = el("div", "strip");
    box.id = "strip";
    const draw = el("div", "pilebox");
    draw.append(f.dp > 0 ? back("deck") : el("div", "card slot"), el("span", null, "draw pile"));
    const dp = el("span", "count", f.dp);
    dp.id = "draw-count";
    draw.append(dp);
    const next = el("div", "pilebox");
    next.append(f.top ? card(f.top) : el("div", "card slot"), el("span", null, "next card"));
    const out = el("div", "pilebox");
    const fan = el("div", "fan");
    fan.id = "discard";
    for (const t of f.dis || []) fan.append(card(t));
    if (!(f.dis || []).length) fan.append(el("div", "card slot"));
    out.append(fan, el("span", null, "out of play"), el("span", "count", f.dn));
    const facts = el("div", "facts");
    facts.append(el("div", "big", f.sc[0] + " / 11 closed"));
    facts.dataset.score = f.sc[0];
    facts.id = "closed-count";
    facts.append(el("div", "small", "move " + f.mv));
    box.append(draw, next, out, facts, banner(s));
    return box;
  }

  function piles(f, s) {
    const grid = el("div", "piles");
    grid.id = "piles";
    const acted = s.k === "a" && s.a ? +s.a.split(" ")[1] : null;
    for (let i = 0; i < f.pc.length; i++) {
      const size = i + 3;
      const wild = RANK_TEXT[size] || String(size);
      const p = el("div", "pile" + (f.pz[i] ? " closed" : "") + (acted === size ? " acted" : ""));
      p.dataset.pile = size;
      p.dataset.closed = f.pz[i] ? "1" : "0";
      const top = el("div", "top");
      top.append(el("b", null, "pile " + size), el("span", "chip", wild + "s wild"));
      if (f.pz[i]) top.append(el("span", "badge gone", "closed"));
      p.append(top);
      if (f.pz[i] && f.pg[i]) {
        const groups = el("div", "groups");
        for (const g of f.pg[i]) groups.append(group(g, undefined, wild, false));
        p.append(groups);
      } else {
        const hand = el("div", "hand");
        hand.dataset.size = f.pc[i].length;
        for (const t of f.pc[i]) hand.append(card(t, wild));
        const row = el("div", "handrow");
        row.append(hand);
        p.append(row);
      }
      grid.append(p);
    }
    return grid;
  }

  // -- the result -------------------------------------------------------------------------------

  function resultBox() {
    const box = el("div", "result");
    box.id = "result";
    if (!D.result) {
      box.append(el("h2", null, "No result: the replay ends before the game did"));
      return box;
    }
    const o = D.result.outcome || {};
    box.append(el("h2", null, resultTitle()));
    if (D.result.why) box.append(el("div", "why", D.result.why));
    if (!LOOK.result_table) return box;
    const t = el("table");
    const head = el("tr");
    const phases = o.phases_completed;
    for (const h of ["seat", "place", "score", phases ? "phases" : null, "status", "faults"]) if (h) head.append(el("th", null, h));
    t.append(head);
    for (let s = 0; s < N; s++) {
      const row = el("tr");
      row.append(el("td", null, seatName(s)), el("td", null, (o.places || [])[s]), el("td", null, (o.scores || [])[s]));
      if (phases) row.append(el("td", null, phases[s]));
      row.append(el("td", null, (D.result.status || [])[s] || ""), el("td", null, (D.result.faults || [])[s] || 0));
      t.append(row);
    }
    box.append(t);
    return box;
  }

  // The result's headline and why the game ended are worded in Python (replay/html.py).
  function resultTitle() {
    return D.result ? D.result.title : "No result: the replay ends before the game did";
  }

  function ordinal(n) {
    const tens = n % 100, last = n % 10;
    const suffix = tens >= 11 && tens <= 13 ? "th" : last === 1 ? "st" : last === 2 ? "nd" : last === 3 ? "rd" : "th";
    return n + suffix;
  }

  // -- the side panel and the move list ---------------------------------------------------------

  function renderNow(s) {
    const now = $("now");
    const parts = [el("div", "head", headline(s))];
    for (const line of (s.L || []).slice(s.k === "a" ? 1 : 0)) parts.push(el("div", "line", lineText(line)));
    for (const f of s.F || []) parts.push(el("div", "line fault", "\u26a0 " + faultText(f)));
    if (s.k === "a") {
      let meta = "action #" + s.n + " \u00b7 " + seatName(s.s) + " \u00b7 " + s.dc + ": " + s.a;
      meta += s.au ? " \u00b7 played by the referee" : " \u00b7 thought " + ms(s.t);
      parts.push(el("div", "meta", meta));
    }
    if (index === COUNT - 1) parts.unshift(resultBox()); // the result first: the list scrolls
    now.replaceChildren(...parts);
  }

  function buildLog() {
    const log = $("log");
    const items = STEPS.map((s, i) => {
      const li = el("li");
      li.dataset.step = i;
      if (s.k !== "a") {
        li.className = "sep";
        li.textContent = headline(s);
      } else {
        li.className = "act";
        li.append(el("span", "n", "#" + s.n), el("span", "x", lineText(s.L[0] || s.a)));
        if (typeof s.t === "number") li.append(el("span", "t", ms(s.t)));
        if (s.F) li.classList.add("fault");
        if (s.au) li.classList.add("auto");
        if (s.F) li.title = s.F.map(faultText).join("\n");
      }
      return li;
    });
    log.replaceChildren(...items);
  }

  function buildMarks() {
    const marks = $("marks");
    const last = Math.max(COUNT - 1, 1);
    const parts = [];
    const auto = new Set(); // seats the referee is playing: only where that starts is marked
    STEPS.forEach((s, i) => {
      const starts = s.k === "a" && s.au && !auto.has(s.s);
      if (s.k === "a") {
        if (s.au) auto.add(s.s);
        else auto.delete(s.s);
      }
      const cls = s.F ? "f" : starts ? "a" : s.k !== "a" ? "h" : null;
      if (!cls) return;
      const m = el("i", cls);
      m.style.left = (i / last) * 100 + "%";
      if (s.F) m.title = s.F.map(faultText).join("\n");
      else if (starts) m.title = "the referee plays for " + seatName(s.s) + " from here";
      parts.push(m);
    });
    marks.replaceChildren(...parts);
  }

  // -- the score chart: each seat's total (and Phase 10's phase) after every step -------------

  const PALETTE = ["#ffd166", "#5ee0a0", "#4cc9f0", "#ff5a6e", "#c77dff", "#ffa94d", "#e9f0ea", "#8ac926",
    "#f72585", "#90e0ef", "#b5838d", "#fb8500", "#06d6a0", "#a0c4ff"];
  const CHART_W = 300, CHART_H = 150, PAD = 26;

  function svg(tag, attrs, text) {
    const e = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text !== undefined) e.textContent = String(text);
    return e;
  }

  // One line per seat of the frames' `key.i` values over the steps; a click goes to that step.
  function lineChart(key, title, lines) {
    const values = Array.from({ length: lines }, (_, k) => FLAT.map((f) => +f[key + "." + k] || 0));
    const top = Math.max(1, ...values.flat());
    const x = (i) => PAD + (i / Math.max(1, COUNT - 1)) * (CHART_W - PAD - 6);
    const y = (v) => CHART_H - 16 - (v / top) * (CHART_H - 26);
    const box = svg("svg", { viewBox: "0 0 " + CHART_W + " " + CHART_H, role: "img", "aria-label": title });
    box.dataset.key = key;
    box.append(svg("line", { class: "axis", x1: PAD, y1: y(0), x2: CHART_W - 6, y2: y(0) }),
      svg("line", { class: "axis", x1: PAD, y1: y(0), x2: PAD, y2: y(top) }),
      svg("text", { class: "lbl", x: PAD - 3, y: y(top) + 4, "text-anchor": "end" }, top),
      svg("text", { class: "lbl", x: PAD - 3, y: y(0) + 3, "text-anchor": "end" }, 0),
      svg("text", { class: "lbl", x: CHART_W - 6, y: CHART_H - 3, "text-anchor": "end" }, "step " + COUNT));
    values.forEach((series, k) => {
      const points = series.map((v, i) => x(i).toFixed(1) + "," + y(v).toFixed(1)).join(" ");
      const line = svg("polyline", { points, fill: "none", stroke: PALETTE[k % PALETTE.length], "stroke-width": 1.6 });
      line.dataset.seat = k;
      line.dataset.last = series[series.length - 1];
      line.append(svg("title", {}, seatName(k) + ": " + series[series.length - 1]));
      box.append(line);
    });
    box.append(svg("line", { class: "now", y1: 4, y2: y(0) }));
    on(box, "click", (e) => {
      const r = box.getBoundingClientRect();
      const at = ((e.clientX - r.left) / r.width) * CHART_W;
      go(Math.round(((at - PAD) / (CHART_W - PAD - 6)) * (COUNT - 1)));
    });
    return [el("h3", null, title), box];
  }

  // The game's charts (LOOK.charts: [frame key, title]), a line per entry of the key; the
  // seats' colours under the first.
  function buildChart() {
    const parts = [];
    LOOK.charts.forEach(([key, title], c) => {
      const lines = Object.keys(FLAT[0]).filter((k) => k.startsWith(key + ".")).length;
      parts.push(...lineChart(key, title, lines));
      if (c > 0 || N < 2) return;
      const legend = el("div", "legend");
      for (let k = 0; k < N; k++) {
        const item = el("span");
        const swatch = el("i");
        swatch.style.background = PALETTE[k % PALETTE.length];
        item.append(swatch, seatName(k));
        legend.append(item);
      }
      parts.push(legend);
    });
    $("chart").replaceChildren(...parts);
  }

  function markChart() {
    const at = (PAD + (index / Math.max(1, COUNT - 1)) * (CHART_W - PAD - 6)).toFixed(1);
    for (const line of $("chart").querySelectorAll("line.now")) {
      line.setAttribute("x1", at);
      line.setAttribute("x2", at);
    }
  }

  // -- the bots' stderr -----------------------------------------------------------------------

  function buildLogs() {
    const logs = D.logs || [];
    $("tabs").querySelector("[data-tab=logs]").hidden = !logs.some((x) => x);
    const parts = [el("p", "note", "The referee does not mark a bot's stderr by request, so these are " +
      "the ends of each bot's log over the whole game, not the lines of one step.")];
    logs.forEach((log, k) => {
      if (!log) return;
      parts.push(el("h3", null, seatName(k) + " \u00b7 " + log.file + " (" + log.bytes + " bytes" +
        (log.cut ? ", the first " + log.cut + " not shown" : "") + ")"));
      const pre = el("pre", null, log.text || "(empty: the bot wrote nothing to stderr)");
      pre.dataset.seat = k;
      parts.push(pre);
    });
    $("logs").replaceChildren(...parts);
  }

  // -- moving through the game ------------------------------------------------------------------

  function go(i) {
    const next = Math.max(0, Math.min(COUNT - 1, i | 0));
    if (next === index) return;
    index = next;
    render();
  }

  function handStarts() {
    const out = [];
    STEPS.forEach((s, i) => { if (s.k !== "a") out.push(i); });
    return out;
  }

  function nextHand(direction) {
    const starts = handStarts();
    if (direction > 0) go(starts.find((i) => i > index) ?? COUNT - 1);
    else {
      const earlier = starts.filter((i) => i < index);
      go(earlier.length ? earlier[earlier.length - 1] : 0);
    }
  }

  function nextFault() {
    const faults = STEPS.map((s, i) => (s.F ? i : -1)).filter((i) => i >= 0);
    if (faults.length) go(faults.find((i) => i > index) ?? faults[0]);
  }

  function goAction(n) {
    const i = STEPS.findIndex((s) => s.k === "a" && s.n === n);
    if (i >= 0) go(i);
    return i;
  }

  function goHand(h) {
    const i = STEPS.findIndex((s) => s.k !== "a" && s.h === h);
    if (i >= 0) go(i);
    return i;
  }

  function play(on) {
    if (timer) clearInterval(timer);
    timer = null;
    if (on) {
      if (index >= COUNT - 1) go(0);
      timer = setInterval(() => {
        if (index >= COUNT - 1) play(false);
        else go(index + 1);
      }, 1000 / +$("speed").value);
    }
    $("b-play").replaceChildren(icon(timer ? "i-pause" : "i-play"));
  }

  function fromHash() {
    const hash = decodeURIComponent(location.hash.slice(1));
    const [key, value] = hash.split("=");
    const n = parseInt(value, 10);
    if (key === "step" && n >= 0) return Math.min(n, COUNT - 1);
    if (key === "action" && n >= 0) return Math.max(0, STEPS.findIndex((s) => s.k === "a" && s.n === n));
    if (key === "hand" && n >= 1) return Math.max(0, STEPS.findIndex((s) => s.k !== "a" && s.h === n));
    if (key === "fault") return Math.max(0, STEPS.findIndex((s) => s.F));
    if (key === "end") return COUNT - 1;
    return 0;
  }

  function layout() {
    const table = $("table");
    const width = table.clientWidth - 28;
    let cols = N <= 1 ? 1 : N <= 4 ? 2 : N <= 9 ? 3 : N <= 12 ? 4 : 5;
    if (width < 1000) cols = Math.min(cols, 4);
    if (width < 900) cols = Math.min(cols, 2);
    if (width < 520) cols = 1;
    const panel = (width - (cols - 1) * 10) / cols;
    const wide = PILES ? Math.max(30, Math.min(46, width / 26)) : Math.max(28, Math.min(54, panel / (N > 9 ? 8.6 : 7.4)));
    const cw = Math.max(16, wide * scale);
    document.documentElement.style.setProperty("--cols", cols);
    document.documentElement.style.setProperty("--cw", cw.toFixed(1) + "px");
    const groupScale = PILES ? 0.92 : N > 9 ? 0.9 : N > 6 ? 0.8 : 0.78;
    document.documentElement.style.setProperty("--cwg", (cw * groupScale).toFixed(1) + "px");
  }

  // -- start ------------------------------------------------------------------------------------

  function header() {
    $("title").textContent = D.title + (D.id ? " \u00b7 " + D.id : "");
    const chips = [];
    const chip = (text, cls) => chips.push(el("span", "chip" + (cls ? " " + cls : ""), text));
    chip(N + (N === 1 ? " player" : " players"));
    if (D.seed !== null && D.seed !== undefined) chip("seed " + D.seed);
    for (const [k, v] of Object.entries(D.rules || {})) chip(k + "=" + v);
    if (D.move_time) chip("move time " + D.move_time + " s");
    if (D.seat !== null) chip("as seat " + D.seat + " saw it: other hands hidden", "seatview");
    $("chips").replaceChildren(...chips);
    document.documentElement.dataset.game = D.game;
    document.title = D.title + " " + (D.id || "") + " - " + D.names.slice(0, 4).join(" vs ");
    $("back").hidden = !D.back;
    if (D.back) $("back").setAttribute("href", D.back);
    const select = $("perspective");
    select.replaceChildren();
    $("viewas").hidden = true;
    $("jump-hand").parentElement.hidden = false;
    if (D.seat === null && N > 1) { // one seat: no other hand to hide
      const all = el("option", null, "every hand");
      all.value = "";
      select.append(all);
      for (let s = 0; s < N; s++) {
        const o = el("option", null, "as " + seatName(s));
        o.value = String(s);
        select.append(o);
      }
      $("viewas").hidden = false;
      on(select, "change", () => {
        perspective = select.value === "" ? null : +select.value;
        buildLog();
        render();
      });
    }
    $("hand-word").textContent = HAND;
    if (!LOOK.deal_word) $("jump-hand").parentElement.hidden = true;
  }

  function wire() {
    $("scrubber").max = String(COUNT - 1);
    on($("scrubber"), "input", (e) => go(+e.target.value));
    on($("b-first"), "click", () => go(0));
    on($("b-last"), "click", () => go(COUNT - 1));
    on($("b-prev"), "click", () => go(index - 1));
    on($("b-next"), "click", () => go(index + 1));
    on($("b-prevhand"), "click", () => nextHand(-1));
    on($("b-nexthand"), "click", () => nextHand(1));
    on($("b-play"), "click", () => play(!timer));
    on($("b-fault"), "click", nextFault);
    $("b-fault").hidden = !STEPS.some((s) => s.F);
    on($("speed"), "change", () => { if (timer) play(true); });
    // After a jump the keys step again (they are the input's while it has the focus).
    on($("jump-hand"), "change", (e) => { goHand(+e.target.value); e.target.blur(); });
    on($("jump-action"), "change", (e) => { goAction(+e.target.value); e.target.blur(); });
    on($("log"), "click", (e) => {
      const li = e.target.closest("li");
      if (li) go(+li.dataset.step);
    });
    on(document, "keydown", (e) => {
      const tag = e.target.tagName;
      if (tag === "SELECT" || (tag === "INPUT" && e.target.type !== "range")) return;
      const keys = {
        ArrowRight: () => (e.shiftKey ? nextHand(1) : go(index + 1)),
        ArrowLeft: () => (e.shiftKey ? nextHand(-1) : go(index - 1)),
        PageDown: () => nextHand(1),
        PageUp: () => nextHand(-1),
        Home: () => go(0),
        End: () => go(COUNT - 1),
        " ": () => play(!timer),
        f: nextFault,
      };
      if (keys[e.key]) {
        e.preventDefault();
        keys[e.key]();
      }
    });
    // An address edited while the page is open (`#step=40`, `#end`) is followed at once.
    on(window, "hashchange", () => {
      const wanted = fromHash();
      if (wanted !== index) go(wanted);
    });
    on(window, "resize", () => {
      layout();
      buildTable();
      render();
    });
  }

  header();
  wire();
  layout();
  buildTable();
  buildLog();
  buildMarks();
  buildChart();
  buildLogs();
  index = fromStart ? 0 : fromHash();
  render();
  signal.addEventListener("abort", () => {
    clearInterval(timer);
    clearTimeout(hashTimer);
  });
  window.meldrefViewer = {
    data: D,
    count: () => COUNT,
    index: () => index,
    step: (i) => STEPS[i],
    frame: frame,
    go: go,
    goAction: goAction,
    goHand: goHand,
    readyMs: performance.now(), // from the start of the navigation to a drawn table
  };
  document.documentElement.dataset.ready = "1";
}

/* What stays across games: the side panel's tabs, the download link, opening a page from disk. */
(function () {
  const $ = (id) => document.getElementById(id);
  const FIRST = JSON.parse($("meldref-data").textContent);
  const VERSION = FIRST.v; // of this script's data: a page of another version is not read
  let running = new AbortController();
  let saved = null; // the object URL of the page the download link saves
  function start(data, page, fromStart) {
    running.abort();
    running = new AbortController();
    if (saved) URL.revokeObjectURL(saved);
    saved = URL.createObjectURL(new Blob([page], { type: "text/html" }));
    $("download").href = saved;
    $("download").download = (data.id || data.game) + (data.seat === null ? "" : "-seat" + data.seat) + ".html";
    viewer(data, running.signal, fromStart);
  }

  for (const button of $("tabs").querySelectorAll("button")) {
    button.addEventListener("click", () => {
      for (const b of $("tabs").querySelectorAll("button")) b.classList.toggle("on", b === button);
      for (const panel of document.querySelectorAll("#side .tab")) panel.hidden = panel.id !== button.dataset.tab;
    });
  }

  // A page written by `meldref replay html`: its data is read, its script never run.
  function openPage(text) {
    const doc = new DOMParser().parseFromString(text, "text/html");
    const node = doc.getElementById("meldref-data");
    if (!node || !doc.querySelector('meta[name="generator"][content="meldref replay html"]')) {
      const replay = /"format"\s*:\s*"meldref-replay"/.test(text.slice(0, 2000));
      throw new Error(replay ? "this is a replay file: `meldref replay html FILE` makes its page, which opens here"
        : "not a page written by meldref replay html");
    }
    const data = JSON.parse(node.textContent);
    if (data.v !== VERSION || !Array.isArray(data.steps) || !Array.isArray(data.frames) || !data.steps.length) {
      throw new Error("a page of another version of meldref (data version " + data.v + ")");
    }
    return data;
  }

  $("open-file").addEventListener("change", (e) => {
    const file = e.target.files[0];
    if (!file) return;
    file.text().then((text) => {
      const data = Object.assign(openPage(text), { back: null });
      $("opened").hidden = true;
      start(data, text, true);
    }).catch((err) => {
      $("opened").textContent = "Cannot open " + file.name + ": " + err.message;
      $("opened").hidden = false;
    }).finally(() => { e.target.value = ""; });
  });

  start(FIRST, SOURCE, false);
})();

