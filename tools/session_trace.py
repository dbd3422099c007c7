#!/usr/bin/env python3
"""Writes a synthetic session trace: multi-turn chat sessions as fleetsim replays them
(fs.trace { file = ..., session = "session_id" }).

    python3 tools/session_trace.py [-o FILE] [--sessions N] [--rate R] [--turns LO HI]
        [--think S] [--system T] [--new T] [--output T] [--answer-s S] [--seed K]

One row a turn, in time order, under the header

    TIMESTAMP,session_id,ContextTokens,GeneratedTokens

TIMESTAMP is seconds since the trace's start, session_id names the session (s1, s2,
...), ContextTokens is the turn's whole prompt and GeneratedTokens its answer.  Turn 1's
prompt is the system prompt (--system tokens, shared by every session) plus new tokens;
turn k's is turn k-1's prompt and answer plus new tokens, so a replica that served turn
k-1 holds the first ContextTokens of turn k but the new ones.  Sessions arrive as a
Poisson process of --rate a second, draw their turns uniformly from --turns, and think
an exponential --think seconds (mean) after each answer, which is taken to end
--answer-s seconds a token after the turn was sent (the trace is open loop: it fixes the
times, where fleetsim's own sessions wait for the answer).  New tokens and answers are
lognormal with medians --new and --output and sigma 0.5.  Only python3's standard
library; the same arguments give the same file byte for byte.
"""
import argparse
import heapq
import math
import random
import sys


def lognormal(rng, median, sigma=0.5):
    return max(1, int(round(median * math.exp(rng.gauss(0, sigma)))))


def turns_of(args, rng, start_s, name):
    """The rows (time, session, prompt, output) of one session."""
    rows, history, at = [], args.system, start_s
    for _ in range(rng.randint(args.turns[0], args.turns[1])):
        prompt = history + lognormal(rng, args.new)
        output = lognormal(rng, args.output)
        rows.append((at, name, prompt, output))
        history = prompt + output
        at += output * args.answer_s + rng.expovariate(1 / args.think)
    return rows


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("-o", "--output-file", default="-", help="the CSV (default: stdout)")
    p.add_argument("--sessions", type=int, default=100)
    p.add_argument("--rate", type=float, default=1.0, help="sessions a second")
    p.add_argument("--turns", type=int, nargs=2, default=(4, 8), metavar=("LO", "HI"))
    p.add_argument("--think", type=float, default=20.0, help="mean seconds between turns")
    p.add_argument("--system", type=int, default=1000, help="system prompt tokens")
    p.add_argument("--new", type=float, default=150, help="median new tokens a turn")
    p.add_argument("--output", type=float, default=250, help="median answer tokens")
    p.add_argument("--answer-s", type=float, default=0.02, help="seconds an answer token")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if args.sessions < 0 or args.rate <= 0 or args.think <= 0 or args.system < 0 \
            or not 1 <= args.turns[0] <= args.turns[1]:
        p.error("expected --sessions >= 0, --rate > 0, --think > 0, --system >= 0 and "
                "1 <= LO <= HI for --turns")
    rng = random.Random(args.seed)
    sessions, at = [], 0.0
    for k in range(args.sessions):
        sessions.append(turns_of(args, rng, at, "s%d" % (k + 1)))
        at += rng.expovariate(args.rate)
    out = sys.stdout if args.output_file == "-" else open(args.output_file, "w", newline="")
    out.write("TIMESTAMP,session_id,ContextTokens,GeneratedTokens\n")
    for t, name, prompt, output in heapq.merge(*sessions):  # each session is in time order
        out.write("%.6f,%s,%d,%d\n" % (t, name, prompt, output))
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
