"""Topic assignment (Algorithm 4): a choice among the nearest topics or a new one, a new
topic's label, a topic update."""

from __future__ import annotations

from pydantic import BaseModel, Field

from ._format import most

DEFINITION = ("A topic is one specific, identifiable thread of events or activity (for example "
              "\"Caroline's adoption plans\", not \"family\"). A scene belongs to a topic when it "
              "continues, follows up or returns to that thread; sharing a broad category or the same "
              "people is not enough.")


class TopicChoice(BaseModel):
    topic: str = Field(description='the id of the topic the scene continues, or "new"',
                       json_schema_extra=most(chars=12))
    also: list[str] = Field(default_factory=list, description="another listed topic it clearly continues too",
                            json_schema_extra=most(items=1, item_chars=12))


class TopicLabel(BaseModel):
    title: str = Field(description="3-10 words naming the specific thread", json_schema_extra=most(chars=120))
    keywords: list[str] = Field(description="specific and broad keywords",
                                json_schema_extra=most(items=20, item_chars=60))


def _scene(scene) -> str:
    return f"Title: {scene.title}\nSummary: {scene.summary}"


def choice_messages(scene, topics) -> list[dict]:
    """Which of these topics (the few nearest to the scene) does it continue, if any?"""
    listing = "\n".join(f"- {t.id}: {t.title}\n  Keywords: {', '.join(t.keywords[:12])}" for t in topics)
    user = (f"{DEFINITION}\n\nWhich ONE of the topics listed below does the scene continue? Answer its "
            "id, or \"new\" if the scene starts a thread that none of them is about. Only if it clearly "
            "continues a second listed topic as well, put that id in `also`. "
            "Reply with JSON {\"topic\", \"also\"}."
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
