/* sale_page: the sale bench's page: its table and an SVG plot of sales
 * per second against the count of segments, a line per stage. */
#ifndef SIM_SALE_PAGE_H
#define SIM_SALE_PAGE_H

#include <stddef.h>

#include "sale_report.h"

/* Writes dir/index.html (dir is created when missing); 0, or -1 with
 * errstr. */
int sim_sale_page(const char *dir, const sim_sale_bench *b, char *errstr, size_t len);

#endif
