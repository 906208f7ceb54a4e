#!/usr/bin/env python3
"""Constructs the JSON-RPC SDK recording bash-tool (README.md beside this file).

Writes session.jsonl (the persisted log, packed rows as upstream's JSONL
persistence writes them), notifications.expected.jsonl (every event unpacked,
times zeroed and ids tokenised as sdk.snapshot.ts normalises the stream, with
the session.status records) and result.expected.json, from the model replies
below and the tool result dsh-bash-local gives `echo` unconfined.
usage: construct.py DIR
"""
import json
import sys

PROMPT = "Run this exact command with your bash tool, then reply with its stdout only: echo dsh-sdk-proof-7391"
SESSION = "sdk-snapshot-bash"
CALL = "call_00_kq3VfT7bB2nXcR8dLw5Hs1pZ"
ARGS = ["", "{", "\"", "command", "\"", ": ", "\"", "echo", " d", "sh", "-s", "dk", "-proof", "-", "739", "1", "\"", ", ", "\"", "description", "\"", ": ", "\"", "Print", " the", " proof", " string", "\"", "}"]
REASON1 = ["The", " user", " wants", " me", " to", " run", " the", " exact", " command", " with", " bash", ",", " then", " reply", " with", " its", " stdout", " only", "."]
REASON2 = ["The", " command", " printed", " \"", "dsh", "-s", "dk", "-proof", "-", "739", "1", "\".", " I", " reply", " with", " that", " only", "."]
TEXT2 = ["d", "sh", "-s", "dk", "-proof", "-", "739", "1"]
IDS = {  # message ids upstream mints (uuid v4), tokenised in the expected stream
    "user": "6b1f0d2e-4c3a-4e57-9a1d-2f8c7b5e3a10",
    "a1": "9e2c4b71-0f6d-4a8e-b3c5-71d2e8f4a6b9",
    "tool": "c47a9e15-8b2d-4f63-a0e7-5d3b1c9f2e84",
    "a2": "1d8f3a62-7e4b-49c0-8f25-b6a1c0d7e953",
}
T0 = 1785097395000


