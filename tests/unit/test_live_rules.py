"""The live path's segmentation rules on hand-made turns: which windows are due, and which of
the scenes formed so far are closed for good (construct/live.py)."""

from tmem_graph.construct import stages
from tmem_graph.construct.live import PendingState, covered_by_flush, final_scenes, segment_pending
from tmem_graph.model import Turn


def turns(session: int, n: int, start: int = 0) -> list[Turn]:
    return [Turn(f"s{session}t{start + k}", "Ana", f"turn {start + k}", None, session) for k in range(n)]


def state(groups: list[list[Turn]]) -> PendingState:
    return PendingState([t for g in groups for t in g], {t.id: k == 0 for g in groups for k, t in enumerate(g)})


class NoLLM:
    """Fails the test if a window is asked."""

    def structured(self, *args, **kwargs):
        raise AssertionError("no window is due")


def test_the_open_scene_stays_open_and_so_does_a_closed_one_it_could_still_join():
    a, b = turns(1, 6), turns(1, 3, start=6)
    assert final_scenes(state([a, b]), covered=0) == []          # b may end short and join a
    b_long = turns(1, stages.MIN_SCENE_TURNS, start=6)
    assert final_scenes(state([a, b_long]), covered=0) == [a]    # b can no longer be merged
    other_session = turns(2, 2)
    assert final_scenes(state([a, other_session]), covered=0) == [a]   # sessions never merge
    short = turns(1, 2)
    assert final_scenes(state([short, turns(1, 6, start=2)]), covered=0) == []  # the short one absorbs the next


def test_a_flush_closes_every_scene_once_all_its_turns_are_read():
    a, b = turns(1, 6), turns(1, 3, start=6)
    st = state([a, b])
    seq = {t.id: n for n, t in enumerate(st.turns)}
    covered = covered_by_flush(st, flush_upto=len(st.turns) - 1, seq=seq)
    assert covered == len(st.turns)
    assert final_scenes(st, covered) == [a + b]                  # merge_short, as a batch does
    unread = PendingState(st.turns, dict(list(st.starts.items())[:4]))   # 4 of 9 turns read so far
    assert final_scenes(unread, covered) == []                   # a flush waits for its windows


def test_windows_are_due_only_when_full_or_reached_by_a_flush():
    pending = PendingState(turns(1, stages.WINDOW - 1), {})
    assert segment_pending(pending, NoLLM(), None, covered=0) == 0
    assert pending.examined == 0


def test_a_pause_longer_than_the_idle_setting_closes_a_scene():
    from tmem_graph.config import Settings

    scene = [Turn(f"t{k}", "Ana", "x", f"2024-01-01T10:0{k}:00", 1) for k in range(6)]
    later = Turn("t6", "Ana", "x", "2024-01-01T11:06:00", 1)      # 61 minutes after t5
    soon = Turn("t6", "Ana", "x", "2024-01-01T10:50:00", 1)
    assert stages.closes(scene, later, False, idle_s=3600)
    assert not stages.closes(scene, soon, False, idle_s=3600)
    assert not stages.closes(scene, later, False, idle_s=None)
    untimed = Turn("t6", "Ana", "x", None, 1)
    zoned = Turn("t6", "Ana", "x", "2024-01-01T12:00:00+02:00", 1)  # not comparable with a naive time
    assert not stages.closes(scene, untimed, False, 3600) and not stages.closes(scene, zoned, False, 3600)
    assert Settings.from_env({}).scene_idle_s == 3600
    assert Settings.from_env({"TMEM_SCENE_IDLE_MINUTES": "15"}).scene_idle_s == 900
    assert Settings.from_env({"TMEM_SCENE_IDLE_MINUTES": "off"}).scene_idle_s is None
