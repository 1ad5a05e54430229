"""A memory's objects one at a time on the real Neo4j: list with cursor paging, get (docs/api.md)."""

import json

import pytest

from tests.integration.test_cli import one_line_error, tmem
from tmem_graph import api
from tmem_graph.errors import MemoryNotFound, ObjectNotFound, UsageError

# the turns each item of team-dinner rests on (i6: not recorded)
SOURCE_TURNS = {"i1": ["D1:1", "D1:3"], "i2": ["D2:1"], "i3": ["D2:3"], "i4": ["D3:1"], "i5": ["D1:3", "D3:1"]}


@pytest.fixture
def team(store, encoder, new_id, team_doc):
    """The team-dinner memory under a fresh id, its items with their source turns."""
    team_doc["memory_id"] = new_id("objects")
    for item in team_doc["items"]:
        item["turn_ids"] = SOURCE_TURNS.get(item["id"], [])
    return api.import_memory(team_doc, store=store, encoder=encoder)[0]


def every_page(memory, kind, limit):
    """Every object of a kind, page after page, and the number of pages."""
    objects, after, pages = [], None, 0
    while True:
        page = memory.list(kind, after=after, limit=limit)
        objects += page["objects"]
        pages += 1
        if page["next"] is None:
            return objects, pages
        after = page["next"]


@pytest.mark.parametrize("kind, limit, pages", [("turns", 4, 4), ("scenes", 2, 2), ("items", 5, 2),
                                                 ("turns", 500, 1)])
def test_pages_give_every_object_once_in_order(team, team_doc, kind, limit, pages):
    objects, seen = every_page(team, kind, limit)
    assert [o["id"] for o in objects] == [o["id"] for o in team_doc[kind]]
    assert seen == pages   # a page is only followed by a cursor when more objects follow


def test_objects_carry_their_links(team, team_doc):
    turn = team.list("turns", limit=1)["objects"][0]
    assert turn == {"id": "D1:1", "speaker": "Alice", "text": team_doc["turns"][0]["text"],
                    "time": "2023-05-08T13:56:00", "session": 1, "scene_id": "s1", "pending": False}
    scene = team.list("scenes", limit=1)["objects"][0]
    assert scene["turn_ids"] == ["D1:1", "D1:2", "D1:3", "D1:4"] and scene["topic_ids"] == ["t1", "t2"]
    connected = next(o for o in team.list("items")["objects"] if o["id"] == "i5")
    assert connected["kind"] == "connected" and connected["scene_ids"] == ["s3", "s1"]


def test_a_pending_turn_is_listed_last_without_a_scene(team):
    team.add([{"speaker": "Alice", "text": "Priya is vegetarian now.", "time": "2023-07-01T10:00:00"}])
    last = team.list("turns", after=team.list("turns", limit=15)["next"])
    assert [(o["speaker"], o["scene_id"], o["pending"]) for o in last["objects"]] == [("Alice", None, True)]
    assert last["next"] is None


@pytest.mark.parametrize("kind, after, limit, message", [
    ("topics", None, 10, "kind 'topics': must be one of turns, scenes, items"),
    ("turns", None, 0, "limit 0: must be an integer from 1 to 500"),
    ("turns", None, 501, "limit 501: must be an integer from 1 to 500"),
    ("turns", None, True, "limit True: must be an integer from 1 to 500"),
    ("turns", "not-a-cursor", 10, "after 'not-a-cursor': not a cursor of this listing of turns"),
])
def test_bad_requests_are_one_clear_error(team, kind, after, limit, message):
    with pytest.raises(UsageError) as info:
        team.list(kind, after=after, limit=limit)
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_a_cursor_serves_only_its_own_listing(team, store):
    cursor = team.list("turns", limit=2)["next"]
    with pytest.raises(UsageError, match="not a cursor of this listing of scenes"):
        team.list("scenes", after=cursor)
    with pytest.raises(MemoryNotFound, match="no memory 'no-such-memory-xyz'"):
        api.Memory("no-such-memory-xyz", store=store).list("turns")


