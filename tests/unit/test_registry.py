"""The trigger-family registry, the ablation presets built from it, and the test encoder."""

from __future__ import annotations

import math

import pytest

from tmem_graph.encode import get_encoder
from tmem_graph.errors import ConfigError
from tmem_graph.model import HorizonTrigger, Item, ItemTrigger, Scene, trigger_views_of_item, trigger_views_of_scene
from tmem_graph.retrieve.presets import ABLATION_SETS
from tmem_graph.retrieve.results import ABLATIONS
from tmem_graph.triggers import FAMILIES, ITEM, SCENE_FAMILIES, TRIGGER_ABLATIONS, credit, family_of_credit


def test_presets_switch_off_each_component_alone_then_every_trigger_family():
    assert ABLATION_SETS[0] == ("full", ())
    assert [off for _, off in ABLATION_SETS[1:-1]] == [(a,) for a in ABLATIONS]
    assert ABLATION_SETS[-1] == ("w/o all triggers", TRIGGER_ABLATIONS)
    assert set(TRIGGER_ABLATIONS) <= set(ABLATIONS)
    assert len({name for name, _ in ABLATION_SETS}) == len(ABLATION_SETS)


def test_every_credit_leads_back_to_its_family():
    for fam in FAMILIES.values():
        for view in fam.views or ("any",):
            name = credit(fam, view)
            found = family_of_credit(name)
            assert found is not None and found[0] is fam, (fam.key, view, name)
    assert credit(ITEM, "concept") == "entity"          # the paper's Entity trigger
    assert family_of_credit("bm25") is None
    assert {f.channel for f in SCENE_FAMILIES} == {"scene_trigger", "horizon"}


def test_trigger_views_carry_registry_families():
    item = Item(id="i1", text="Priya is allergic to shellfish.", kind="atomic", scene_ids=["s1"],
                triggers=[ItemTrigger(concept="seafood allergy", bridge="choosing a restaurant")])
    scene = Scene(id="s1", turn_ids=["t1"], scene_trigger={"situation": "team lunch"},
                  horizon=[HorizonTrigger("plan", "booking a team dinner")])
    views = trigger_views_of_item(item) + trigger_views_of_scene(scene)
    assert {v.family for v in views} == {"item", "scene", "horizon"} <= set(FAMILIES)
    assert [v.channel for v in trigger_views_of_item(item)] == list(ITEM.views)


def test_the_fake_encoder_is_deterministic_unit_length_and_word_sensitive():
    enc = get_encoder("fake:32")
    assert get_encoder("fake:32") is enc and enc.dim == 32
    a, b, c = enc.encode(["seafood allergy at dinner", "dinner with a seafood allergy", "quarterly tax forms"])
    assert enc.encode(["seafood allergy at dinner"])[0] == a
    assert math.isclose(sum(x * x for x in a), 1.0, rel_tol=1e-9)
    cos = lambda u, v: sum(x * y for x, y in zip(u, v))  # noqa: E731
    assert cos(a, b) > 0.5 > abs(cos(a, c))
    assert enc.count_tokens("two words") == 2


@pytest.mark.parametrize("name", ["fake:x", "fake:0"])
def test_a_bad_fake_encoder_name_is_a_config_error(name):
    with pytest.raises(ConfigError, match="fake"):
        get_encoder(name)
