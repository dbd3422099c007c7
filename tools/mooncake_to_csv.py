#!/usr/bin/env python3
"""Converts a Mooncake trace (JSON lines) into a CSV trace that fleetsim replays with
hashed prompt blocks (fs.trace { file = ..., blocks = "hash_ids" }).

    python3 tools/mooncake_to_csv.py [-o FILE] [--session FIELD] [TRACE.jsonl]

Each input line is one request, an object with timestamp (milliseconds since the
trace's start), input_length and output_length (tokens) and hash_ids (a list of
integers, one a block of 512 tokens of the prompt; equal ids at one position mean an
equal prefix up to that block), as in the FAST'25 traces of github.com/kvcache-ai/Mooncake
(conversation_trace.jsonl, toolagent_trace.jsonl, mooncake_trace.jsonl).  Each output
row is

    TIMESTAMP,ContextTokens,GeneratedTokens,hash_ids

with TIMESTAMP in seconds and the ids separated by spaces.  --session FIELD adds a
session_id column from that field of each line (any JSON value; absent: empty).  A
line that is not such an object is an error "file:line N: ..." (exit status 2); blank
lines are skipped.  Reads and writes a line at a time; only python3's standard library.
"""
import argparse
import json
import sys


class BadLine(Exception):
    pass


def whole(value, name, least=0):
    """value as an int >= least (JSON integers, or floats that are whole)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or value != int(value) or value < least:
        raise BadLine("%s: expected a whole number >= %d, got %s" % (name, least, json.dumps(value)))
    return int(value)


def row_of(line, session):
    try:
        request = json.loads(line)
    except ValueError as e:
        raise BadLine("not JSON: %s" % e)
    if not isinstance(request, dict):
        raise BadLine("expected an object, got %s" % type(request).__name__)
    for key in ("timestamp", "input_length", "output_length", "hash_ids"):
        if key not in request:
            raise BadLine("no \"%s\"" % key)
    ms = request["timestamp"]
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not ms >= 0:
        raise BadLine("timestamp: expected milliseconds >= 0, got %s" % json.dumps(ms))
    ids = request["hash_ids"]
    if not isinstance(ids, list):
        raise BadLine("hash_ids: expected a list, got %s" % json.dumps(ids))
    fields = ["%.3f" % (ms / 1000.0)]
    if session:
        value = request.get(session, "")
        text = value if isinstance(value, str) else json.dumps(value)
        fields.append('"%s"' % text.replace('"', '""') if any(c in text for c in ',"\n\r') else text)
    fields.append(str(whole(request["input_length"], "input_length")))
    fields.append(str(whole(request["output_length"], "output_length")))
    fields.append(" ".join(str(whole(i, "hash_ids")) for i in ids))
    return ",".join(fields)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", nargs="?", default="-", help="the JSONL trace (default: stdin)")
    p.add_argument("-o", "--output-file", default="-", help="the CSV (default: stdout)")
    p.add_argument("--session", help="a field naming each request's session")
    args = p.parse_args(argv)
    name = "<stdin>" if args.trace == "-" else args.trace
    try:
        src = sys.stdin if args.trace == "-" else open(args.trace, encoding="utf-8")
    except OSError as e:
        sys.stderr.write("%s: cannot read the trace: %s\n" % (name, e.strerror))
        return 2
    out = sys.stdout if args.output_file == "-" else open(args.output_file, "w", newline="")
    out.write("TIMESTAMP,%sContextTokens,GeneratedTokens,hash_ids\n"
              % ("session_id," if args.session else ""))
    status = 0
    for n, line in enumerate(src, 1):
        if not line.strip():
            continue
        try:
            out.write(row_of(line, args.session) + "\n")
        except BadLine as e:
            sys.stderr.write("%s:line %d: %s\n" % (name, n, e))
            status = 2
            break
    if out is not sys.stdout:
        out.close()
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
