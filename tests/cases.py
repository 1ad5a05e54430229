"""Broken-document cases shared by the unit and integration tests: (path, value, message start)."""

from tmem_graph.memory_format import MAX_TEXT_BYTES

BROKEN = [
    (("format",), "tmem-memory/2", "format: must be 'tmem-memory/1'"),
    (("memory_id",), "has space", "memory_id: 'has space' is not a valid memory id"),
    (("memory_id",), "m" * 129, "memory_id: 'mmmm"),
    (("memory_id",), KeyError, "memory_id: None is not a valid memory id"),
    (("turns", 1, "id"), "D1:1", 'turns[1].id: duplicate turn id "D1:1"'),
    (("scenes", 0, "id"), "", "scenes[0].id: must be a non-empty string"),
    (("items", 2, "id"), 7, "items[2].id: must be a non-empty string"),
    (("turns", 0, "speaker"), "Carol", "turns[0].speaker: 'Carol' is not listed in speakers"),
    (("personas", 1, "speaker"), "Dave", "personas[1].speaker: 'Dave' is not listed in speakers"),
    (("turns", 0, "time"), "8 May 2023", "turns[0].time: '8 May 2023' is not an ISO 8601 date-time"),
    (("scenes", 2, "time"), "2023-13-01T00:00:00", "scenes[2].time: '2023-13-01T00:00:00' is not"),
    (("turns", 0, "session"), "one", "turns[0].session: must be an integer"),
    (("turns", 0, "text"), "   ", "turns[0].text: must not be empty"),
    (("turns", 0, "text"), KeyError, "turns[0].text: missing"),
    (("scenes", 0, "turn_ids"), [], "scenes[0].turn_ids: must name at least one turn"),
    (("scenes", 0, "turn_ids"), ["D1:1", "D9:9"], 'scenes[0].turn_ids[1]: no turn "D9:9"'),
    (("scenes", 0, "turn_ids"), ["D1:2", "D1:1"], "scenes[0].turn_ids: turns are not in conversation order"),
    (("scenes", 1, "turn_ids"), ["D1:4", "D2:1"], 'scenes[1].turn_ids[0]: turn "D1:4" already belongs to scene "s1"'),
    (("topics", 0, "scene_ids"), [], "topics[0].scene_ids: must name at least one scene"),
    (("topics", 2, "scene_ids"), ["s99"], 'topics[2].scene_ids[0]: no scene "s99"'),
    (("topics", 0, "keywords"), "team", "topics[0].keywords: must be a list of strings"),
    (("items", 0, "kind"), "fact", "items[0].kind: must be 'atomic' or 'connected'"),
    (("items", 0, "scene_ids"), ["s1", "s2"], "items[0].scene_ids: an atomic item has exactly one scene id"),
    (("items", 4, "scene_ids"), ["s3"], "items[4].scene_ids: a connected item has two or more scene ids"),
    (("items", 4, "scene_ids"), ["s3", "s99"], 'items[4].scene_ids[1]: no scene "s99"'),
    (("items", 0, "triggers"), {"concept": "x"}, "items[0].triggers: must be a list"),
    (("items", 0, "triggers", 0, "bridge"), ["x"], "items[0].triggers[0].bridge: must be a string"),
    (("scenes", 0, "triggers", "horizon", 0), {"channel": "goal_arc"}, "scenes[0].triggers.horizon[0].text: missing"),
    (("scenes", 0, "triggers", "scene"), ["x"], "scenes[0].triggers.scene: must be an object"),
    (("items", 1, "text"), "x" * (MAX_TEXT_BYTES + 1), "items[1].text: longer than the limit of 32768 bytes"),
    (("speakers",), ["Alice", "Alice", "Bob"], "speakers: a name is listed twice"),
    (("scenes",), {"s1": {}}, "scenes: must be a list, not dict"),
    (("turns", 3), "hello", "turns[3]: must be an object, not str"),
]


def mutate(doc: dict, path: tuple, value) -> dict:
    """Set (or delete, with KeyError as value) the field at `path` in `doc`; return `doc`."""
    *head, last = path
    target = doc
    for key in head:
        target = target[key]
    if value is KeyError:
        del target[last]
    else:
        target[last] = value
    return doc