def dump(v):
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def build():
    """The log's events in order (deltas unpacked), each with its seq."""
    evs = []

    def add(typ, data, **extra):
        e = {"type": typ, "seq": len(evs), "time": 0, "data": data}
        e.update(extra)
        evs.append(e)
        return e["seq"]

    umsg = {"content": [{"type": "text", "text": PROMPT}], "source": {"kind": "user"}, "role": "user", "id": IDS["user"]}
    add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "inserted": [umsg]})
    add("turn/start", {"turn": 1})
    add("agent/inbox/spliced", {"target": "next-turn", "start": 0, "removedCount": 1, "inserted": []})
    add("step/start", {"turn": 1, "step": 1})
    u = add("user/message", umsg, surfaceOp="append")
    add("session/title", {"title": "Run this exact command with", "messageSeqs": [u], "source": {"kind": "fallback"}})
    add("request/header", {"header": {"config": {"provider": "deepseek-official", "model": "deepseek-v4-flash"}, "system": "{{system}}", "tools": "{{tools}}"}, "reason": "initial"})
    add("request/context", {"provider": "deepseek-official", "model": "deepseek-v4-flash"})
    model = {"kind": "model", "provider": "deepseek-official", "model": "deepseek-v4-flash"}

    def chunk(step, c):
        return add("assistant/chunk", {"turn": 1, "step": step, "chunk": c})

    # step 1: reasoning, then the bash call
    first = chunk(1, {"type": "block-start", "index": 0, "blockType": "reasoning"})
    for t in REASON1:
        chunk(1, {"type": "reasoning-delta", "index": 0, "text": t})
    chunk(1, {"type": "block-start", "index": 1, "blockType": "tool-call"})
    for a in ARGS:
        chunk(1, {"type": "tool-call-delta", "index": 1, "id": CALL, "name": "bash", "argumentsDelta": a})
    args = "".join(ARGS)
    reasoning1 = "".join(REASON1)
    chunk(1, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": reasoning1}})
    chunk(1, {"type": "block-end", "index": 1, "block": {"type": "tool-call", "id": CALL, "name": "bash", "arguments": args}})
    usage1 = {"inputTokens": 1810, "outputTokens": 41, "cacheReadTokens": 0, "reasoningTokens": 19}
    chunk(1, {"type": "usage", "usage": usage1})
    last = chunk(1, {"type": "finish", "reason": {"kind": "tool-calls"}})
    add("assistant/message", {"turn": 1, "step": 1, "message": {"role": "assistant", "content": [{"type": "reasoning", "text": reasoning1}, {"type": "tool-call", "id": CALL, "name": "bash", "arguments": args}], "source": model, "id": IDS["a1"]}, "usage": usage1},
        sourceEventSeqs=list(range(first, last + 1)), surfaceOp="append")
    call = add("tool/call", {"turn": 1, "step": 1, "callId": CALL, "name": "bash", "arguments": args})
    add("tool/result", {"turn": 1, "step": 1, "message": {"source": {"kind": "tool", "callId": CALL}, "content": [{"type": "tool-result", "toolCallId": CALL, "content": [{"type": "text", "text": "dsh-sdk-proof-7391\n"}], "isError": False}], "role": "user", "id": IDS["tool"]}},
        sourceEventSeqs=[call], surfaceOp="append")
    add("step/end", {"turn": 1, "step": 1})
    # step 2: reasoning, then the stdout as the answer
    add("step/start", {"turn": 1, "step": 2})
    first = chunk(2, {"type": "block-start", "index": 0, "blockType": "reasoning"})
    for t in REASON2:
        chunk(2, {"type": "reasoning-delta", "index": 0, "text": t})
    chunk(2, {"type": "block-start", "index": 1, "blockType": "text"})
    for t in TEXT2:
        chunk(2, {"type": "text-delta", "index": 1, "text": t})
    reasoning2, text2 = "".join(REASON2), "".join(TEXT2)
    chunk(2, {"type": "block-end", "index": 0, "block": {"type": "reasoning", "text": reasoning2}})
    chunk(2, {"type": "block-end", "index": 1, "block": {"type": "text", "text": text2}})
    usage2 = {"inputTokens": 64, "outputTokens": 27, "cacheReadTokens": 1792, "reasoningTokens": 18}
    chunk(2, {"type": "usage", "usage": usage2})
    last = chunk(2, {"type": "finish", "reason": {"kind": "stop"}})
    add("assistant/message", {"turn": 1, "step": 2, "message": {"role": "assistant", "content": [{"type": "reasoning", "text": reasoning2}, {"type": "text", "text": text2}], "source": model, "id": IDS["a2"]}, "usage": usage2},
        sourceEventSeqs=list(range(first, last + 1)), surfaceOp="append")
    add("step/end", {"turn": 1, "step": 2})
    add("turn/end", {"turn": 1, "reason": {"kind": "completed"}})
    return evs, text2


PACKED = {"reasoning-delta": ("reasoning-chunks", "text", "texts"), "text-delta": ("text-chunks", "text", "texts"), "tool-call-delta": ("tool-call-chunks", "argumentsDelta", "args")}


def pack(evs):
    """The persisted rows: a run of deltas of one block is one packed row."""
    rows, i = [], 0
    while i < len(evs):
        e = evs[i]
        c = e["data"].get("chunk", {}) if e["type"] == "assistant/chunk" else {}
        kind = PACKED.get(c.get("type"))
        if kind is None:
            rows.append(dict(e, time=T0 + 10 * e["seq"]))
            i += 1
            continue
        j = i
        while j < len(evs) and evs[j]["type"] == "assistant/chunk" and evs[j]["data"]["chunk"].get("type") == c["type"] and evs[j]["data"]["chunk"]["index"] == c["index"]:
            j += 1
        run = evs[i:j]
        data = {"turn": e["data"]["turn"], "step": e["data"]["step"], "index": c["index"], "dt": [10] * (len(run) - 1)}
        if kind[0] == "tool-call-chunks":
            data["id"], data["name"] = c["id"], c["name"]
        data[kind[2]] = [r["data"]["chunk"][kind[1]] for r in run]
        rows.append({"type": kind[0], "seq0": e["seq"], "time0": T0 + 10 * e["seq"], "data": data})
        i = j
    return rows


def tokenised(e):
    s = dump(e)
    for v in IDS.values():
        s = s.replace(v, "{{sessionId}}")
    return json.loads(s)


def main(out):
    evs, answer = build()
    header = {"type": "session", "version": 0, "id": SESSION, "createdAt": T0, "cwd": "{{cwd}}", "delegationDepth": 0}
    with open(f"{out}/session.jsonl", "w") as f:
        for r in [header] + pack(evs):
            f.write(dump(r) + "\n")
    status = lambda s: {"method": "session.status", "params": {"sessionId": "{{sessionId}}", "status": s}}
    recs = []
    for e in evs:
        recs.append({"method": "session.event", "params": {"sessionId": "{{sessionId}}", "event": tokenised(e)}})
        if e["seq"] == 0:
            recs.append(status("running"))
    recs.append(status("idle"))
    with open(f"{out}/notifications.expected.jsonl", "w") as f:
        for r in recs:
            f.write(dump(r) + "\n")
    with open(f"{out}/result.expected.json", "w") as f:
        f.write(dump({"sessionId": "{{sessionId}}", "finalResponse": answer}) + "\n")


if __name__ == "__main__":
    main(sys.argv[1])
