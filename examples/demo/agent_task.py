"""An agent's task: read two incident records, summarise them, file the summary.

Reading goes through the `incidents` capability (an http handler the host
points at the tracker); filing goes through `notes.put`, which a human must
approve. The script sees neither the tracker's address nor the notebook's
file: only the functions the Plan presents.
"""
import json

import agent_runtime
import incidents
import notes

records = []
for incident_id in ("inc-101", "inc-102"):
    response = incidents.get(id=incident_id)
    records.append(response["body"])

worst = max(records, key=lambda r: ("low", "medium", "high").index(r["severity"]))
total_down = sum(r["minutes_down"] for r in records)
lines = [f"{len(records)} incidents this week, {total_down} minutes of downtime."]
for r in records:
    lines.append(f"- [{r['severity']}] {r['service']}: {r['title']} ({r['notes'][-1]})")
lines.append(f"Follow up first: {worst['id']} ({worst['service']}).")
summary = "\n".join(lines)
print(summary)

stored = notes.put(key="weekly-incident-summary", value=summary)
print("filed:", json.dumps(stored))
agent_runtime.set_result({"summary": summary, "incidents": [r["id"] for r in records]})
