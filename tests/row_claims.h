/* row_claims: what docs/matrix.md's story of each row of the fault matrix
 * says about sales, and what the runs show.
 *
 * A student reads the story of a row as the account of its cells, so a
 * sentence that names an order of writes, a count of sales or two clients
 * inside together has to be true of every cell it speaks of. Each such
 * sentence is a claim here: the sentence, the stages it speaks of, and the
 * facts it states, in a small language that a history can answer:
 *
 *   read X N      client X read the stock N
 *   wrote X N     the resource took X's write of N
 *   refused X     the resource refused X's write (a stale fencing token)
 *   order X Y ..  the resource took X's write before Y's (..., in turn)
 *   sales N       the resource took N writes
 *   stock N M     the stock went from N to M
 *   lost N        N sales were overwritten
 *   overlap X Y   X and Y held the lock at once (an ME episode)
 *   overlaps N    N ME episodes in all
 *   deleted X Y   X's release deleted Y's lock (an MD episode)
 *   not-owner X   X's release returned NOT_OWNER
 *   token X N     X's acquire drew fencing token N
 *
 * Facts are separated by "; ". Each stage's matrix row checks the claims
 * of its cells against the history of its own run (tests/test_matrix.c);
 * the simulator's tests check that docs/matrix.md tells every claim, word for
 * word, and that each of its story sentences that names a sale is one
 * (tests/test_row_stories.c). */
#ifndef LOCKSTEP_ROW_CLAIMS_H
#define LOCKSTEP_ROW_CLAIMS_H

#include <stddef.h>

#include "checker.h"
#include "history.h"

typedef struct row_claim {
    const char *scenario;
    const char *stages;     /* "2 3 4 5 8": the cells the sentence speaks of */
    const char *sentence;   /* one whole sentence of the row's story */
    const char *facts;      /* what it states, in the language above */
} row_claim;

size_t row_claims_count(void);
const row_claim *row_claim_at(size_t i);

/* 1 when the claim speaks of this stage's cell. */
int row_claim_speaks_of(const row_claim *c, int stage);

/* Checks every fact of facts against a history (sorted, as a run or a
 * loaded file gives it) and its verdict. 0: all hold; 1: one does not,
 * and why says which and what the history shows; -1: a fact this
 * language cannot read, named in why. */
int row_claims_check(const char *facts, const sim_event *ev, size_t n,
                     const sim_verdict *v, char *why, size_t len);

/* The history's sales in one line: "reads A10 B10 C9; writes A9 C8 B9;
 * overlaps AB BC; 3 sales, 10 -> 9". */
void row_claims_summary(const sim_event *ev, size_t n, const sim_verdict *v,
                        char *out, size_t len);

/* 1 when a sentence names a write, a sale, a read of the stock or two
 * clients inside together: one a claim must back. */
int row_claims_names_sales(const char *sentence);

/* Checks a row's story (as docs/matrix.md tells it, whitespace as written)
 * against the claims of its scenario: every sentence that names a sale is
 * a claim, and every claim is a sentence of the story. 0, or -1 with the
 * first sentence that fails in why. */
int row_claims_story(const char *scenario, const char *story, size_t n,
                     char *why, size_t len);

#endif
