#!/usr/bin/env python3
"""Writes a synthetic session trace: multi-turn chat sessions as fleetsim replays them
(fs.trace { file = ..., session = "session_id" }).

    python3 tools/session_trace.py [-o FILE] [--sessions N] [--rate R] [--turns LO HI]
        [--think S] [--system T] [--new T] [--output T] [--answer-s S] [--seed K]
        [--hash-ids [--block B] [--systems K]]

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

With --hash-ids a fifth column, hash_ids, names each turn's prompt blocks of --block
tokens (512) as Mooncake's traces do (fs.trace { blocks = "hash_ids" }): ids separated
by spaces, each new block's id the next integer, so that equal ids at one position mean
an equal prefix.  Each session draws one of --systems system prompts (1; uniformly), a
block wholly inside it is named by the system prompt's id (shared by the sessions that
drew it), every later whole block by the session's own (kept from turn to turn: turn k
resends turn k-1's tokens), and a partial last block by a fresh id (its content changes
when the next turn fills it).
"""
import argparse
import heapq
import math
import random
import sys


def lognormal(rng, median, sigma=0.5):
    return max(1, int(round(median * math.exp(rng.gauss(0, sigma)))))


class BlockIds:
    """Mooncake-style ids: the next integer for every block not named before."""

    def __init__(self, args):
        self.block, self.next = args.block, 0
        # the system prompts' whole blocks, shared by every session that draws one
        self.systems = [self.fresh(args.system // args.block) for _ in range(args.systems)]

    def fresh(self, n):
        ids = list(range(self.next, self.next + n))
        self.next += n
        return ids

    def of_prompt(self, system, own, prompt):
        """The ids of a prompt of `prompt` tokens: the system prompt's whole blocks, then
        the session's whole blocks (own grows as they appear), then a partial one."""
        whole, ids = prompt // self.block, list(self.systems[system])[:prompt // self.block]
        while len(ids) + len(own) < whole:
            own.extend(self.fresh(1))
        ids.extend(own[:whole - len(ids)])
        if prompt % self.block:
            ids.extend(self.fresh(1))
        return ids


def turns_of(args, rng, start_s, name, blocks, system_rng):
    """The rows (time, session, prompt, output, ids) of one session."""
    rows, history, at = [], args.system, start_s
    for _ in range(rng.randint(args.turns[0], args.turns[1])):
        prompt = history + lognormal(rng, args.new)
        output = lognormal(rng, args.output)
        rows.append([at, name, prompt, output, None])
        history = prompt + output
        at += output * args.answer_s + rng.expovariate(1 / args.think)
    if blocks:  # from a stream of its own: the rows are those of a trace without ids
        system, own = system_rng.randrange(args.systems), []
        for row in rows:
            row[4] = blocks.of_prompt(system, own, row[2])
    return [tuple(row) for row in rows]


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
    p.add_argument("--hash-ids", action="store_true", help="a hash_ids column of block ids")
    p.add_argument("--block", type=int, default=512, help="tokens a block id (--hash-ids)")
    p.add_argument("--systems", type=int, default=1, help="system prompts (--hash-ids)")
    args = p.parse_args(argv)
    if args.sessions < 0 or args.rate <= 0 or args.think <= 0 or args.system < 0 \
            or not 1 <= args.turns[0] <= args.turns[1] or args.block < 1 or args.systems < 1:
        p.error("expected --sessions >= 0, --rate > 0, --think > 0, --system >= 0, "
                "1 <= LO <= HI for --turns, --block >= 1 and --systems >= 1")
    rng = random.Random(args.seed)
    blocks = BlockIds(args) if args.hash_ids else None
    system_rng = random.Random("systems %d" % args.seed)
    sessions, at = [], 0.0
    for k in range(args.sessions):
        sessions.append(turns_of(args, rng, at, "s%d" % (k + 1), blocks, system_rng))
        at += rng.expovariate(args.rate)
    out = sys.stdout if args.output_file == "-" else open(args.output_file, "w", newline="")
    out.write("TIMESTAMP,session_id,ContextTokens,GeneratedTokens%s\n"
              % (",hash_ids" if blocks else ""))
    for t, name, prompt, output, ids in heapq.merge(*sessions):  # each session in time order
        tail = "," + " ".join(map(str, ids)) if blocks else ""
        out.write("%.6f,%s,%d,%d%s\n" % (t, name, prompt, output, tail))
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
