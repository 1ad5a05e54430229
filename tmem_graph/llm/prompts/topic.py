"""Topic assignment: batched matching, a new topic, a topic update (Algorithm 4)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most

DEFINITION = ("A topic is one specific, identifiable thread of events or activity (for example "
              "\"Caroline's adoption plans\", not \"family\"). A scene belongs to a topic when it "
              "continues, follows up or returns to that thread; sharing a broad category or the same "
              "people is not enough.")


class TopicMatch(BaseModel):
    topic_id: str = Field(json_schema_extra=most(chars=12))
    match: bool


class TopicMatches(BaseModel):
    results: list[TopicMatch] = Field(json_schema_extra=most(items=10))


class TopicLabel(BaseModel):
    title: str = Field(description="3-10 words naming the specific thread", json_schema_extra=most(chars=120))
    keywords: list[str] = Field(description="specific and broad keywords",
                                json_schema_extra=most(items=20, item_chars=60))


def _scene(scene) -> str:
    return f"Title: {scene.title}\nSummary: {scene.summary}"


def match_messages(scene, topics) -> list[dict]:
    """Which of these topics (up to a batch of 10) does the scene belong to?"""
    listing = "\n".join(f"- {t.id}: {t.title}\n  Keywords: {', '.join(t.keywords)}" for t in topics)
    user = (f"{DEFINITION}\n\nFor every topic listed below say whether the scene belongs to it; several "
            "may match; when in doubt, false. Reply with JSON {\"results\": [{\"topic_id\", \"match\"}]}."
            f"\n\nScene:\n{_scene(scene)}\n\nTopics:\n{listing}")
    return [{"role": "user", "content": user}]


def new_topic_messages(scene) -> list[dict]:
    """A label for a new topic started by this scene."""
    user = (f"{DEFINITION}\n\nThis scene starts a new topic:\n{_scene(scene)}\nNarrative: {scene.narrative}\n\n"
            "Name the topic. Reply with JSON {\"title\", \"keywords\": [10 or more]}.")
    return [{"role": "user", "content": user}]


def update_topic_messages(topic, scene) -> list[dict]:
    """The topic's label after the scene joined it; its identity must stay the same."""
    user = (f"{DEFINITION}\n\nTopic {topic.id}: {topic.title}\nKeywords: {', '.join(topic.keywords)}\n\n"
            f"A new scene joined it:\n{_scene(scene)}\n\n"
            "Return the topic's label: keep the title unless the scene makes it more specific (never "
            "change what the thread is about); return every old keyword plus any new ones. "
            "Reply with JSON {\"title\", \"keywords\"}.")
    return [{"role": "user", "content": user}]
