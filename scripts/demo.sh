#!/usr/bin/env bash
# The main job, from a fresh clone: installs everything, starts the local Neo4j (provisioned
# from Maven Central on first use), loads the example memory and shows descriptive and
# associative recall with the reasons each memory came back.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/setup.sh
echo "== starting the local Neo4j (first time: fetches the jars with Maven, ~1 minute)"
tmem db start
echo "== applying the schema (constraints, full-text and vector indexes)"
tmem schema apply
echo "== loading examples/team-dinner.json (every text is embedded with all-MiniLM-L6-v2, offline)"
tmem import examples/team-dinner.json --replace
tmem stats team-dinner
echo
echo "== a descriptive question: the words of the question are in the memory"
tmem recall team-dinner "When did Bob adopt his greyhound Biscuit?" --k-scenes 2 --k-items 3
echo
echo "== an associative question: nothing in it names Priya's shellfish allergy;"
echo "   the allergy comes back through its Bridge trigger and its scene's Horizon trigger"
tmem recall team-dinner "Can you suggest a good sushi place for our group outing?" --speaker Alice --k-scenes 2 --k-items 3
echo
echo "== done. The server keeps running: 'tmem db stop' stops it; Neo4j Browser is at"
echo "   http://127.0.0.1:7474/browser/?dbms=bolt://127.0.0.1:7687&preselectAuthMethod=NO_AUTH"
