/* sale_bench: the segmented sale's throughput (make sale-bench).
 *
 *   sale bench [out=DIR] [runs=N] [stages=5,6] [units=S] [buyers=B] [retry=MS]
 *
 * One Redis Cluster for every sale; for each stage and K = 1, 2, 4, 8,
 * 16 segments, N sales (default 3) of a product of their own, and the
 * median of their sales per second; printed as a table and written to
 * DIR/index.html with an SVG plot. Exit 0 when every sale was clean. */
#ifndef SIM_SALE_BENCH_H
#define SIM_SALE_BENCH_H

/* argv[0] is "bench"; self is the sale program's path (its stages'
 * buyers are found next to it). Returns main's exit status. */
int sim_sale_bench_main(int argc, char **argv, const char *self);

#endif
