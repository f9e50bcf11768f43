"""Counted nouns read right for one and for many."""

from red7es.wording import counted


def test_counted_is_singular_for_exactly_one() -> None:
    assert [counted(n, "game") for n in (0, 1, 2)] == ["0 games", "1 game", "2 games"]
    assert counted(1, "bot turn") == "1 bot turn"
    assert counted(3, "entry", "entries") == "3 entries"


def test_with_article() -> None:
    from red7es.wording import with_article

    assert [with_article(n) for n in ("int", "str", "Event", "list")] == ["an int", "a str", "an Event", "a list"]
