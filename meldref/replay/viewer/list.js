/* meldref: the list of a folder's games, filtered and sorted in the page. Every text from the
 * replays (bot names, problems) is put in the page as text, never as markup. */
"use strict";
(function () {
  const D = JSON.parse(document.getElementById("meldref-data").textContent);
  const $ = (id) => document.getElementById(id);
  const OK = D.enums.SeatStatus.OK; // a seat still in play at the end (the values are Python's)
  const rows = D.rows.map((row, i) => Object.assign({ order: i }, row));
  let sortKey = "id";
  let ascending = true;

  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }

  function link(href, text) {
    const a = el("a", null, text);
    a.setAttribute("href", href);
    return a;
  }

  function faultCount(row) {
    return (row.faults || []).reduce((a, b) => a + b, 0);
  }

  function failed(row) {
    return faultCount(row) > 0 || !!row.problem || (row.status || []).some((s) => s !== OK);
  }

  function seatsOf(row, bot) {
    return (row.names || []).map((n, i) => (n === bot ? i : -1)).filter((i) => i >= 0);
  }

  function sortValue(row, bot) {
    const scores = row.scores || [];
    if (sortKey === "id") return row.order;
    if (sortKey === "winner") return (row.winners || []).map((w) => row.names[w]).join(", ");
    if (sortKey === "score") {
      const seats = bot ? seatsOf(row, bot) : row.winners || [];
      return seats.length ? Math.min(...seats.map((s) => scores[s])) : Infinity;
    }
    if (sortKey === "faults") return faultCount(row);
    const value = row[sortKey];
    return value === null || value === undefined ? Infinity : value;
  }

  function render() {
    const bot = $("bot").value;
    const onlyFailed = $("failures").checked;
    const words = $("search").value.trim().toLowerCase();
    const shown = rows.filter((row) => (!bot || (row.names || []).includes(bot)) && (!onlyFailed || failed(row)) &&
      (!words || (row.id + " " + (row.names || []).join(" ")).toLowerCase().includes(words)));
    shown.sort((a, b) => {
      const x = sortValue(a, bot);
      const y = sortValue(b, bot);
      const c = typeof x === "string" || typeof y === "string" ? String(x).localeCompare(String(y)) : x - y;
      return (ascending ? c : -c) || a.order - b.order;
    });
    $("rows").replaceChildren(...shown.map((row) => gameRow(row, bot)));
    $("shown").textContent = shown.length + " of " + rows.length + " games shown";
    for (const th of document.querySelectorAll("th.sortable")) {
      th.classList.toggle("sorted", th.dataset.sort === sortKey);
      th.classList.toggle("up", th.dataset.sort === sortKey && !ascending);
    }
  }

  function gameRow(row, bot) {
    const tr = el("tr", failed(row) ? "failed" : null);
    tr.dataset.game = row.id;
    const id = el("td", "id");
    id.append(row.href ? link(row.href, row.id) : el("span", null, row.id));
    tr.append(id);
    const seats = el("td");
    (row.names || []).forEach((name, i) => {
      const winner = (row.winners || []).includes(i);
      const status = (row.status || [])[i];
      const bad = (status && status !== OK) || ((row.faults || [])[i] || 0) > 0;
      const chip = el("span", "seat" + (winner ? " win" : "") + (bad ? " bad" : "") + (name === bot ? " pick" : ""));
      const text = name + " " + ((row.scores || [])[i] ?? "-");
      if (D.seat_links && row.href) chip.append(link(row.href + "?seat=" + i, text));
      else chip.textContent = text;
      const outcomes = (row.outcomes || [])[i];
      if (bad) chip.title = "seat " + i + ": " + (status || "") + (outcomes && outcomes.length ? " (" + outcomes.join(", ") + ")" : "");
      else chip.title = "seat " + i + (D.seat_links ? ": open as this seat saw the game" : "");
      seats.append(chip);
    });
    tr.append(seats);
    tr.append(el("td", "winner", (row.winners || []).map((w) => row.names[w]).join(", ") || (row.termination ? "none" : "-")));
    const seatsShown = bot ? seatsOf(row, bot) : row.winners || [];
    tr.append(el("td", "num", seatsShown.map((s) => (row.scores || [])[s]).join(", ")));
    tr.append(el("td", "num hands", row.hands ?? ""), el("td", "num actions", row.actions ?? ""));
    const faults = el("td", "num");
    const count = faultCount(row);
    if (count) faults.append(el("span", "fault", count));
    const outcomes = [...new Set((row.outcomes || []).flat())];
    if (outcomes.length) faults.append(el("div", "problem", outcomes.join(", ")));
    if (row.problem) faults.append(el("div", "problem", row.problem));
    tr.append(faults);
    const links = el("td");
    if (row.href && count) links.append(link(row.href + "#fault", "first fault"));
    tr.append(links);
    return tr;
  }

  // A chance read from the rank draws, never "0%" or "100%": a rank the draws did not see is not
  // impossible (as the command line's tables print it: verdicts/elo.py chance_percent).
  const chanceText = (p) => p < 0.01 ? "<1%" : p > 0.99 ? ">99%" : Math.round(100 * p) + "%";

  function standings() {
    if (!D.standings || !D.standings.length) return;
    $("standings-box").hidden = false;
    const head = el("tr");
    // The rank figures (standings.json's rank_ci95 and p_first) where the file has them: an
    // older tournament's has not, and its columns are left out rather than shown empty.
    const ranked = D.standings.some((s) => "rank_ci95" in s || "p_first" in s);
    const heads = ["#", "bot", "games", "wins", "win %", "mean place", "mean score", "rating", "95% interval",
      "rank held", ...(ranked ? ["ranks", "P first"] : []), "faults"];
    for (const h of heads) head.append(el("th", h === "bot" ? null : "num", h));
    const lines = D.standings.map((s, i) => {
      const tr = el("tr");
      const bot = el("td", "bot", s.bot);
      bot.title = "show this bot's games";
      bot.addEventListener("click", () => { $("bot").value = s.bot; render(); });
      const num = (v, digits) => el("td", "num", typeof v === "number" ? v.toFixed(digits) : v ?? "");
      // standings.json's own rank: bots with equal ratings share one (docs/standings.md).
      // An interval the data cannot support is not printed: the reason is (standings.json's
      // no_interval), and a one-sided bound reads as one.
      const [low, high] = Array.isArray(s.rating_ci95) ? s.rating_ci95 : [null, null];
      const has = (v) => typeof v === "number";
      const band = has(low) && has(high) ? `${low.toFixed(1)} to ${high.toFixed(1)}`
        : has(low) ? `at least ${low.toFixed(1)}` : has(high) ? `at most ${high.toFixed(1)}` : "none";
      const cell = el("td", "num", band);
      if (s.no_interval) cell.title = s.no_interval;
      if (s.no_interval && !has(low) && !has(high)) cell.textContent = `none: ${s.no_interval}`;
      tr.append(el("td", "num", s.rank ?? i + 1), bot, num(s.games, 0), num(s.wins, 1), num(s.win_rate * 100, 1),
        num(s.mean_place, 2), num(s.mean_score, 1), num(s.rating, 1), cell, num(s.rank_held, 2));
      if (ranked) {
        const [first, last] = Array.isArray(s.rank_ci95) ? s.rank_ci95 : [null, null];
        const ranks = has(first) && has(last) ? (first === last ? String(first) : first + "-" + last) : "-";
        tr.append(el("td", "num ranks", ranks),
          el("td", "num p-first", has(s.p_first) ? chanceText(s.p_first) : "-"));
      }
      tr.append(num(s.faults, 0));
      return tr;
    });
    $("standings").replaceChildren(head, ...lines);
  }

  $("title").textContent = D.title;
  const bots = [...new Set(rows.flatMap((r) => r.names || []))].sort();
  for (const b of bots) {
    const o = el("option", null, b);
    o.value = b;
    $("bot").append(o);
  }
  const failures = rows.filter(failed).length;
  $("summary").textContent = rows.length + " games \u00b7 " + failures + " with faults or failures";
  $("bot").addEventListener("change", render);
  $("failures").addEventListener("change", render);
  $("search").addEventListener("input", render);
  for (const th of document.querySelectorAll("th.sortable")) {
    th.addEventListener("click", () => {
      ascending = sortKey === th.dataset.sort ? !ascending : true;
      sortKey = th.dataset.sort;
      render();
    });
  }
  standings();
  render();
  document.documentElement.dataset.ready = "1";
})();
