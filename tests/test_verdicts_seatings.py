"""Balanced seatings: every bot in every seat equally often, and after every other bot
equally often (issue 8: cyclic rotations at 4 seats used 4 of 24 orders and always seated
the same bot after a given one)."""

from __future__ import annotations

import pytest

from meldref.verdicts.seatings import MAX_SEATS, balance, seatings, williams


def rotations(k: int) -> tuple[tuple[int, ...], ...]:
    return tuple(tuple((s + r) % k for s in range(k)) for r in range(k))


def test_rotations_are_not_neighbour_balanced() -> None:
    # What the old schedule did: the check below must be able to fail.
    b = balance(rotations(4))
    assert b.seats_balanced and not b.neighbours_balanced
    assert b.follow_counts == frozenset({0, 4})
    assert b.to_json() == {"seat_counts": [1], "follow_counts": [0, 4],
                           "seats_balanced": True, "neighbours_balanced": False}


@pytest.mark.parametrize("k", range(2, 8))
def test_up_to_seven_seats_both_balances_hold(k: int) -> None:
    rows = seatings(k)
    assert len(rows) == k * (k - 1)
    b = balance(rows)
    assert b.seat_counts == frozenset({k - 1})
    assert b.follow_counts == frozenset({k})
    assert b.seats_balanced and b.neighbours_balanced


@pytest.mark.parametrize("k", range(2, 8))
def test_every_block_of_k_seatings_is_a_latin_square(k: int) -> None:
    rows = seatings(k)
    for start in range(0, len(rows), k):
        assert balance(rows[start:start + k]).seat_counts == frozenset({1})


@pytest.mark.parametrize("k", range(8, MAX_SEATS + 1))
def test_eight_to_fourteen_seats_balance_seats_and_nearly_neighbours(k: int) -> None:
    rows = seatings(k)
    assert rows == williams(k)
    assert len(rows) == (k if k % 2 == 0 else 2 * k)
    b = balance(rows)
    per_seat = 1 if k % 2 == 0 else 2
    assert b.seat_counts == frozenset({per_seat})
    assert b.follow_counts == frozenset({per_seat, per_seat + 1})
    # Seats 0..k-1 without the wrap-around: every ordered pair exactly per_seat times.
    linear: dict[tuple[int, int], int] = {}
    for row in rows:
        for s in range(k - 1):
            linear[(row[s], row[s + 1])] = linear.get((row[s], row[s + 1]), 0) + 1
    assert len(linear) == k * (k - 1) and set(linear.values()) == {per_seat}


@pytest.mark.parametrize("k", range(1, MAX_SEATS + 1))
def test_seatings_are_distinct_permutations_in_a_fixed_order(k: int) -> None:
    rows = seatings(k)
    assert len(set(rows)) == len(rows)
    assert all(sorted(row) == list(range(k)) for row in rows)
    assert rows[0] == tuple(range(k))  # the table as listed plays first
    assert seatings(k) == rows


def test_two_seats_are_both_orders_and_three_all_six() -> None:
    assert seatings(2) == ((0, 1), (1, 0))
    assert sorted(seatings(3)) == sorted(
        [(0, 1, 2), (0, 2, 1), (1, 0, 2), (1, 2, 0), (2, 0, 1), (2, 1, 0)])


@pytest.mark.parametrize("k", [0, -1, MAX_SEATS + 1])
def test_table_sizes_out_of_range(k: int) -> None:
    with pytest.raises(ValueError, match="seats"):
        seatings(k)


def test_balance_refuses_a_seating_that_is_not_a_permutation() -> None:
    with pytest.raises(ValueError, match=r"each of 0\.\.k-1 once"):
        balance([(0, 0, 1)])
