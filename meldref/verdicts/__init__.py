"""Verdicts a contest can defend: every figure of the standings from the result lines alone,
whatever order games finished in, whatever order bots were listed in (spec:
docs/standings.md and docs/verdicts.md).

- `games`: result lines as `GameResult`s; deal sets, the unit of evidence.
- `elo`: scores with intervals, Elo and normalised Elo, likelihood of superiority.
- `pairs`: two bots' record (W-D-L, deal sets, the pentanomial), the cross table.
- `sprt`: the generalised SPRT on deal sets (exact constrained maximum likelihood), its plan
  (expected deal sets, power) and its Elo corrected for the stopping rule (`brownian`).
- `ratings`: order-free standings for N bots (Bradley-Terry: `strengths`, the maximum
  likelihood where it exists), cluster-robust intervals per bot; `ranks`: the chance of each
  rank.
- `seatings`: balanced seatings for duplicate deals.
- `tally`: games, wins, places, scores and faults counted per bot.
"""
