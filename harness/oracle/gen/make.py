#!/usr/bin/env python3
"""Build a constructed model script (session.jsonl with only assistant/chunk events) + input.json.
usage: make.py <outdir> <spec.json>
spec: {"prompts":[...], "turns":[[step,...],...], "workspace":{name:content}, "permissionAnswers":[...]}
  optional "steps":[...]: input.json steps after initialize/newSession (e.g. promptAndCancel, waitForTurnEnd),
  used instead of one prompt op per entry of "prompts"
a step is {"calls":[[name, argsDict],...]} or {"text":"..."}
  optional "children":[[[step,...],...] or {"parent":n,"turns":...},...]: each child session's turns (its own script,
  session.<n>.jsonl, bound by upstream's llm-replay to the n-th child session that calls the model)
  a step may also be {"text":"...","finish":"max-tokens"} (a reply cut off at its token limit)"""
import json, sys, os
out, spec = sys.argv[1], json.load(open(sys.argv[2]))
os.makedirs(out, exist_ok=True)
ROOT = "00000000-0000-4000-8000-000000000000"
lines, seq, n = [], 0, 0
def ev(turn, step, chunk):
    global seq
    lines.append({"type":"assistant/chunk","seq":seq,"time":0,"data":{"turn":turn,"step":step,"chunk":chunk}}); seq += 1
def script(header, turns):
    global lines, seq, n
    lines, seq = [header], 0
    emit(turns)
    return lines
def emit(turns):
  global n
  for ti, steps in enumerate(turns, 1):
    for si, st in enumerate(steps, 1):
        if "calls" in st:
            for k, (name, args) in enumerate(st["calls"]):
                n += 1
                cid = "call_%02d_probe%04d" % (k, n)
                a = json.dumps(args)
                ev(ti, si, {"type":"block-start","index":k,"blockType":"tool-call"})
                ev(ti, si, {"type":"tool-call-delta","index":k,"id":cid,"name":name,"argumentsDelta":a})
                ev(ti, si, {"type":"block-end","index":k,"block":{"type":"tool-call","id":cid,"name":name,"arguments":a}})
            ev(ti, si, {"type":"usage","usage":{"inputTokens":100,"outputTokens":10,"cacheReadTokens":0,"reasoningTokens":0}})
            ev(ti, si, {"type":"finish","reason":{"kind":"tool-calls"}})
        else:
            ev(ti, si, {"type":"block-start","index":0,"blockType":"text"})
            ev(ti, si, {"type":"text-delta","index":0,"text":st["text"]})
            ev(ti, si, {"type":"block-end","index":0,"block":{"type":"text","text":st["text"]}})
            ev(ti, si, {"type":"usage","usage":{"inputTokens":100,"outputTokens":1,"cacheReadTokens":0,"reasoningTokens":0}})
            ev(ti, si, {"type":"finish","reason":{"kind":st.get("finish","stop")}})
def write(name, ls):
    with open(os.path.join(out, name), "w") as f:
        for l in ls: f.write(json.dumps(l, separators=(",",":")) + "\n")
write("session.jsonl", script({"type":"session","version":0,"id":ROOT,"createdAt":0,"cwd":"{{cwd}}","delegationDepth":0}, spec["turns"]))
depth = {0: 0}
for ci, child in enumerate(spec.get("children", []), 1):
    # a child is its turns, or {"parent": <n of its parent session, 0: the primary>, "turns": ...}
    parent, turns = (child.get("parent", 0), child["turns"]) if isinstance(child, dict) else (0, child)
    depth[ci] = depth[parent] + 1
    cid = "00000000-0000-4000-8000-%012d" % ci
    write("session.%d.jsonl" % ci, script({"type":"session","version":0,"id":cid,"createdAt":ci,"cwd":"{{cwd}}","parentSession":"00000000-0000-4000-8000-%012d" % parent,"origin":"subagent","delegationDepth":depth[ci]}, turns))
steps = [{"op":"initialize"},{"op":"newSession"}] + (spec["steps"] if "steps" in spec else [{"op":"prompt","text":p} for p in spec["prompts"]])
inp = {"steps": steps}
if spec.get("permissionAnswers"): inp["permissionAnswers"] = spec["permissionAnswers"]
json.dump(inp, open(os.path.join(out, "input.json"), "w"), indent=2)
open(os.path.join(out, "stdout.expected.jsonl"), "w").write("")
ws = os.path.join(out, "workspace"); os.makedirs(ws, exist_ok=True)
for k, v in spec.get("workspace", {}).items():
    p = os.path.join(ws, k); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write(v)
