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
line that is not such an object (not UTF-8, not JSON, a number past the range of a
double or not finite) is an error "file:N: ..." and exit status 2, with no output file
left behind (the CSV is written beside it and renamed into place when whole); blank
lines are skipped.  Reads and writes a line at a time; only python3's standard library.
"""
import argparse
import json
import math
import os
import sys
import tempfile


class BadLine(Exception):
    pass


# Past these a token count, a block id or a time is no trace's (fleetsim's own bounds
# are narrower and it says so when it loads the CSV).
MOST = 2 ** 53
MOST_MS = 1e15


def refuse_constant(name):
    """json's hook for NaN and Infinity, which JSON does not have."""
    raise BadLine("not JSON: %s is not a JSON number" % name)


def shown(value):
    """value as the message quotes it (1e400 parses as infinity)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "a number past the range of a double"
    return json.dumps(value)


def whole(value, name, least=0):
    """value as an int from least to 2^53 (JSON integers, or floats that are whole)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) \
            or not math.isfinite(value) or value != int(value) or not least <= value <= MOST:
        raise BadLine("%s: expected a whole number from %d to 2^53, got %s"
                      % (name, least, shown(value)))
    return int(value)


def row_of(raw, session):
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise BadLine("not UTF-8 (byte %d)" % (e.start + 1))
    try:
        # 1e400 parses as a float of infinity: refused below by isfinite
        request = json.loads(line, parse_constant=refuse_constant)
    except (ValueError, RecursionError) as e:
        raise BadLine("not JSON: %s" % e)
    if not isinstance(request, dict):
        raise BadLine("expected an object, got %s" % type(request).__name__)
    for key in ("timestamp", "input_length", "output_length", "hash_ids"):
        if key not in request:
            raise BadLine("no \"%s\"" % key)
    ms = request["timestamp"]
    if isinstance(ms, bool) or not isinstance(ms, (int, float)) or not 0 <= ms <= MOST_MS:
        raise BadLine("timestamp: expected milliseconds from 0 to 1e15, got %s" % shown(ms))
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


def convert(src, out, name, session):
    """Writes the CSV of src to out; returns the exit status."""
    out.write("TIMESTAMP,%sContextTokens,GeneratedTokens,hash_ids\n"
              % ("session_id," if session else ""))
    for n, raw in enumerate(src, 1):
        if not raw.strip():
            continue
        try:
            out.write(row_of(raw, session) + "\n")
        except BadLine as e:
            sys.stderr.write("%s:%d: %s\n" % (name, n, e))
            return 2
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("trace", nargs="?", default="-", help="the JSONL trace (default: stdin)")
    p.add_argument("-o", "--output-file", default="-", help="the CSV (default: stdout)")
    p.add_argument("--session", help="a field naming each request's session")
    args = p.parse_args(argv)
    name = "<stdin>" if args.trace == "-" else args.trace
    try:
        src = sys.stdin.buffer if args.trace == "-" else open(args.trace, "rb")
    except OSError as e:
        sys.stderr.write("%s: cannot read the trace: %s\n" % (name, e.strerror))
        return 2
    if args.output_file == "-":
        return convert(src, sys.stdout, name, args.session)
    # the CSV beside its final name, renamed there only when whole
    folder = os.path.dirname(os.path.abspath(args.output_file))
    try:
        fd, partial = tempfile.mkstemp(prefix=".mooncake-", suffix=".csv", dir=folder)
    except OSError as e:
        sys.stderr.write("%s: cannot write there: %s\n" % (args.output_file, e.strerror))
        return 2
    mask = os.umask(0)
    os.umask(mask)
    os.chmod(partial, 0o666 & ~mask)  # as open() would have made it, not mkstemp's 0600
    status = 2
    try:
        with os.fdopen(fd, "w", newline="") as out:
            status = convert(src, out, name, args.session)
        if status == 0:
            os.replace(partial, args.output_file)
    except OSError as e:
        sys.stderr.write("%s: cannot write: %s\n" % (args.output_file, e.strerror))
        status = 2
    finally:
        if status != 0 and os.path.exists(partial):
            os.unlink(partial)
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
