#!/usr/bin/env python3
"""Build a constructed model script (session.jsonl with only assistant/chunk events) + input.json.
usage: make.py <outdir> <spec.json>
spec: {"prompts":[...], "turns":[[step,...],...], "workspace":{name:content}, "permissionAnswers":[...]}
  optional "steps":[...]: input.json steps after initialize/newSession (e.g. promptAndCancel, waitForTurnEnd),
  used instead of one prompt op per entry of "prompts"; optional "allSteps":[...]: every input.json step
  (a scenario without newSession); optional "override": replay.override.json's content
a step is {"calls":[[name, argsDict],...]}, {"text":"..."} or {"chunks":[chunk,...]} (raw chunks: a
finish of max-tokens or error, an unfinished block)"""
import json, sys, os
out, spec = sys.argv[1], json.load(open(sys.argv[2]))
os.makedirs(out, exist_ok=True)
lines = [{"type":"session","version":0,"id":"00000000-0000-4000-8000-000000000000","createdAt":0,"cwd":"{{cwd}}","delegationDepth":0}]
seq = 0
def ev(turn, step, chunk):
    global seq
    lines.append({"type":"assistant/chunk","seq":seq,"time":0,"data":{"turn":turn,"step":step,"chunk":chunk}}); seq += 1
n = 0
for ti, steps in enumerate(spec["turns"], 1):
    for si, st in enumerate(steps, 1):
        if "chunks" in st:
            for c in st["chunks"]:
                ev(ti, si, c)
        elif "calls" in st:
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
            ev(ti, si, {"type":"finish","reason":{"kind":"stop"}})
with open(os.path.join(out, "session.jsonl"), "w") as f:
    for l in lines: f.write(json.dumps(l, separators=(",",":")) + "\n")
steps = spec["allSteps"] if "allSteps" in spec else [{"op":"initialize"},{"op":"newSession"}] + (spec["steps"] if "steps" in spec else [{"op":"prompt","text":p} for p in spec["prompts"]])
inp = {"steps": steps}
if spec.get("permissionAnswers"): inp["permissionAnswers"] = spec["permissionAnswers"]
json.dump(inp, open(os.path.join(out, "input.json"), "w"), indent=2)
open(os.path.join(out, "stdout.expected.jsonl"), "w").write("")
if "override" in spec:
    json.dump(spec["override"], open(os.path.join(out, "replay.override.json"), "w"), indent=2)
ws = os.path.join(out, "workspace"); os.makedirs(ws, exist_ok=True)
for k, v in spec.get("workspace", {}).items():
    p = os.path.join(ws, k); os.makedirs(os.path.dirname(p), exist_ok=True); open(p, "w").write(v)
