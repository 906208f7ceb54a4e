#!/usr/bin/env python3
"""Writes a goal recording's session.expected.jsonl (README.md beside this file).

From a session log of the scenario (dsh-replay -logs DIR writes it), in the
shape of upstream's goal suite normalisation (goal.snapshot.ts: the shared
snapshot scrubbers, then goal timestamps zeroed): times 0, the session id,
message ids and goal ids tokenised, the workspace as {{cwd}}, the request
header scrubbed and the model route upstream's replay model names.
usage: construct.py LOG OUT
"""
import json
import re
import sys

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
ROUTE = {"provider": "deepseek-official", "model": "deepseek-v4-flash"}
STAMPS = ("createdAt", "updatedAt", "clearedAt")


def dump(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def zero_stamps(v):
    if isinstance(v, str):
        return re.sub(r'("(?:createdAt|updatedAt|clearedAt)":)\d+', r"\g<1>0", v)
    if isinstance(v, list):
        return [zero_stamps(x) for x in v]
    if isinstance(v, dict):
        return {k: 0 if k in STAMPS and isinstance(x, (int, float)) else zero_stamps(x) for k, x in v.items()}
    return v


def main(log, out):
    lines = [json.loads(l) for l in open(log) if l.strip()]
    head, evs = lines[0], lines[1:]
    cwd = head["cwd"]
    rows = [{"type": "session", "version": 0, "id": "{{sessionId}}", "createdAt": 0, "cwd": "{{cwd}}", "delegationDepth": 0}]
    for e in evs:
        e["time"] = 0
        d = e.get("data", {})
        if e["type"] == "request/header":
            e["data"] = {"header": {"config": dict(ROUTE), "system": "{{system}}", "tools": "{{tools}}"}, "reason": d.get("reason", "initial")}
        elif e["type"] == "request/context":
            e["data"] = dict(ROUTE)
        elif e["type"] == "assistant/message":
            d["message"]["source"] = dict(kind="model", **ROUTE)
        s = UUID.sub("{{sessionId}}", dump(e).replace(cwd, "{{cwd}}"))
        rows.append(zero_stamps(json.loads(s)))
    with open(out, "w") as f:
        for r in rows:
            f.write(dump(r) + "\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
