"""A chat assistant's memory loop: recall before each answer, add each exchange as it
happens, and let a worker thread build scenes in the background (docs/live.md).

    python examples/live_chat.py            # a scripted chat, printed as it goes

It needs the database (`tmem db start`) and an LLM for the builds: the local model
(`TMEM_LLM_MODEL=local`, slow on 2 cores) or any OpenAI-compatible endpoint
(`TMEM_LLM_BASE_URL`, `TMEM_LLM_MODEL`). The answers here are stand-ins; a real assistant
hands `memory.evidence(recall)` to its own model.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta

from tmem_graph import api
from tmem_graph.local import enable_local_llm

CHAT = [
    ("Ana", "My colleague Tom is allergic to shellfish, he nearly ended up in hospital last year."),
    ("Assistant", "That sounds frightening. I'll keep it in mind."),
    ("Ana", "I'm also training for the Lisbon half marathon in October."),
    ("Assistant", "Good luck with the training!"),
    ("Ana", "Where should I take the team for dinner on Friday?"),
]


def main() -> None:
    enable_local_llm()  # lets TMEM_LLM_MODEL=local serve the builds in-process
    stop = threading.Event()
    # the worker: builds every memory with work due, until stopped (any number may run)
    worker = threading.Thread(target=lambda: [None for _ in api.build_due(watch_s=2.0, stop=stop)], daemon=True)
    worker.start()
    clock = datetime(2026, 12, 1, 19, 0)
    with api.Memory("ana-assistant") as memory:
        if memory.exists():
            memory.drop()   # a fresh chat each run
        for n, (speaker, text) in enumerate(CHAT):
            print(f"\n{speaker}: {text}" if speaker == "Ana" else f"{speaker}: {text}")
            if speaker == "Ana" and memory.exists():   # the memory appears with its first add
                # recall before answering: turns added seconds ago are already there (`recent`)
                recall = memory.recall(text, speaker="Ana")
                for turn in recall.recent:
                    print(f"  remembered ({', '.join(turn.via)}): {turn.speaker}: {turn.text}")
                for scene in recall.scenes[:2]:
                    print(f"  remembered scene ({', '.join(scene.via)}): {scene.title}")
            memory.add([{"speaker": speaker, "text": text, "time": (clock + timedelta(minutes=n)).isoformat()}])
        memory.flush()  # the chat is over: the worker closes its last scene and builds it
        print("\nbuilding in the background (the worker)...")
        while memory.stats()["pending_turns"]:
            stop.wait(2.0)
        recall = memory.recall("Where should I take the team for dinner?")
        for scene in recall.scenes[:1]:
            print(f"built scene ({', '.join(scene.via)}): {scene.title}")
        for item in recall.items[:3]:
            print(f"item ({', '.join(item.via)}): {item.text}")
    stop.set()
    worker.join()


if __name__ == "__main__":
    main()
