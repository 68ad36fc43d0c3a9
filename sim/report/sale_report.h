/* sale_report: a flash sale's verdict told on a terminal (make sale).
 *
 * The sale's line, the throughput, units sold against those on offer,
 * each anomaly with its evidence (the first few), the fault when there
 * was one, and a table of the segments: where each lives, its sales,
 * when it ran dry. Only this module prints a sale. */
#ifndef SIM_SALE_REPORT_H
#define SIM_SALE_REPORT_H

#include <stdio.h>

#include "sale_judge.h"

/* Prints the verdict; place may be NULL. */
void sim_sale_report(FILE *f, const sim_sale_verdict *v, const sim_sale_place *place,
                     const char *stage_name);

#endif
