"""Playing a whole game between in-process bots, without I/O (the CLI and the benchmarks)."""

from __future__ import annotations

from collections.abc import Sequence

from .game import Action, Bot, GameInfo, Outcome, Rules


class RunawayGameError(RuntimeError):
    """A game went past the action limit given to `play_inprocess` (a rules or bot bug)."""


def play_inprocess(
    game_info: GameInfo,
    rules: Rules,
    bots: Sequence[Bot],
    seed: int | str,
    max_actions: int | None = None,
) -> tuple[Outcome, list[Action]]:
    """Play one game, seat i played by `bots[i]`; the outcome and every action in order.

    A bot may answer with an action value or its protocol text. An illegal action raises
    `IllegalActionError` (in-process bots are ours: a referee policy does not apply here).
    """
    game_info.check_players(len(bots))
    state = game_info.new_game(rules, len(bots), seed)
    actions: list[Action] = []
    while (seat := state.to_move) is not None:
        action = bots[seat].act(state.observation(seat))
        if isinstance(action, str):
            action = state.parse_action(action)
        state.apply(action)
        actions.append(action)
        if max_actions is not None and len(actions) > max_actions:
            raise RunawayGameError(f"{game_info.name} game seed {seed!r}: over {max_actions} "
                                   "actions")
    outcome = state.outcome
    assert outcome is not None
    return outcome, actions