def test_get_a_turn_with_its_scene_neighbours_and_items(team):
    got = team.get("turn", "D1:3")
    assert got["object"]["text"].startswith("She's fine now") and got["triggers"] == []
    assert got["sources"] == {"scene": {"id": "s1", "title": "Priya's shellfish reaction",
                                        "time": "2023-05-08T13:56:00"}, "pending": False}
    assert got["neighbours"] == {"previous": "D1:2", "next": "D1:4"}
    assert got["derived"] == {"items": ["i1", "i5"]}
    assert team.get("turns", "D1:1")["neighbours"] == {"previous": None, "next": "D1:2"}


def test_get_a_scene_with_its_triggers_turns_topics_and_chain(team):
    got = team.get("scene", "s2")
    assert got["object"]["turn_ids"] == ["D2:1", "D2:2", "D2:3", "D2:4"]
    assert {(v["family"], v["channel"]) for v in got["triggers"]} == {
        ("horizon", "goal_arc"), ("horizon", "risk"), ("scene", "situation"), ("scene", "event")}
    assert [t["id"] for t in got["sources"]["turns"]] == ["D2:1", "D2:2", "D2:3", "D2:4"]
    assert got["sources"]["topics"] == [{"id": "t2", "title": "Health and fitness"}]
    assert got["neighbours"] == {"previous": "s1", "next": "s3"} and got["derived"] == {"items": ["i2", "i3"]}
    assert team.get("scene", "s4")["neighbours"] == {"previous": "s3", "next": None}


def test_get_an_item_with_its_views_sources_and_the_items_beside_it(team):
    got = team.get("item", "i5")
    assert got["object"]["kind"] == "connected" and got["object"]["scene_ids"] == ["s3", "s1"]
    assert sorted(v["channel"] for v in got["triggers"]) == ["bridge", "concept", "joint"]
    assert [s["id"] for s in got["sources"]["scenes"]] == ["s3", "s1"]
    assert [t["id"] for t in got["sources"]["turns"]] == ["D1:3", "D3:1"]
    assert got["neighbours"] == {"items": ["i1", "i4"]} and "derived" not in got


@pytest.mark.parametrize("kind, object_id, error, message", [
    ("item", "i99", ObjectNotFound, "memory '{m}' has no item 'i99'"),
    ("scene", "D1:1", ObjectNotFound, "memory '{m}' has no scene 'D1:1'"),   # a turn's id is not a scene's
    ("topic", "t1", UsageError, "kind 'topic': must be one of turns, scenes, items"),
    ("turn", "", UsageError, "id '': must be a non-empty string"),
])
def test_get_of_what_is_not_there_is_one_clear_error(team, kind, object_id, error, message):
    with pytest.raises(error) as info:
        team.get(kind, object_id)
    assert str(info.value).startswith(message.format(m=team.id)) and "\n" not in str(info.value)


def test_the_get_command(team):
    result = tmem("get", team.id, "item", "i1", "--json")
    assert result.returncode == 0 and json.loads(result.stdout)["sources"]["turns"][1]["id"] == "D1:3"
    result = tmem("get", team.id, "item", "i99")
    assert result.returncode == 1 and one_line_error(result) == f"Error: memory '{team.id}' has no item 'i99'"


def test_the_list_command(team):
    result = tmem("list", team.id, "items", "--limit", "4", "--json")
    page = json.loads(result.stdout)
    assert result.returncode == 0 and [o["id"] for o in page["objects"]] == ["i1", "i2", "i3", "i4"]
    result = tmem("list", team.id, "items", "--after", page["next"])
    assert result.returncode == 0 and [line.split("\t")[0] for line in result.stdout.splitlines()] == ["i5", "i6"]
    result = tmem("list", team.id, "scenes", "--after", page["next"])
    assert result.returncode == 1 and "not a cursor of this listing of scenes" in one_line_error(result)
    assert tmem("list", team.id, "topics").returncode == 2
