# scenarios/speculative_load.lua's sweep.csv as a table: at each arrival rate, TPOT p50 and
# p99, output tokens a second and the mean batch, without then with speculation
# (docs/serving.md, "Speculative decoding").  Usage: awk -F, -f THIS sweep.csv
NR > 1 && ($5 == "tpot_p50_s" || $5 == "tpot_p99_s" || $5 == "throughput_tokens_per_s" \
           || $5 == "batch_size_mean") {
    v[$1, $4, $5] = $6
    if (!($1 in seen)) { seen[$1] = 1; rate[++n] = $1 }
}
END {
    printf "%5s  %17s  %17s  %17s  %13s\n", "rate", "TPOT p50 ms", "TPOT p99 ms",
           "output tokens/s", "batch"
    for (i = 1; i <= n; i++) {
        x = rate[i]
        printf "%5s  %8.1f %8.1f  %8.1f %8.1f  %8.0f %8.0f  %6.0f %6.0f\n", x,
               1e3 * v[x, "chat_plain", "tpot_p50_s"], 1e3 * v[x, "chat_spec", "tpot_p50_s"],
               1e3 * v[x, "chat_plain", "tpot_p99_s"], 1e3 * v[x, "chat_spec", "tpot_p99_s"],
               v[x, "chat_plain", "throughput_tokens_per_s"],
               v[x, "chat_spec", "throughput_tokens_per_s"],
               v[x, "plain", "batch_size_mean"], v[x, "spec", "batch_size_mean"]
    }
}
