#!/usr/bin/env python3
"""Construct the headless recordings of testdata/replay/headless-hidden whose upstream run is not
possible here (their composition needs packages rc.8 did not publish). Each is built from a given
recording of the same scenario or from upstream's driver, as its README says; the stream-json
records are then written by stream.mjs with upstream's own normaliser.
usage: python3 make.py NAME [ROOT]   (ROOT: the repository, default ../../..)"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def rows(path):
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


def write_rows(path, rs):
    with open(path, "w") as f:
        for r in rs:
            f.write(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n")


def flash(v):
    """Re-pin the recorded route on deepseek-v4-flash, the headless base composition's main agent."""
    if isinstance(v, dict):
        return {k: flash(x) for k, x in v.items()}
    if isinstance(v, list):
        return [flash(x) for x in v]
    return "deepseek-v4-flash" if v == "deepseek-v4-pro" else v


def sandbox_only(rs):
    """The runtime context of a composition that mounts sandbox-policy and no approval plugin: the
    sandbox:policy section alone (the approval section is the ACP bridge's user-approval's)."""
    for r in rs:
        src = r.get("data", {}).get("source", {}) if r.get("type") == "user/message" else {}
        if src.get("form") != "snapshot":
            continue
        src["sections"] = [s for s in src["sections"] if s["name"] == "sandbox:policy"]
        head = "Current runtime context. This snapshot supersedes earlier runtime-context snapshots."
        r["data"]["content"] = [{"type": "text", "text": "\n\n".join([head] + [s["text"] for s in src["sections"]])}]
    return rs


def pty_tools(root, out):
    src = os.path.join(root, "transcripts", "pty-tools")
    write_rows(os.path.join(out, "session.jsonl"), sandbox_only(flash(rows(os.path.join(src, "session.jsonl")))))
    with open(os.path.join(src, "input.json")) as f, open(os.path.join(out, "input.json"), "w") as g:
        g.write(f.read())


PRODUCT_ONLY = ("permission/preset", "sandbox/mode", "approval/policy")


def remap(v, seqs):
    """Renumber the seq references of an event's data (sourceEventSeqs, messageSeqs, shadowedSeqs)."""
    if isinstance(v, dict):
        return {k: ([seqs[x] for x in x_] if k in ("sourceEventSeqs", "messageSeqs", "shadowedSeqs") else remap(x_, seqs))
                for k, x_ in v.items()}
    if isinstance(v, list):
        return [remap(x, seqs) for x in v]
    return v


def suite_composition(rs):
    """A product-profile run's log as the example composition logs the same run: the headless
    base composition (examples/headless-agent/cordis.yml) mounts no sandbox-policy, approval or
    permission-preset plugin, so it writes no permission/preset, sandbox/mode or approval/policy
    events and no runtime-context message; the rest is renumbered from seq 0."""
    def product_only(r):
        src = r.get("data", {}).get("source", {}) if r.get("type") == "user/message" else {}
        return r.get("type") in PRODUCT_ONLY or src.get("form") == "snapshot"
    kept = [rs[0]] + [r for r in rs[1:] if not product_only(r)]
    seqs = {r["seq"]: i for i, r in enumerate(kept[1:])}
    return [kept[0]] + [dict(remap(r, seqs), seq=seqs[r["seq"]]) for r in kept[1:]]


def suite_log(root, out):
    """NAME/upstream-run.jsonl (the product-profile run's log, upstream.mjs) in the example
    composition, as NAME/suite.session.jsonl (for stream.mjs; not kept)."""
    write_rows(os.path.join(out, "suite.session.jsonl"), suite_composition(rows(os.path.join(out, "upstream-run.jsonl"))))


def resumed(file):
    """NAME/upstream-run.jsonl (resume.mjs's run) in the example composition, header-scrubbed as
    the suite's expected log is (scrubRequestHeaders), as NAME/file."""
    def make(root, out):
        rs = suite_composition(rows(os.path.join(out, "upstream-run.jsonl")))
        for r in rs:
            if r.get("type") == "request/header":
                r["data"]["header"]["system"], r["data"]["header"]["tools"] = "{{system}}", "{{tools}}"
        write_rows(os.path.join(out, file), rs)
    return make


MAKERS = {"offline-edit": resumed("session.expected.jsonl"), "precedence-change": resumed("session.expected.jsonl"),
          "descriptorless-child": resumed("parent.expected.jsonl"), "pty-tools": pty_tools, "provider-retry": suite_log, "missing-credential": suite_log, "invalid-credential": suite_log}

if __name__ == "__main__":
    name = sys.argv[1]
    root = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "..", "..")
    out = os.path.join(HERE, name)
    os.makedirs(out, exist_ok=True)
    MAKERS[name](root, out)
